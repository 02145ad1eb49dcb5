package dev.semaphore.postgres

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.sql.Connection
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random

/**
 * The server side (schema.sql) on a real PostgreSQL server, through the calls the client makes: the rules P1..P9 of
 * docs/postgres-protocol.md, one test or more each, and many connections at once checked against the total.
 */
class ServerProtocolSpec : FunSpec({
    val server = LocalPostgresServer.start()
    val schema = PostgresSchema()
    val calls = TrackingCalls(schema)
    var c: Connection = server.connect()
    schema.create(c)
    afterSpec {
        c.close()
        server.close()
    }
    val names = AtomicInteger()
    fun fresh(prefix: String) = "$prefix-${names.incrementAndGet()}"
    val idle = 60_000L
    fun count(sql: String): Long = c.createStatement().use { st -> st.executeQuery(sql).use { it.next(); it.getLong(1) } }

    /** P10: semaphore [name]'s free list names each of its free slots once, and nothing else. */
    fun freeListIsWhole(name: String) {
        val walked = count(
            """
            WITH RECURSIVE walk(slot, n) AS (
                SELECT free_head, 1 FROM dsem_semaphores WHERE name = '$name' AND free_head > 0
                UNION ALL
                SELECT r.next_free, w.n + 1 FROM walk w JOIN dsem_requests r ON r.semaphore = '$name' AND r.slot = w.slot
                WHERE r.next_free > 0 AND w.n < 100000
            )
            SELECT count(DISTINCT w.slot) * 1000000 + count(*) FROM walk w
                JOIN dsem_requests r ON r.semaphore = '$name' AND r.slot = w.slot AND r.state = 'F'
            """,
        )
        val free = count("SELECT count(*) FROM dsem_requests WHERE semaphore = '$name' AND state = 'F'")
        walked shouldBe free * 1000000 + free // as many distinct free slots walked as there are, each once
    }

    test("P2, schema: created on first use and again harmlessly; a missing schema, other tables, an old version and missing rights are each named") {
        schema.create(c) // a second time: nothing changes
        schema.check(c)
        shouldThrow<PostgresSetupException> { PostgresSchema("nosuch").create(c) }.message shouldContain
            "schema \"nosuch\" does not exist"
        server.execute("CREATE SCHEMA empty")
        shouldThrow<PostgresSetupException> { PostgresSchema("empty").check(c) }.message shouldContain "run schema.sql there"
        server.execute("CREATE SCHEMA other; CREATE FUNCTION other.dsem_schema_version() RETURNS integer LANGUAGE sql AS 'SELECT 2'")
        shouldThrow<PostgresSetupException> { PostgresSchema("other").check(c) }.message shouldContain "are version 2"
        server.execute("CREATE ROLE app LOGIN; CREATE SCHEMA locked")
        java.sql.DriverManager.getConnection(server.url.replace("user=postgres", "user=app")).use { app ->
            shouldThrow<PostgresSetupException> { PostgresSchema("locked").create(app) }.message shouldContain
                "may not create the semaphore tables"
            PostgresSchema("locked").create(c) // as an administrator would, with schema.sql
            shouldThrow<PostgresSetupException> { PostgresSchema("locked").check(app) }.message shouldContain
                "may not use the semaphore tables"
        }
        // A reserved word is a schema like any other (quoted); a user without rights on the tables is told which.
        server.execute("CREATE SCHEMA \"order\"")
        PostgresSchema("order").let { reserved ->
            reserved.create(c)
            TrackingCalls(reserved).acquire(c, "in-order", 1, idle, "aaaa-1", 1, 60_000, null).kind shouldBe 'G'
        }
        server.execute("CREATE ROLE reader LOGIN; GRANT USAGE ON SCHEMA \"order\" TO reader")
        java.sql.DriverManager.getConnection(server.url.replace("user=postgres", "user=reader")).use { reader ->
            shouldThrow<PostgresSetupException> { PostgresSchema("order").check(reader) }.message shouldContain
                "grant it USAGE on \"order\".dsem_fencing_tokens; DELETE on \"order\".dsem_requests; INSERT on \"order\".dsem_requests; " +
                "SELECT on \"order\".dsem_requests; UPDATE on \"order\".dsem_requests; DELETE on \"order\".dsem_semaphores; "
            // SELECT alone on a table is not enough (a check of several privileges at once would have passed it).
            server.execute("GRANT SELECT ON ALL TABLES IN SCHEMA \"order\" TO reader; GRANT USAGE ON ALL SEQUENCES IN SCHEMA \"order\" TO reader")
            shouldThrow<PostgresSetupException> { PostgresSchema("order").check(reader) }.message shouldContain
                "grant it DELETE on \"order\".dsem_requests; INSERT on \"order\".dsem_requests; UPDATE on \"order\".dsem_requests; " +
                "DELETE on \"order\".dsem_semaphores; INSERT on \"order\".dsem_semaphores; UPDATE on \"order\".dsem_semaphores"
        }
        shouldThrow<IllegalArgumentException> { PostgresSchema("Bad-Name") }.message shouldContain "\"Bad-Name\""
        shouldThrow<IllegalArgumentException> { PostgresSchema(prefix = "") }.message shouldContain "was \"\""
    }

    test("P3: strict FIFO with whole grants; a release grants the head of the line, and its client hears it on its own channel") {
        val name = fresh("fifo")
        val heard = LinkedBlockingQueue<String>()
        val otherHeard = LinkedBlockingQueue<String>()
        PostgresWakeups(server::connect, schema, "bbbb", onMessage = { s, id, rest -> heard += "$s $id $rest" }).use { wakeups ->
            PostgresWakeups(server::connect, schema, "cccc", onMessage = { s, id, rest -> otherHeard += "$s $id $rest" }).use { other ->
                wakeups.awaitListening(10_000) shouldBe true
                other.awaitListening(10_000) shouldBe true
                val first = calls.acquire(c, name, 3, idle, "aaaa-1", 2, 60_000, 10_000)
                first.kind shouldBe 'G'
                calls.acquire(c, name, 3, idle, "bbbb-1", 2, 60_000, 10_000).let { it.kind shouldBe 'Q'; it.number shouldBe 1 }
                // One permit is free, but the head wants 2: a later request for 1 waits behind it, and a try is refused.
                calls.acquire(c, name, 3, idle, "bbbb-2", 1, 60_000, 10_000).let { it.kind shouldBe 'Q'; it.number shouldBe 2 }
                calls.acquire(c, name, 3, idle, "cccc-1", 1, 60_000, null).kind shouldBe 'B'
                calls.state(c, name, 3, idle) shouldBe SemaphoreState(available = 1, queued = 2, total = 3)
                calls.release(c, name, "aaaa-1", 2) shouldBe first.token
                val messages = listOf(heard.poll(10, TimeUnit.SECONDS), heard.poll(10, TimeUnit.SECONDS))
                messages.map { it!!.split(' ').take(2).joinToString(" ") } shouldContainExactly listOf("$name bbbb-1", "$name bbbb-2")
                val places = calls.heartbeat(c, name, idle, 10_000, listOf("bbbb-1", "bbbb-2"))
                places.values.map { it.kind } shouldBe listOf('G', 'G')
                messages[0] shouldBe "$name bbbb-1 ${calls.slotOf("bbbb-1")}:2:${places.getValue("bbbb-1").token}:60000"
                places.getValue("bbbb-2").token shouldBeGreaterThan places.getValue("bbbb-1").token
                otherHeard.poll(200, TimeUnit.MILLISECONDS).shouldBeNull() // another client's channel hears nothing of it
                calls.state(c, name, 3, idle) shouldBe SemaphoreState(available = 0, queued = 0, total = 3)
            }
        }
    }

    test("bad input is refused with a message naming it, and nothing changes; a connection in a transaction is refused") {
        val name = fresh("input")
        calls.acquire(c, name, 2, idle, "aaaa-1", 1, 60_000, 10_000).kind shouldBe 'G'
        val before = calls.state(c, name, 2, idle)
        shouldThrow<IllegalArgumentException> { calls.acquire(c, name, 2, idle, "aaaa-2", -1, 60_000, 10_000) }.message shouldBe
            "permits must be at least 1, was -1"
        shouldThrow<IllegalArgumentException> { calls.acquire(c, name, 2, idle, "aaaa-3", 0, 60_000, null) }.message shouldBe
            "permits must be at least 1, was 0"
        // The id names the channel a queued request is told on (P7): checked when it joins the line.
        shouldThrow<IllegalArgumentException> { calls.acquire(c, name, 2, idle, "no-client-part", 2, 60_000, 10_000) }.message shouldContain
            "was \"no-client-part\""
        shouldThrow<IllegalArgumentException> { calls.acquire(c, "tab\there", 2, idle, "aaaa-4", 1, 60_000, null) }.message shouldContain
            "without control characters"
        shouldThrow<IllegalArgumentException> { calls.acquire(c, name, 2, idle, "aaaa-5", 1, -5, null) }.message shouldBe
            "a time must be 1 ms to 10 years, was -5 ms"
        shouldThrow<IllegalArgumentException> { calls.resize(c, name, 2, idle, "r-1", "remove", 1) }.message shouldContain "was \"remove\""
        shouldThrow<IllegalArgumentException> { calls.resize(c, name, 2, idle, "r-2", "add", -3) }.message shouldContain "-3 permits"
        shouldThrow<IllegalArgumentException> { calls.state(c, fresh("negative"), -1, idle) }.message shouldBe
            "a semaphore's total must be 0 or more, was -1"
        calls.state(c, name, 2, idle) shouldBe before
        server.connect().use { inTransaction ->
            inTransaction.autoCommit = false
            shouldThrow<IllegalStateException> { calls.acquire(inTransaction, name, 2, idle, "aaaa-6", 1, 60_000, null) }.message shouldContain
                "autocommit off"
        }
        shouldThrow<IllegalArgumentException> { schema.channel("ABC-1") }.message shouldContain "was \"ABC-1\""
    }

    test("P3: a request for more than the total is refused with IllegalArgumentException, and nothing is queued") {
        val name = fresh("toolarge")
        val e = shouldThrow<IllegalArgumentException> { calls.acquire(c, name, 3, idle, "aaaa-1", 4, 60_000, 10_000) }
        e.message shouldBe "a request for 4 permits can never be granted: the total is 3"
        calls.state(c, name, 3, idle) shouldBe SemaphoreState(3, 0, 3)
    }

    test("P1, P4, P5: a lease ends on the server's clock: its permits come back after its lease time and not before; a waiter without heartbeats leaves the line") {
        val name = fresh("expiry")
        val leaseMs = 400L
        val sent = System.nanoTime()
        calls.acquire(c, name, 1, idle, "aaaa-1", 1, leaseMs, 10_000).kind shouldBe 'G'
        // Not before: a try answered within leaseMs of the acquire's sending must find the permit held.
        var refusals = 0
        while (true) {
            val place = calls.acquire(c, name, 1, idle, "bbbb-${refusals + 1}", 1, 60_000, null)
            val answeredMs = (System.nanoTime() - sent) / 1_000_000
            if (place.kind == 'G') {
                answeredMs shouldBeGreaterThan leaseMs - 1
                calls.release(c, name, "bbbb-${refusals + 1}", 1).shouldNotBeNull()
                break
            }
            place.kind shouldBe 'B'
            refusals++
            Thread.sleep(50)
            check(answeredMs < 10_000) { "the expired lease was never purged" }
        }
        refusals shouldBeGreaterThan 0
        // The holder's late release finds nothing: its lease ended (P6, 'U' to the client).
        calls.release(c, name, "aaaa-1", 1).shouldBeNull()
        // A queued request whose heartbeats stop leaves the line after its time to live; the one behind it moves up.
        calls.acquire(c, name, 1, idle, "aaaa-2", 1, 60_000, 10_000).kind shouldBe 'G'
        calls.acquire(c, name, 1, idle, "bbbb-dead", 1, 60_000, 300).kind shouldBe 'Q'
        calls.acquire(c, name, 1, idle, "cccc-live", 1, 60_000, 10_000).kind shouldBe 'Q'
        Thread.sleep(450)
        calls.heartbeat(c, name, idle, 10_000, listOf("bbbb-dead", "cccc-live")).values.map { it.kind } shouldBe listOf('U', 'Q')
        calls.release(c, name, "aaaa-2", 1).shouldNotBeNull()
        calls.heartbeat(c, name, idle, 10_000, listOf("cccc-live")).getValue("cccc-live").kind shouldBe 'G'
    }

    test("P4: fencing tokens only increase: across grants, a delete and re-creation, and a kill -9 and restart of the server") {
        val name = fresh("tokens")
        val tokens = mutableListOf<Long>()
        fun grant(id: String): Long {
            val place = calls.acquire(c, name, 1, idle, id, 1, 60_000, null)
            place.kind shouldBe 'G'
            calls.release(c, name, id, 1).shouldNotBeNull()
            return place.token
        }
        repeat(5) { tokens += grant("aaaa-$it") }
        calls.delete(c, name)
        calls.inspect(c, name, 10).shouldBeNull()
        tokens += grant("aaaa-after-delete")
        c.close()
        server.restart()
        c = server.connect()
        tokens += grant("aaaa-after-restart")
        tokens.zipWithNext().forEach { (a, b) -> b shouldBeGreaterThan a }
    }

    test("P6: an acquire sent again (a retry), a repeated release and a repeated resize change nothing more") {
        val name = fresh("repeat")
        val first = calls.acquire(c, name, 2, idle, "aaaa-1", 1, 60_000, 10_000)
        val again = calls.acquire(c, name, 2, idle, "aaaa-1", 1, 60_000, 10_000, retry = true)
        again.kind shouldBe 'G'
        again.token shouldBe first.token
        calls.state(c, name, 2, idle).available shouldBe 1
        calls.release(c, name, "aaaa-1", 1).shouldNotBeNull()
        calls.release(c, name, "aaaa-1", 1).shouldBeNull()
        calls.state(c, name, 2, idle).available shouldBe 2
        calls.resize(c, name, 2, idle, "r-1", "add", 3) shouldBe 5
        calls.resize(c, name, 2, idle, "r-1", "add", 3) shouldBe 5
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(5, 0, 5)
    }

    test("P8: a withdrawn request leaves the line and those behind that fit are granted; a grant that raced is handed back or kept, never both") {
        val name = fresh("cancel")
        calls.acquire(c, name, 2, idle, "aaaa-1", 1, 60_000, 10_000).kind shouldBe 'G'
        calls.acquire(c, name, 2, idle, "bbbb-big", 2, 60_000, 10_000).kind shouldBe 'Q'
        calls.acquire(c, name, 2, idle, "bbbb-small", 1, 60_000, 10_000).kind shouldBe 'Q'
        calls.cancel(c, name, idle, "bbbb-big", 2, handBack = true).kind shouldBe 'U'
        calls.heartbeat(c, name, idle, 10_000, listOf("bbbb-small")).getValue("bbbb-small").kind shouldBe 'G'
        // bbbb-small was granted as its caller gave up: a cancelled caller hands it back, and it goes to the next.
        calls.acquire(c, name, 2, idle, "cccc-1", 1, 60_000, 10_000).kind shouldBe 'Q'
        calls.cancel(c, name, idle, "bbbb-small", 1, handBack = true).kind shouldBe 'U'
        calls.heartbeat(c, name, idle, 10_000, listOf("cccc-1")).getValue("cccc-1").kind shouldBe 'G'
        // cccc-1's caller timed out as it was granted: it keeps the grant (one lease, counted once).
        val kept = calls.cancel(c, name, idle, "cccc-1", 1, handBack = false)
        kept.kind shouldBe 'G'
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(0, 0, 2)
        calls.release(c, name, "cccc-1", 1).shouldNotBeNull()
        calls.release(c, name, "aaaa-1", 1).shouldNotBeNull()
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(2, 0, 2)
    }

    test("P8, P10: a withdrawal sent before the acquire's answer (its slot unknown) still finds the request: out of the line, a grant handed back or kept") {
        val name = fresh("unanswered")
        calls.acquire(c, name, 2, idle, "eeee-held", 1, 60_000, 10_000).kind shouldBe 'G'
        calls.acquire(c, name, 2, idle, "eeee-big", 2, 60_000, 10_000).kind shouldBe 'Q'
        calls.acquire(c, name, 2, idle, "eeee-next", 1, 60_000, 10_000).kind shouldBe 'Q'
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(1, 2, 2)
        // A caller cancelled while its acquire was on the wire: it names the id alone.
        calls.cancelUnanswered(c, name, idle, "eeee-big", 2, handBack = true).kind shouldBe 'U'
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(0, 0, 2) // out of the line; eeee-next fit and was granted
        calls.heartbeat(c, name, idle, 10_000, listOf("eeee-next")).getValue("eeee-next").kind shouldBe 'G'
        // Granted at once, its caller gone before the answer: handed back by id alone.
        calls.cancelUnanswered(c, name, idle, "eeee-next", 1, handBack = true).kind shouldBe 'U'
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(1, 0, 2)
        // A timed-out caller that keeps a grant learns its slot from the answer.
        calls.acquire(c, name, 2, idle, "eeee-kept", 1, 60_000, 10_000).kind shouldBe 'G'
        val kept = calls.cancelUnanswered(c, name, idle, "eeee-kept", 1, handBack = false)
        kept.kind shouldBe 'G'
        kept.slot shouldBe calls.slotOf("eeee-kept")
        // An id the server never saw, or saw end, is answered 'U' and changes nothing.
        calls.cancelUnanswered(c, name, idle, "eeee-never", 1, handBack = true).kind shouldBe 'U'
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(0, 0, 2)
        calls.release(c, name, "eeee-kept", 1).shouldNotBeNull()
        calls.release(c, name, "eeee-held", 1).shouldNotBeNull()
        calls.state(c, name, 2, idle) shouldBe SemaphoreState(2, 0, 2)
        freeListIsWhole(name)
    }

    test("P2, P3: a reduction below what is held is a debt repaid before anyone is granted; a queued request above the new total fails, told on its channel") {
        val name = fresh("resize")
        val heard = LinkedBlockingQueue<String>()
        PostgresWakeups(server::connect, schema, "dddd", onMessage = { _, id, rest -> heard += "$id:$rest" }).use { w ->
            w.awaitListening(10_000) shouldBe true
            calls.acquire(c, name, 3, idle, "aaaa-1", 2, 60_000, 10_000).kind shouldBe 'G'
            calls.acquire(c, name, 3, idle, "dddd-3", 3, 60_000, 10_000).kind shouldBe 'Q'
            calls.acquire(c, name, 3, idle, "dddd-1", 1, 60_000, 10_000).kind shouldBe 'Q'
            calls.resize(c, name, 3, idle, "r-1", "reduce", 2) shouldBe 1
            heard.poll(10, TimeUnit.SECONDS) shouldBe "dddd-3:${calls.slotOf("dddd-3")}:E:toolarge:1"
            calls.heartbeat(c, name, idle, 10_000, listOf("dddd-3", "dddd-1")).values.map { it.kind } shouldBe listOf('E', 'Q')
            calls.cancel(c, name, idle, "dddd-3", 3, handBack = true).kind shouldBe 'E' // heard once more, then gone
            calls.state(c, name, 3, idle) shouldBe SemaphoreState(-1, 1, 1)
            calls.release(c, name, "aaaa-1", 2).shouldNotBeNull() // repays the debt, then grants dddd-1
            heard.poll(10, TimeUnit.SECONDS)!!.substringBefore(':') shouldBe "dddd-1"
            calls.state(c, name, 3, idle) shouldBe SemaphoreState(0, 0, 1)
            shouldThrow<IllegalArgumentException> { calls.resize(c, name, 3, idle, "r-2", "reduce", 2) }.message shouldBe
                "cannot remove 2 permits: the total is 1"
            shouldThrow<IllegalStateException> { calls.delete(c, name) }.message shouldBe
                "the semaphore $name is in use: 1 permits held and 0 requests queued"
        }
    }

    test("P5, P9, P10: a semaphore keeps as many rows as it had requests at once, reused; an idle semaphore is swept after its idle time") {
        val before = count("SELECT count(*) FROM dsem_requests WHERE state <> 'F'")
        val semaphores = (1..20).map { fresh("churn") }
        repeat(1000) { i ->
            val name = semaphores[i % semaphores.size]
            calls.acquire(c, name, 2, 300, "aaaa-c$i", 1, 100, 10_000).kind shouldBe 'G'
            calls.release(c, name, "aaaa-c$i", 1).shouldNotBeNull()
        }
        count("SELECT count(*) FROM dsem_requests WHERE state <> 'F'") shouldBe before
        // One request at a time on each: one slot each, reused 50 times.
        count("SELECT count(*) FROM dsem_requests WHERE semaphore LIKE 'churn-%'") shouldBe 20
        semaphores.forEach(::freeListIsWhole)
        count("SELECT count(*) FROM dsem_semaphores WHERE name LIKE 'churn-%'") shouldBe 20
        // Not swept while held; swept once idle for its idle time (300 ms) after its last deadline (its last lease's
        // expiry, 100 ms after its grant, released or not).
        calls.acquire(c, semaphores[0], 2, 300, "aaaa-held", 1, 60_000, 10_000).kind shouldBe 'G'
        Thread.sleep(500)
        calls.sweep(c, 1000) shouldBe 19
        count("SELECT count(*) FROM dsem_semaphores WHERE name LIKE 'churn-%'") shouldBe 1
        calls.inspect(c, semaphores[0], 10)!!.holderCount shouldBe 1
    }

    test("P7: a dropped wake-up connection connects again and tells its owner, whose heartbeat finds the grant it missed") {
        val name = fresh("dropped")
        val heard = LinkedBlockingQueue<String>()
        val reconnects = AtomicInteger()
        PostgresWakeups(server::connect, schema, "eeee", onMessage = { _, id, _ -> heard += id }, onReconnect = { reconnects.incrementAndGet() }).use { w ->
            w.awaitListening(10_000) shouldBe true
            calls.acquire(c, name, 1, idle, "aaaa-1", 1, 60_000, 10_000).kind shouldBe 'G'
            calls.acquire(c, name, 1, idle, "eeee-1", 1, 60_000, 10_000).kind shouldBe 'Q'
            // The listening backend is ended by the server, as a network fault or a restart would end it.
            server.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
            calls.release(c, name, "aaaa-1", 1).shouldNotBeNull() // its notification may be lost
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
            while (reconnects.get() == 0 && System.nanoTime() < deadline) Thread.sleep(20)
            reconnects.get() shouldBe 1
            calls.heartbeat(c, name, idle, 10_000, listOf("eeee-1")).getValue("eeee-1").kind shouldBe 'G'
        }
    }

    test("P5: a release or renewal of a lease that a purge ends meanwhile waits for the purge and answers that it is gone, never a deadlock") {
        for (operation in listOf("release", "renew")) {
            val name = fresh("purge-race-$operation")
            calls.acquire(c, name, 1, idle, "aaaa-1", 1, 100, 10_000).kind shouldBe 'G'
            Thread.sleep(200) // the lease is past its expiry, not yet purged
            // Connection a holds the semaphore's row, as any call that purges does; b's call comes in meanwhile; then a
            // purges and commits. Were b to lock the lease's row before the semaphore's, a and b would wait on each other.
            server.connect().use { a ->
                a.autoCommit = false
                a.createStatement().use { it.execute("SELECT 1 FROM dsem_semaphores WHERE name = '$name' FOR UPDATE") }
                val answer = java.util.concurrent.CompletableFuture.supplyAsync {
                    server.connect().use { b ->
                        if (operation == "release") calls.release(b, name, "aaaa-1", 1)?.let { "token $it" } ?: "gone"
                        else calls.renew(b, name, idle, "aaaa-1", 1, 60_000).kind.toString()
                    }
                }
                Thread.sleep(300) // b is waiting now
                a.createStatement().use { it.execute("SELECT dsem_purge('$name', clock_timestamp())") }
                a.commit()
                answer.get(10, TimeUnit.SECONDS) shouldBe if (operation == "release") "gone" else "U"
            }
            calls.state(c, name, 1, idle) shouldBe SemaphoreState(1, 0, 1)
        }
    }

    /**
     * 6 connections at once on one semaphore of 3 permits: tries, queued requests, heartbeats, withdrawals (handing
     * back or keeping a grant), releases. With leases that outlive the test ([leaseMs] long), the permits answered as
     * held never exceed the total; with short ones, leases expire under their holders and purges race releases (every
     * function locks the semaphore's row first, so none waits on another in a cycle). Either way every token is new,
     * no call fails, and every permit is back at the end.
     */
    fun storm(leaseMs: Long, connect: () -> Connection = server::connect): Int {
        val name = fresh("storm")
        val total = 3
        val held = AtomicInteger()
        val lost = AtomicInteger()
        val violations = CopyOnWriteArrayList<String>()
        val tokens = ConcurrentHashMap.newKeySet<Long>()
        val threads = (1..6).map { t ->
            Thread {
                try {
                    connect().use { own ->
                        val random = Random(t)
                        val mine = mutableListOf<Pair<String, Int>>() // granted, not yet released
                        val queued = mutableListOf<Pair<String, Int>>()
                        fun granted(id: String, permits: Int, place: Place) {
                            if (!tokens.add(place.token)) violations += "token ${place.token} granted twice"
                            if (held.addAndGet(permits) > total && leaseMs > 10_000) violations += "more than $total permits held"
                            mine += id to permits
                        }
                        fun release(id: String, permits: Int) {
                            held.addAndGet(-permits)
                            if (calls.release(own, name, id, permits) == null) {
                                if (leaseMs > 10_000) violations += "lease $id was lost" else lost.incrementAndGet()
                            }
                        }
                        repeat(150) { i ->
                            val id = "e$t-$i"
                            val permits = 1 + random.nextInt(2)
                            when (random.nextInt(4)) {
                                0 -> calls.acquire(own, name, total, idle, id, permits, leaseMs, null).let { if (it.kind == 'G') granted(id, permits, it) }
                                1 -> calls.acquire(own, name, total, idle, id, permits, leaseMs, 10_000).let {
                                    if (it.kind == 'G') granted(id, permits, it) else queued += id to permits
                                }
                                else -> {}
                            }
                            if (queued.isNotEmpty()) {
                                val places = calls.heartbeat(own, name, idle, 10_000, queued.map { it.first })
                                for ((qid, p) in queued.toList()) {
                                    val place = places.getValue(qid)
                                    if (place.kind == 'G') { queued.remove(qid to p); granted(qid, p, place) }
                                }
                                if (random.nextInt(3) == 0 && queued.isNotEmpty()) {
                                    val (qid, p) = queued.removeAt(random.nextInt(queued.size))
                                    val place = calls.cancel(own, name, idle, qid, p, handBack = random.nextBoolean())
                                    if (place.kind == 'G') granted(qid, p, place)
                                }
                            }
                            if (leaseMs < 10_000 && random.nextInt(4) == 0) Thread.sleep(random.nextLong(leaseMs * 2))
                            if (mine.isNotEmpty() && random.nextInt(3) != 0) {
                                val (rid, p) = mine.removeAt(random.nextInt(mine.size))
                                release(rid, p)
                            }
                        }
                        for ((qid, p) in queued) {
                            val place = calls.cancel(own, name, idle, qid, p, handBack = true)
                            if (place.kind == 'G') violations += "a handed-back grant was answered as kept"
                        }
                        for ((rid, p) in mine) release(rid, p)
                    }
                } catch (e: Exception) {
                    violations += "thread $t: $e"
                }
            }.apply { start() }
        }
        threads.forEach { it.join(120_000) }
        violations shouldBe emptyList()
        tokens.size shouldBeGreaterThan 50
        Thread.sleep(if (leaseMs < 10_000) leaseMs * 2 else 0) // what expired unreleased is purged by the next call
        calls.state(c, name, total, idle) shouldBe SemaphoreState(total, 0, total)
        count("SELECT count(*) FROM dsem_requests WHERE semaphore = '$name' AND state <> 'F'") shouldBe 0
        freeListIsWhole(name)
        return lost.get()
    }

    test("many connections at once: never more permits held than the total, every token new, every permit back at the end") {
        storm(leaseMs = 60_000) shouldBe 0
    }

    test("through PgBouncer in transaction mode (pgjdbc with prepareThreshold=0): 6 clients on 2 server connections, the same storm") {
        LocalPgBouncer(server, poolSize = 2).use { bouncer ->
            storm(leaseMs = 60_000) { java.sql.DriverManager.getConnection(bouncer.url(prepareThreshold = 0)) } shouldBe 0
        }
    }

    test("many connections at once with leases that expire under their holders: purges race releases, and no call waits on another in a cycle") {
        storm(leaseMs = 30) shouldBeGreaterThan 0 // leases did expire before their release
    }
})
