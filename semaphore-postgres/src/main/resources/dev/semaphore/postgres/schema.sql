-- semaphore-postgres, schema version 1: the tables and one function per operation of a semaphore shared through
-- PostgreSQL (15 or later). The rules these functions keep (P1..P10) are written once, in docs/postgres-protocol.md,
-- and cited here by name.
--
-- Two placeholders, in the syntax Flyway and Liquibase substitute: ${schema} (an existing schema) and ${prefix}
-- (prepended to every table, index, function, sequence and notification channel name: a lowercase letter, then up to
-- 19 lowercase letters, digits or underscores; the client's default is "dsem_"). The client runs this file itself
-- on first use, with both replaced, unless told not to; a migration tool can run it instead. Running it again changes
-- nothing (every statement is IF NOT EXISTS or CREATE OR REPLACE), so it may run on every deploy.
--
-- Every function is one statement of its caller, so one round trip and one short transaction in autocommit mode;
-- every one that changes a semaphore first locks its row, and only then the rows of its requests, so one semaphore's
-- operations run one at a time, never wait on each other in a cycle, and different semaphores' never wait on each
-- other. Time is the server's (P1): clock_timestamp(), read once the call holds its semaphore's row (a time read
-- before a wait for the lock would give a grant made after the wait a lease that ends early by the wait).
--
-- Flat tables by construction (P10): no row is inserted or deleted per acquisition. A semaphore's requests live in
-- slots, rows that are updated in place and reused (a free list threads its free slots, so finding one is one
-- lookup by key); no index covers a column that an acquisition changes, so every update is a HOT update, whose old
-- version PostgreSQL removes when it next reads the page, without waiting for a vacuum. A semaphore has as many
-- slots as it ever had requests at once (holders, queued and failed), until it is deleted or swept.

-- One row per semaphore (P2), created by the first operation that needs it, deleted by the sweep once idle (P9).
CREATE TABLE IF NOT EXISTS ${schema}.${prefix}semaphores (
    name        text PRIMARY KEY,
    total       integer NOT NULL,            -- the permits that exist, held or free (P2)
    free        integer NOT NULL,            -- total minus held; below zero while a reduction is repaid (P2)
    queued      integer NOT NULL,            -- requests in line (state 'Q')
    seq         bigint NOT NULL,             -- the last queue number given (P3)
    last_token  bigint NOT NULL,             -- the last fencing token granted (P4)
    slots       integer NOT NULL,            -- its slots in requests: 1..slots (P10)
    free_head   integer NOT NULL,            -- the first of its free slots, each naming the next (P10); 0: none
    idle_ms     bigint NOT NULL,             -- the longest idle time of its users (P9)
    expires_at  timestamptz NOT NULL,        -- the sweep may delete it after this, if nobody holds or waits (P9)
    resized     text[] NOT NULL DEFAULT '{}' -- the ids of the last 16 resizes (P6)
) WITH (fillfactor = 50);

-- One row per slot of a semaphore (P10): free ('F'), or a queued request ('Q'), a live lease ('G') or a request
-- failed by a reduction ('E', P3). A request is found by its slot, which the client keeps, and its id, which the
-- slot must still hold.
CREATE TABLE IF NOT EXISTS ${schema}.${prefix}requests (
    semaphore  text NOT NULL,
    slot       integer NOT NULL,
    state      "char" NOT NULL,              -- 'F' free, 'Q' queued, 'G' granted (a lease), 'E' failed: too large (P3)
    id         text NOT NULL,                -- the client's request id, "clientId-n[/name]"; '' when free
    permits    integer NOT NULL,
    lease_ms   bigint NOT NULL,
    seq        bigint NOT NULL,              -- its queue number (0: granted at once)
    token      bigint NOT NULL,              -- its fencing token once granted (P4), else 0
    since      timestamptz NOT NULL,         -- when it joined the line ('Q', 'E') or was granted ('G')
    deadline   timestamptz NOT NULL,         -- 'Q', 'E': its heartbeat deadline (P5); 'G': the lease's expiry (P4)
    next_free  integer NOT NULL,             -- 'F': the next free slot of its semaphore, 0 if none (P10)
    PRIMARY KEY (semaphore, slot)
) WITH (fillfactor = 50);

-- Fencing tokens (P4): one sequence for every semaphore, so a token is above every earlier one of its semaphore,
-- also after the semaphore was deleted and created again, after a restart and after a failover to a synchronous
-- standby (docs/postgres-protocol.md, P4).
CREATE SEQUENCE IF NOT EXISTS ${schema}.${prefix}fencing_tokens;

-- The schema's version, which the client checks before its first operation.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}schema_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;

-- Bad input is refused before anything changes (22023, "PERMITS ..." for counts, "INPUT ..." for the rest), so that
-- these functions, which any user with EXECUTE may call, cannot be talked into a wrong count: a semaphore name of 1 to
-- 200 characters without control characters; a request id whose client part (before its first '-') is 1 to 32
-- lowercase hexadecimal digits (it names the client's channel, P7); times from 1 ms to 10 years; permits >= 1.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}check_input(p_name text, p_id text, p_permits integer, p_ms bigint[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    ms bigint;
BEGIN
    IF p_name IS NULL OR length(p_name) NOT BETWEEN 1 AND 200 OR p_name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'INPUT a semaphore name must be 1 to 200 characters without control characters, was "%"', p_name
            USING ERRCODE = '22023';
    END IF;
    IF p_id IS NOT NULL AND (p_id !~ '^[0-9a-f]{1,32}-' OR length(p_id) > 200) THEN
        RAISE EXCEPTION 'INPUT a request id must start with 1 to 32 lowercase hexadecimal digits and a ''-'' (at most 200 characters), was "%"', p_id
            USING ERRCODE = '22023';
    END IF;
    IF p_permits IS NOT NULL AND p_permits < 1 THEN
        RAISE EXCEPTION 'PERMITS permits must be at least 1, was %', p_permits USING ERRCODE = '22023';
    END IF;
    FOREACH ms IN ARRAY coalesce(p_ms, '{}') LOOP
        IF ms IS NOT NULL AND ms NOT BETWEEN 1 AND 315360000000 THEN
            RAISE EXCEPTION 'INPUT a time must be 1 ms to 10 years, was % ms', ms USING ERRCODE = '22023';
        END IF;
    END LOOP;
END $$;

-- P7: tells the client of request p_id (its channel is named by the client id, the part of the id before '-') about
-- it: "semaphore<TAB>id:slot:permits:token:remainingMs" for a grant, "semaphore<TAB>id:slot:E:toolarge:total" for a
-- failure. Delivered when the transaction commits.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}wake(p_semaphore text, p_id text, p_slot integer, p_message text) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_notify('${prefix}wake_' || split_part(p_id, '-', 1), p_semaphore || chr(9) || p_id || ':' || p_slot || ':' || p_message)
$$;

-- P10, on a locked semaphore whose free list starts at p_head and which has p_slots slots: puts a request in the
-- first free slot, or in a new one at the end if none is free. Answers the slot, and the semaphore's free_head and
-- slots after it, which the caller writes back with its own update of the semaphore's row.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}take(p_name text, p_head integer, p_slots integer, p_state "char",
    p_id text, p_permits integer, p_lease_ms bigint, p_seq bigint, p_token bigint, p_since timestamptz,
    p_deadline timestamptz, OUT slot integer, OUT head integer, OUT slots integer)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_head > 0 THEN
        UPDATE ${schema}.${prefix}requests q
            SET state = p_state, id = p_id, permits = p_permits, lease_ms = p_lease_ms, seq = p_seq, token = p_token,
                since = p_since, deadline = p_deadline
            WHERE q.semaphore = p_name AND q.slot = p_head AND q.state = 'F'
            RETURNING q.slot, q.next_free INTO slot, head;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the free list of semaphore % names slot %, which is not free', p_name, p_head;
        END IF;
        slots := p_slots;
    ELSE
        slot := p_slots + 1;
        INSERT INTO ${schema}.${prefix}requests
            VALUES (p_name, slot, p_state, p_id, p_permits, p_lease_ms, p_seq, p_token, p_since, p_deadline, 0);
        head := 0;
        slots := slot;
    END IF;
