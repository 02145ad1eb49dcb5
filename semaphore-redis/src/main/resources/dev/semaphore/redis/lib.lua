-- The rest of the library, for the slow paths (after head.lua and an operation's fast path): the
-- clock, the counters, creation (R2), the keys' expiry (R9), the line (R3), leases (R4), the purge of
-- what is due (R5), and where a request is.

if not NOW then
  local t = redis.call('TIME') -- R1
  NOW, NOW_US = t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
end
local SETTINGS = A[#A] -- "idleMs total publish" (head.lua): each read where it is needed
local IDLE_MS = tonumber(string.match(SETTINGS, '^%d+'))
local PURGE_LIMIT = 100 -- due entries ended per zset and call (R5): every call does bounded work
local GRANT_LIMIT = 100 -- heads of the line settled per call (R3, R5): granted, failed or dropped

-- The counters (head.lua), kept here and written back by save(); free without QBIAS. MINE is ID's
-- field of s, LIVE whether LEASE_KEY is a lease in lx.
local counters = redis.call('HMGET', S, 'f', 't', 'n', 'e', 'queued', ID)
local free, token, TOTAL, exp = tonumber(counters[1]), tonumber(counters[2]), tonumber(counters[3]), tonumber(counters[4])
local queued, MINE = tonumber(counters[5]) or 0, counters[6]
local LIVE = LEASE_KEY ~= nil and redis.call('ZSCORE', LX, LEASE_KEY) ~= false
if free and queued > 0 then free = free + QBIAS end
local saved = { free, token, TOTAL, exp, queued }

-- R9: the keys expire IDLE_MS after the last deadline (of a lease or a queued request) has passed;
-- keep_until(deadline) is called with every new deadline, and moves their expiry when it must, a
-- little further (at most a minute) so that busy semaphores move it rarely. (The fast path of acquire
-- only checks that the expiry is far enough, and leaves the moving to the slow path.) s's expiry is
-- always e: the acquire's fast path reads the server's clock as e minus PTTL of s (R1), so every
-- script that moves the expiry here writes e with save() before it returns.
local function keep_until(deadline)
  if exp and deadline + IDLE_MS <= exp then return end
  exp = deadline + IDLE_MS + math.min(IDLE_MS, 60000)
  for _, key in ipairs({ S, Q, WX, LX }) do redis.call('PEXPIREAT', key, exp) end
end

-- Writes back the counters, if any changed (one call).
local function save()
  if free ~= saved[1] or token ~= saved[2] or TOTAL ~= saved[3] or exp ~= saved[4] or queued ~= saved[5] then
    local stored = free
    if queued > 0 then stored = free - QBIAS end
    redis.call('HSET', S, 'f', stored, 't', token, 'n', TOTAL, 'e', exp, 'queued', queued)
  end
  saved = { free, token, TOTAL, exp, queued }
end

-- R2: the first script to touch a semaphore (or the first after it expired or was deleted) creates it
-- with the total its caller configured; afterwards the total on the server stands, and changes only by
-- a resize. The fencing counter starts at the server's time in microseconds (R4, R9).
if not TOTAL then
  TOTAL = tonumber(string.match(SETTINGS, '^%d+ (%d+)'))
  free, token, queued, MINE, LIVE = TOTAL, NOW_US, 0, nil, false
  redis.call('DEL', Q, WX, LX)
  for _, key in ipairs({ Q, WX, LX }) do redis.call('ZADD', key, '+inf', '~') end
  exp = NOW + IDLE_MS + math.min(IDLE_MS, 60000)
  -- '~': a value longer than hash-max-listpack-value (64 by default) makes s a hashtable for good, whose
  -- fields are found by hashing rather than by scanning and reallocating a listpack: about 5% less
  -- server work per uncontended acquisition, for about 440 bytes more per semaphore. It is never read.
  redis.call('HSET', S, 'f', free, 't', token, 'n', TOTAL, 'e', exp, 'queued', 0, 'seq', 0, '~', string.rep('~', 65))
  saved = { free, token, TOTAL, exp, queued }
  for _, key in ipairs({ S, Q, WX, LX }) do redis.call('PEXPIREAT', key, exp) end
end

-- R4: every grant is a lease with a new fencing token: in lx, "id:permits" at its expiry, and its
-- field "G:permits:token" in s (where() answers a heartbeat or a repeated request from it, and
-- inspect.lua lists it); both go with the lease (end_lease, release.lua).
local function lease(id, permits, lease_ms)
  token, free = token + 1, free - permits
  redis.call('ZADD', LX, NOW + lease_ms, id .. ':' .. permits)
  redis.call('HSET', S, id, 'G:' .. permits .. ':' .. string.format('%d', token))
  keep_until(NOW + lease_ms)
  return { 'G', permits, token, lease_ms, TOTAL }
end

local function end_lease(id, permits)
  redis.call('ZREM', LX, id .. ':' .. permits)
  redis.call('HDEL', S, id)
  free = free + permits
end

local function enqueue(id, seq, deadline, field)
  queued = queued + 1
  redis.call('ZADD', Q, seq, id)
  redis.call('ZADD', WX, deadline, id)
  redis.call('HSET', S, id, field)
end

local function unqueue(id)
  queued = queued - 1
  redis.call('ZREM', Q, id)
  redis.call('ZREM', WX, id)
end

-- R3: grants whole from the head of the line while the head's request fits, and publishes the
-- grants ("id:permits:token:remainingMs") on the channel "dsem:{name}:wake". A head larger than the
-- total (after a reduction) fails: it leaves the line, its field becomes "E:toolarge" (answered to
-- every ask until its heartbeat deadline, or until its client withdraws it), and
-- "id:E:toolarge:total" is published. A head past its heartbeat deadline (a dead waiter the purge
-- has not reached yet) leaves the line and is never granted. R5: at most GRANT_LIMIT heads are
-- settled per call, so one message carries at most that many; heads that still fit are granted by
-- the next heartbeat or request (heartbeat.lua, acquire.lua: a heartbeat comes at least every
-- heartbeat interval while anyone waits).
local function grant()
  local messages = {}
  local budget = GRANT_LIMIT
  while queued > 0 and budget > 0 do
    budget = budget - 1
    local head = redis.call('ZRANGE', Q, 0, 0)[1]
    local deadline = tonumber(redis.call('ZSCORE', WX, head))
    if deadline and deadline <= NOW then
      unqueue(head)
      redis.call('HDEL', S, head)
    else
      local permits, lease_ms = string.match(redis.call('HGET', S, head), '^Q:(%d+):(%d+)')
      permits, lease_ms = tonumber(permits), tonumber(lease_ms)
      if permits > TOTAL then
        queued = queued - 1
        redis.call('ZREM', Q, head) -- its wx entry stays: the deadline of its field
        redis.call('HSET', S, head, 'E:toolarge')
        messages[#messages + 1] = head .. ':E:toolarge:' .. TOTAL
      elseif free < permits then
        break
      else
        unqueue(head)
        lease(head, permits, lease_ms)
        messages[#messages + 1] = head .. ':' .. permits .. ':' .. string.format('%d', token) .. ':' .. lease_ms
      end
    end
  end
  if #messages > 0 then
    redis.call(string.match(SETTINGS, '^%d+ %d+ (%S+)'), string.sub(S, 1, -2) .. 'wake', table.concat(messages, ','))
  end
end

-- The place of id (see head.lua), by its field in s; [permits] > 0 also finds a lease without a field
-- in lx (granted by an earlier version of these scripts, which kept no token for a grant at once: its
-- place says token 0). An "E" field is answered as often as it is asked (a repeated heartbeat gets
-- it again, R6) until its heartbeat deadline or its client's withdrawal (cancel.lua) removes it.
local function where(id, permits)
  local f = redis.call('HGET', S, id)
  if f then
    local kind = string.sub(f, 1, 1)
    if kind == 'Q' then return { 'Q' } end
    if kind == 'G' then
      local p, t = string.match(f, '^G:(%d+):(%d+)')
      return { 'G', tonumber(p), tonumber(t), tonumber(redis.call('ZSCORE', LX, id .. ':' .. p)) - NOW, TOTAL }
    end
    return { 'E', string.sub(f, 3), TOTAL }
  end
  if permits > 0 then
    local expiry = redis.call('ZSCORE', LX, id .. ':' .. permits)
    if expiry then return { 'G', permits, 0, tonumber(expiry) - NOW, TOTAL } end
  end
  return { 'U' }
end

-- R5: before anything else, leases past their expiry end and requests past their heartbeat deadline
-- leave the line (at most PURGE_LIMIT of each per call; the rest at the next call, which is never
-- far: every queued request's client sends heartbeats); what that freed goes to the head of the
-- line. The server keeps no record of what ended (R6). If ID's place changed, MINE and LIVE are
-- read again.
local function purge()
  local changed = false
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', LX, '-inf', NOW, 'LIMIT', 0, PURGE_LIMIT)) do
    local id, permits = string.match(key, '^(.*):(%d+)$')
    end_lease(id, tonumber(permits))
    changed = true
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', WX, '-inf', NOW, 'LIMIT', 0, PURGE_LIMIT)) do
    local f = redis.call('HGET', S, id)
    if f and string.sub(f, 1, 1) == 'Q' then
      unqueue(id)
      changed = true
    else
      redis.call('ZREM', WX, id)
    end
    redis.call('HDEL', S, id)
  end
  if changed then
    grant()
    MINE = redis.call('HGET', S, ID)
    LIVE = LEASE_KEY ~= nil and redis.call('ZSCORE', LX, LEASE_KEY) ~= false
  end
  save()
end

purge()