END $$;

-- P10, on a locked semaphore: frees a slot (its request ended: released, expired, dropped, withdrawn) and puts it
-- first in the free list.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}vacate(p_name text, p_slot integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    head integer;
BEGIN
    SELECT x.free_head INTO head FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name;
    UPDATE ${schema}.${prefix}requests q SET state = 'F', id = '', next_free = head
        WHERE q.semaphore = p_name AND q.slot = p_slot;
    UPDATE ${schema}.${prefix}semaphores x SET free_head = p_slot WHERE x.name = p_name;
END $$;

-- P3, on a locked row: grants whole from the head of the line while the head fits; a head larger than the total
-- fails ('E', kept until its heartbeat deadline, so every ask hears why); a head past its heartbeat deadline leaves
-- the line and is never granted. At most 100 heads per call (P5); a later heartbeat settles the rest.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}grant(p_name text, p_now timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s ${schema}.${prefix}semaphores%ROWTYPE;
    h ${schema}.${prefix}requests%ROWTYPE;
    tok bigint;
    changed boolean := false;
BEGIN
    SELECT * INTO s FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name;
    IF s.queued <= 0 THEN RETURN; END IF;
    FOR h IN SELECT * FROM ${schema}.${prefix}requests q
        WHERE q.semaphore = p_name AND q.state = 'Q' ORDER BY q.seq LIMIT 100
    LOOP
        IF h.deadline <= p_now THEN
            PERFORM ${schema}.${prefix}vacate(p_name, h.slot);
        ELSIF h.permits > s.total THEN
            UPDATE ${schema}.${prefix}requests q SET state = 'E' WHERE q.semaphore = p_name AND q.slot = h.slot;
            PERFORM ${schema}.${prefix}wake(p_name, h.id, h.slot, 'E:toolarge:' || s.total);
        ELSIF s.free < h.permits THEN
            EXIT;
        ELSE
            tok := nextval('${schema}.${prefix}fencing_tokens');
            UPDATE ${schema}.${prefix}requests q
                SET state = 'G', token = tok, since = p_now, deadline = p_now + h.lease_ms * interval '1 millisecond'
                WHERE q.semaphore = p_name AND q.slot = h.slot;
            s.free := s.free - h.permits;
            s.last_token := tok;
            s.expires_at := greatest(s.expires_at, p_now + (h.lease_ms + s.idle_ms) * interval '1 millisecond');
            PERFORM ${schema}.${prefix}wake(p_name, h.id, h.slot, h.permits || ':' || tok || ':' || h.lease_ms);
        END IF;
        s.queued := s.queued - 1;
        changed := true;
    END LOOP;
    IF changed THEN
        UPDATE ${schema}.${prefix}semaphores x
            SET free = s.free, queued = s.queued, last_token = s.last_token, expires_at = s.expires_at
            WHERE x.name = p_name;
    END IF;
END $$;

-- P5, on a locked row: ends the leases past their expiry and drops the requests past their heartbeat deadline (at
-- most 100 per call), then grants what that freed (P3). The server keeps nothing of what ended (P6).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}purge(p_name text, p_now timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    freed bigint := 0;
    unqueued bigint := 0;
BEGIN
    FOR r IN SELECT q.slot, q.state, q.permits FROM ${schema}.${prefix}requests q
        WHERE q.semaphore = p_name AND q.state <> 'F' AND q.deadline <= p_now LIMIT 100
    LOOP
        PERFORM ${schema}.${prefix}vacate(p_name, r.slot);
        IF r.state = 'G' THEN freed := freed + r.permits; END IF;
        IF r.state = 'Q' THEN unqueued := unqueued + 1; END IF;
    END LOOP;
    IF freed > 0 OR unqueued > 0 THEN
        UPDATE ${schema}.${prefix}semaphores x SET free = x.free + freed, queued = x.queued - unqueued WHERE x.name = p_name;
    END IF;
    PERFORM ${schema}.${prefix}grant(p_name, p_now)
        FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name AND x.queued > 0 AND x.free > 0;
END $$;

-- Locks semaphore p_name's row, creating it with p_total permits if the server has none (P2; a null p_total does not
-- create it, and the row returned is then all null), raises its idle time to p_idle_ms, and runs the purge (P5).
-- Returns the row as it is then.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}open(p_name text, p_total integer, p_idle_ms bigint, p_now timestamptz)
RETURNS ${schema}.${prefix}semaphores
LANGUAGE plpgsql AS $$
DECLARE
    s ${schema}.${prefix}semaphores%ROWTYPE;
BEGIN
    LOOP
        SELECT * INTO s FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name FOR UPDATE;
        EXIT WHEN FOUND;
        IF p_total IS NULL THEN RETURN s; END IF;
        IF p_total < 0 THEN
            RAISE EXCEPTION 'PERMITS a semaphore''s total must be 0 or more, was %', p_total USING ERRCODE = '22023';
        END IF;
        PERFORM ${schema}.${prefix}check_input(p_name, NULL, NULL, NULL);
        -- Created here, or by a call that got there first; a sweep may delete it again before the lock: then again.
        INSERT INTO ${schema}.${prefix}semaphores (name, total, free, queued, seq, last_token, slots, free_head, idle_ms, expires_at)
            VALUES (p_name, p_total, p_total, 0, 0, 0, 0, 0, p_idle_ms, p_now + p_idle_ms * interval '1 millisecond')
            ON CONFLICT (name) DO NOTHING;
    END LOOP;
    IF s.idle_ms < p_idle_ms THEN
        UPDATE ${schema}.${prefix}semaphores x SET idle_ms = p_idle_ms WHERE x.name = p_name;
    END IF;
    PERFORM ${schema}.${prefix}purge(p_name, clock_timestamp()); -- P1: read with the row locked (p_now may predate the lock)
    SELECT * INTO s FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name;
    RETURN s;
END $$;

-- Where request p_id in slot p_slot is (the answers of docs/postgres-protocol.md): 'G' granted (permits, token, the
-- lease's time left by the server's clock), 'Q' queued (its number), 'E' failed, 'U' unknown (ended, or never
-- known). Also the semaphore's total (null if the server has none) and the slot.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}place(p_name text, p_id text, p_slot integer, p_now timestamptz,
    OUT kind text, OUT permits integer, OUT token bigint, OUT remaining_ms bigint, OUT total integer, OUT number bigint,
    OUT slot integer)
LANGUAGE plpgsql AS $$
DECLARE
    r ${schema}.${prefix}requests%ROWTYPE;
BEGIN
    SELECT s.total INTO total FROM ${schema}.${prefix}semaphores s WHERE s.name = p_name;
    SELECT * INTO r FROM ${schema}.${prefix}requests q WHERE q.semaphore = p_name AND q.slot = p_slot AND q.id = p_id;
    slot := p_slot;
    IF NOT FOUND OR r.state = 'F' OR r.deadline <= p_now THEN
        kind := 'U';
    ELSIF r.state = 'G' THEN
        kind := 'G'; permits := r.permits; token := r.token;
        remaining_ms := floor(extract(epoch FROM r.deadline - p_now) * 1000)::bigint;
    ELSIF r.state = 'Q' THEN
        kind := 'Q'; number := r.seq;
    ELSE
        kind := 'E'; permits := r.permits;
    END IF;
END $$;

-- acquire (P3, P4): p_ttl_ms is the heartbeat deadline's distance for a request that joins the line, or null for a
-- try (only now: 'B' if it does not fit). p_retry: the client sends this request again, not knowing whether the
-- first sending arrived (P6): the server looks for the id first. Answers a place; raises 22023 "PERMITS ..." for
-- more than the total.
-- Fast path: the semaphore exists, nobody is queued, the request fits and it is not a retry: its row locked, its
-- first free slot filled, its row updated; no purge (a request that fits needs none of the permits of leases past
-- their expiry, P5).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}acquire(p_name text, p_total integer, p_idle_ms bigint, p_id text,
    p_permits integer, p_lease_ms bigint, p_ttl_ms bigint, p_retry boolean,
    OUT kind text, OUT permits integer, OUT token bigint, OUT remaining_ms bigint, OUT total integer, OUT number bigint,
    OUT slot integer)
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
    tok bigint;
    s ${schema}.${prefix}semaphores%ROWTYPE;
    t record;
BEGIN
    -- The counts and times here, cheaply; the name when open() creates the semaphore, the id when it joins the line
    -- (only a queued request is ever notified, P7): the fast path pays for integer comparisons only.
    IF p_permits IS NULL OR p_permits < 1 OR p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1 AND 315360000000
        OR p_idle_ms IS NULL OR p_idle_ms NOT BETWEEN 1 AND 315360000000 OR p_ttl_ms NOT BETWEEN 1 AND 315360000000 THEN
        PERFORM ${schema}.${prefix}check_input(p_name, NULL, p_permits, ARRAY[p_idle_ms, p_lease_ms, p_ttl_ms]);
    END IF;
    SELECT * INTO s FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name FOR NO KEY UPDATE;
    now_ts := clock_timestamp(); -- P1: once the row is locked
    IF NOT FOUND OR p_retry OR s.queued <> 0 OR s.free < p_permits OR s.idle_ms < p_idle_ms THEN
        s := ${schema}.${prefix}open(p_name, p_total, p_idle_ms, now_ts);
        now_ts := clock_timestamp(); -- P1: open() may have waited for the lock
        IF p_retry THEN
            SELECT q.slot INTO slot FROM ${schema}.${prefix}requests q
                WHERE q.semaphore = p_name AND q.id = p_id AND q.state <> 'F';
            IF FOUND THEN
                SELECT * INTO kind, permits, token, remaining_ms, total, number, slot
                    FROM ${schema}.${prefix}place(p_name, p_id, slot, now_ts);
                RETURN;
            END IF;
        END IF;
        IF p_permits > s.total THEN
            RAISE EXCEPTION 'PERMITS a request for % permits can never be granted: the total is %', p_permits, s.total
                USING ERRCODE = '22023';
        END IF;
    END IF;
    total := s.total;
    IF s.queued = 0 AND s.free >= p_permits THEN
        tok := nextval('${schema}.${prefix}fencing_tokens');
        t := ${schema}.${prefix}take(p_name, s.free_head, s.slots, 'G', p_id, p_permits, p_lease_ms, 0, tok, now_ts,
            now_ts + p_lease_ms * interval '1 millisecond');
        UPDATE ${schema}.${prefix}semaphores x
            SET free = x.free - p_permits, last_token = tok, free_head = t.head, slots = t.slots,
                expires_at = greatest(x.expires_at, now_ts + (p_lease_ms + x.idle_ms) * interval '1 millisecond')
            WHERE x.name = p_name;
        kind := 'G'; permits := p_permits; token := tok; remaining_ms := p_lease_ms; slot := t.slot;
        RETURN;
    END IF;
    IF p_ttl_ms IS NULL THEN
        kind := 'B';
        RETURN;
    END IF;
    PERFORM ${schema}.${prefix}check_input(p_name, p_id, NULL, NULL);
    number := s.seq + 1;
    t := ${schema}.${prefix}take(p_name, s.free_head, s.slots, 'Q', p_id, p_permits, p_lease_ms, number, 0, now_ts,
        now_ts + p_ttl_ms * interval '1 millisecond');
    UPDATE ${schema}.${prefix}semaphores x
        SET seq = number, queued = x.queued + 1, free_head = t.head, slots = t.slots,
            expires_at = greatest(x.expires_at, now_ts + (p_ttl_ms + x.idle_ms) * interval '1 millisecond')
        WHERE x.name = p_name;
    kind := 'Q'; slot := t.slot;
END $$;

-- heartbeat (P5, P7): extends the heartbeat deadline of the requests p_ids (in slots p_slots) still queued by
-- p_ttl_ms from now, and answers where each is, in order (the safety net under the notifications). A semaphore the
-- server does not have answers 'U' for each, and is not created.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}heartbeat(p_name text, p_idle_ms bigint, p_ttl_ms bigint, p_ids text[],
    p_slots integer[])
RETURNS TABLE (id text, kind text, permits integer, token bigint, remaining_ms bigint, total integer, number bigint,
    slot integer)
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
    s ${schema}.${prefix}semaphores%ROWTYPE;
    i integer;
BEGIN
    PERFORM ${schema}.${prefix}check_input(p_name, NULL, NULL, ARRAY[p_idle_ms, p_ttl_ms]);
    s := ${schema}.${prefix}open(p_name, NULL, p_idle_ms, now_ts);
    now_ts := clock_timestamp(); -- P1: once the row is locked
    IF s.name IS NOT NULL THEN
        UPDATE ${schema}.${prefix}requests q SET deadline = now_ts + p_ttl_ms * interval '1 millisecond'
            FROM unnest(p_ids, p_slots) AS u(uid, uslot)
            WHERE q.semaphore = p_name AND q.slot = u.uslot AND q.id = u.uid AND q.state = 'Q';
        UPDATE ${schema}.${prefix}semaphores x
            SET expires_at = greatest(x.expires_at, now_ts + (p_ttl_ms + x.idle_ms) * interval '1 millisecond')
            WHERE x.name = p_name;
    END IF;
    FOR i IN 1 .. coalesce(cardinality(p_ids), 0) LOOP
        id := p_ids[i];
        SELECT * INTO kind, permits, token, remaining_ms, total, number, slot
            FROM ${schema}.${prefix}place(p_name, p_ids[i], p_slots[i], now_ts);
        RETURN NEXT;
    END LOOP;
END $$;

-- release (P4, P5): ends live lease p_id (in slot p_slot) of p_permits permits and grants what that frees. Answers
-- the last fencing token granted before the release (the lease was held from its own token to that one), or null if
-- the server has no such lease (P6: the client reads it). No clock: a lease past its expiry but not yet purged is
-- released as live, which is sound, because any grant that needed its permits would have purged it first. The
-- semaphore's row is locked first, as by every function here (a request's row locked first could wait on a purge
-- that waits on it).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}release(p_name text, p_id text, p_slot integer, p_permits integer)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    s ${schema}.${prefix}semaphores%ROWTYPE;
BEGIN
    SELECT * INTO s FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name FOR NO KEY UPDATE;
    IF NOT FOUND THEN RETURN NULL; END IF;
    UPDATE ${schema}.${prefix}requests q SET state = 'F', id = '', next_free = s.free_head
        WHERE q.semaphore = p_name AND q.slot = p_slot AND q.id = p_id AND q.state = 'G' AND q.permits = p_permits;
    IF NOT FOUND THEN RETURN NULL; END IF;
    UPDATE ${schema}.${prefix}semaphores x SET free = x.free + p_permits, free_head = p_slot WHERE x.name = p_name
        RETURNING * INTO s;
    IF s.queued > 0 THEN
        PERFORM ${schema}.${prefix}purge(p_name, clock_timestamp());
    END IF;
    RETURN s.last_token;
END $$;

-- renew (P4): extends live lease p_id (in slot p_slot) by p_lease_ms from now; 'U' if it ended (a lease past its
-- expiry is purged first, P5, and so is never extended).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}renew(p_name text, p_idle_ms bigint, p_id text, p_slot integer,
    p_permits integer, p_lease_ms bigint,
    OUT kind text, OUT permits integer, OUT token bigint, OUT remaining_ms bigint, OUT total integer, OUT number bigint,
    OUT slot integer)
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
BEGIN
    PERFORM ${schema}.${prefix}check_input(p_name, NULL, p_permits, ARRAY[p_idle_ms, p_lease_ms]);
    -- The semaphore's row first (see release); its expiry moves even if the lease turns out to be gone (harmless).
    PERFORM 1 FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name FOR NO KEY UPDATE;
    now_ts := clock_timestamp(); -- P1: once the row is locked
    UPDATE ${schema}.${prefix}semaphores x
        SET expires_at = greatest(x.expires_at, now_ts + (p_lease_ms + greatest(x.idle_ms, p_idle_ms)) * interval '1 millisecond')
        WHERE x.name = p_name;
    UPDATE ${schema}.${prefix}requests q SET deadline = now_ts + p_lease_ms * interval '1 millisecond'
        WHERE q.semaphore = p_name AND q.slot = p_slot AND q.id = p_id AND q.state = 'G' AND q.permits = p_permits
            AND q.deadline > now_ts;
    IF NOT FOUND THEN
        PERFORM ${schema}.${prefix}open(p_name, NULL, p_idle_ms, now_ts);
        kind := 'U'; slot := p_slot; -- ended (or never this lease: another id, slot or count), and not extended
        RETURN;
    END IF;
    SELECT * INTO kind, permits, token, remaining_ms, total, number, slot
        FROM ${schema}.${prefix}place(p_name, p_id, p_slot, now_ts);
END $$;

-- cancel (P8): request p_id (in slot p_slot) of p_permits permits leaves the line; if it was granted in the same
-- instant, p_hand_back true (a cancelled caller) ends the lease and grants what that frees, false (a timed-out
-- caller) answers the grant, which its caller takes. Never both, never neither. A request failed by a reduction
-- ('E') is answered once more, and removed. p_slot 0: the withdrawal was sent before the acquire's answer told the
-- client its slot, and the request is looked up by its id (P10).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}cancel(p_name text, p_idle_ms bigint, p_id text, p_slot integer,
    p_permits integer, p_hand_back boolean,
    OUT kind text, OUT permits integer, OUT token bigint, OUT remaining_ms bigint, OUT total integer, OUT number bigint,
    OUT slot integer)
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
    r ${schema}.${prefix}requests%ROWTYPE;
BEGIN
    kind := 'U';
    slot := p_slot;
    IF (${schema}.${prefix}open(p_name, NULL, p_idle_ms, now_ts)).name IS NULL THEN RETURN; END IF;
    now_ts := clock_timestamp(); -- P1: once the row is locked
    IF p_slot > 0 THEN
        SELECT * INTO r FROM ${schema}.${prefix}requests q WHERE q.semaphore = p_name AND q.slot = p_slot AND q.id = p_id;
    ELSE -- sent before the acquire's answer came (P10): found by its id among the semaphore's slots
        SELECT * INTO r FROM ${schema}.${prefix}requests q WHERE q.semaphore = p_name AND q.id = p_id AND q.state <> 'F';
        IF FOUND THEN p_slot := r.slot; slot := r.slot; END IF;
    END IF;
    IF NOT FOUND OR r.state = 'F' THEN RETURN; END IF;
    IF r.state = 'Q' THEN
        PERFORM ${schema}.${prefix}vacate(p_name, p_slot);
        UPDATE ${schema}.${prefix}semaphores x SET queued = x.queued - 1 WHERE x.name = p_name;
        PERFORM ${schema}.${prefix}grant(p_name, now_ts); -- those behind may fit now
    ELSIF r.state = 'G' AND p_hand_back THEN
        PERFORM ${schema}.${prefix}vacate(p_name, p_slot);
        UPDATE ${schema}.${prefix}semaphores x SET free = x.free + r.permits WHERE x.name = p_name;
        PERFORM ${schema}.${prefix}grant(p_name, now_ts);
    ELSE
        SELECT * INTO kind, permits, token, remaining_ms, total, number, slot
            FROM ${schema}.${prefix}place(p_name, p_id, p_slot, now_ts);
        IF r.state = 'E' THEN
            PERFORM ${schema}.${prefix}vacate(p_name, p_slot);
        END IF;
    END IF;
END $$;

-- resize (P2, P6): 'add', 'reduce' or 'set' the total by or to p_n, for every client; a repeat of resize p_resize_id
-- (one of the last 16) changes nothing more. Answers the total. Raises 22023 "PERMITS ..." for a total above
-- 2147483647 or a reduction below zero.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}resize(p_name text, p_total integer, p_idle_ms bigint,
    p_resize_id text, p_mode text, p_n integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
    s ${schema}.${prefix}semaphores%ROWTYPE;
    new_total bigint;
BEGIN
    PERFORM ${schema}.${prefix}check_input(p_name, NULL, NULL, ARRAY[p_idle_ms]);
    IF p_mode IS NULL OR p_mode NOT IN ('add', 'reduce', 'set') THEN
        RAISE EXCEPTION 'INPUT a resize is ''add'', ''reduce'' or ''set'', was "%"', p_mode USING ERRCODE = '22023';
    END IF;
    IF p_n IS NULL OR p_n < 0 OR (p_n = 0 AND p_mode <> 'set') THEN
        RAISE EXCEPTION 'PERMITS a resize by or to % permits: add and reduce take 1 or more, set 0 or more', p_n
            USING ERRCODE = '22023';
    END IF;
    s := ${schema}.${prefix}open(p_name, p_total, p_idle_ms, now_ts);
    now_ts := clock_timestamp(); -- P1: once the row is locked
    IF p_resize_id = ANY (s.resized) THEN RETURN s.total; END IF;
    new_total := CASE p_mode WHEN 'add' THEN s.total::bigint + p_n WHEN 'reduce' THEN s.total - p_n ELSE p_n END;
    IF new_total > 2147483647 THEN
        RAISE EXCEPTION 'PERMITS adding % permits to % would exceed 2147483647', p_n, s.total USING ERRCODE = '22023';
    END IF;
    IF new_total < 0 THEN
        RAISE EXCEPTION 'PERMITS cannot remove % permits: the total is %', p_n, s.total USING ERRCODE = '22023';
    END IF;
    UPDATE ${schema}.${prefix}semaphores x
        SET free = x.free + (new_total - x.total)::integer, total = new_total::integer,
            resized = (x.resized || p_resize_id)[greatest(1, cardinality(x.resized) - 14):]
        WHERE x.name = p_name;
    PERFORM ${schema}.${prefix}grant(p_name, now_ts);
    RETURN new_total;
END $$;

-- state: (available, queued, total) after the purge (P5), creating the semaphore if the server has none (P2).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}state(p_name text, p_total integer, p_idle_ms bigint,
    OUT available integer, OUT queued integer, OUT total integer)
LANGUAGE plpgsql AS $$
DECLARE
    s ${schema}.${prefix}semaphores%ROWTYPE;
BEGIN
    PERFORM ${schema}.${prefix}check_input(p_name, NULL, NULL, ARRAY[p_idle_ms]);
    s := ${schema}.${prefix}open(p_name, p_total, p_idle_ms, clock_timestamp());
    available := s.free; queued := s.queued; total := s.total;
END $$;

-- delete (P9): removes the semaphore and its slots if, after the purge, nobody holds or waits; raises 55006
-- "IN_USE ..." otherwise. The next use creates it again (P2), its fencing tokens still increasing (P4).
CREATE OR REPLACE FUNCTION ${schema}.${prefix}delete(p_name text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s ${schema}.${prefix}semaphores%ROWTYPE;
BEGIN
    s := ${schema}.${prefix}open(p_name, NULL, 0, clock_timestamp());
    IF s.name IS NULL THEN RETURN; END IF;
    IF s.free < s.total OR s.queued > 0 THEN
        RAISE EXCEPTION 'IN_USE % permits held and % requests queued', s.total - s.free, s.queued USING ERRCODE = '55006';
    END IF;
    DELETE FROM ${schema}.${prefix}requests q WHERE q.semaphore = p_name;
    DELETE FROM ${schema}.${prefix}semaphores x WHERE x.name = p_name;
END $$;

-- sweep (P9): deletes up to p_limit semaphores past their expires_at with nobody holding or waiting, with their
-- slots. Every client runs it now and then; SKIP LOCKED keeps a sweep from waiting on anyone (an operation on a
-- semaphore the sweep has locked waits for its short transaction). Answers how many it deleted.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}sweep(p_limit integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    now_ts timestamptz := clock_timestamp();
    victim text;
    deleted integer := 0;
BEGIN
    FOR victim IN
        SELECT x.name FROM ${schema}.${prefix}semaphores x WHERE x.expires_at < now_ts
        ORDER BY x.expires_at LIMIT p_limit FOR UPDATE SKIP LOCKED
    LOOP
        IF NOT EXISTS (SELECT 1 FROM ${schema}.${prefix}requests q
                       WHERE q.semaphore = victim AND q.state <> 'F' AND q.deadline > now_ts) THEN
            DELETE FROM ${schema}.${prefix}requests q WHERE q.semaphore = victim;
            DELETE FROM ${schema}.${prefix}semaphores x WHERE x.name = victim;
            deleted := deleted + 1;
        END IF;
    END LOOP;
    RETURN deleted;
END $$;

-- inspect: who holds and who waits, read-only (no purge, no creation, no lock): what is past its time by the
-- server's clock (P1) is left out, as the next purge would end it. At most p_limit rows of each kind, holders by
-- expiry (soonest first), the line from its head; the counts are the true ones. A semaphore the server does not have
-- answers nothing.
CREATE OR REPLACE FUNCTION ${schema}.${prefix}inspect(p_name text, p_limit integer)
RETURNS TABLE (kind text, id text, permits integer, token bigint, ms bigint, total integer, holders bigint,
    held bigint, waiting bigint)
LANGUAGE sql AS $$
    WITH now_ts AS (SELECT clock_timestamp() AS t),
    live AS (
        SELECT q.* FROM ${schema}.${prefix}requests q, now_ts
        WHERE q.semaphore = p_name AND q.state IN ('G', 'Q') AND q.deadline > now_ts.t
    ),
    counts AS (
        SELECT count(*) FILTER (WHERE state = 'G') AS holders, coalesce(sum(permits) FILTER (WHERE state = 'G'), 0) AS held,
            count(*) FILTER (WHERE state = 'Q') AS waiting FROM live
    )
    SELECT 'S', p_name, 0, 0::bigint, 0::bigint, x.total, c.holders, c.held, c.waiting
        FROM ${schema}.${prefix}semaphores x, counts c WHERE x.name = p_name
    UNION ALL
    (SELECT 'G', l.id, l.permits, l.token, floor(extract(epoch FROM l.deadline - n.t) * 1000)::bigint, 0, 0, 0, 0
        FROM live l, now_ts n WHERE l.state = 'G' ORDER BY l.deadline LIMIT p_limit)
    UNION ALL
    (SELECT 'Q', l.id, l.permits, 0, floor(extract(epoch FROM n.t - l.since) * 1000)::bigint, 0, 0, 0, 0
        FROM live l, now_ts n WHERE l.state = 'Q' ORDER BY l.seq LIMIT p_limit)
$$;
