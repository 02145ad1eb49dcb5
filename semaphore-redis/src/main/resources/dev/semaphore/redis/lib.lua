-- The part shared by every script of a RedisSemaphore. Each operation is one script (Script in
-- RedisSemaphoreClient.kt), run atomically: this text, then the operation's own text, in which the
-- line "-- [line.lua]" stands for the rest of the library (at its start if it has no such line). What
-- an operation does before that line is its fast path: a Lua closure costs the server time on every
-- call, so the common uncontended case runs only the few defined here. The rules these scripts keep
-- are stated once, in RedisSemaphore.kt ("THE SERVER SIDE", R1..R8); they are cited here. An
-- uncontended acquire makes 4 calls (TIME, HMGET, ZADD, HSET), its release 5.
--
-- KEYS (one hash slot: every key starts with {name}):
--   1 {name}:s   hash: the counters total, held (permits in live leases), queued (requests in line),
--                seq (last queue number), token (last fencing token); lx_min, wx_min, ex_min: for each
--                of the zsets lx, wx, ex, a time before which none of its entries is due (absent if the
--                zset is empty), so that a script looks into a zset only when something may be due; and
--                one field per known request
--                id: "Q:permits:leaseMs" queued, "G:permits:token" a live lease, "E:reason" ended
--                (reason: released | expired | cancelled | purged)
--   2 {name}:q   zset: queued request id -> queue number (FIFO order)
--   3 {name}:wx  zset: queued request id -> heartbeat deadline (server ms)
--   4 {name}:lx  zset: lease id -> expiry (server ms)
--   5 {name}:ex  zset: ended id -> when to forget it (server ms)
-- ARGV: 1 total permits (as configured by the caller), 2 the wake-up channel, 3 the request or lease id
-- the operation is about ("-" if none), then the operation's own.
-- Replies name a request's place (where()): "Q" queued ("Q:number" when it joins the line);
-- "G:id:permits:token:remainingMs" granted; "E:reason" ended; "U" unknown.

if redis.replicate_commands then pcall(redis.replicate_commands) end -- Redis < 5: replicate effects (TIME)

local S, Q, WX, LX, EX = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local TOTAL = tonumber(ARGV[1])
local CHANNEL = ARGV[2]
local ID = ARGV[3]
local FORGET_MS = 600000 -- how long an ended id is remembered at least, so late or repeated calls get a clear answer

local clock = redis.call('TIME') -- R1: the server's time, never a client's
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function int(x) return string.format('%.0f', x) end

-- The counters and bounds, read in one call, kept here and written back by whatever changes them;
-- MINE is ID's field.
local counters = redis.call('HMGET', S, 'total', 'held', 'queued', 'token', 'lx_min', 'wx_min', 'ex_min', ID)
local held, queued, token = tonumber(counters[2]), tonumber(counters[3]), tonumber(counters[4])
local bound = { [LX] = tonumber(counters[5]), [WX] = tonumber(counters[6]), [EX] = tonumber(counters[7]) }
local BOUND_FIELD = { [LX] = 'lx_min', [WX] = 'wx_min', [EX] = 'ex_min' }
local MINE = counters[8]

-- R2: the first script to touch a semaphore creates it; the fencing counter starts at the server's
-- time in microseconds, so tokens keep increasing even if the server lost the semaphore's data.
if not counters[1] then
  held, queued, token = 0, 0, NOW * 1000
  redis.call('HSET', S, 'total', TOTAL, 'held', 0, 'queued', 0, 'seq', 0, 'token', int(token))
elseif tonumber(counters[1]) ~= TOTAL then
  return redis.error_reply('TOTAL_MISMATCH semaphore has ' .. counters[1] .. ' permits, caller configured ' .. TOTAL)
end

-- Adding to a zset of deadlines lowers its bound if needed; put() writes the lowered bounds along
-- with its own fields, in the same HSET. (Renewals and heartbeats only move deadlines later, so the
-- bound stays a bound without a write.)
local lowered = {}
local function schedule(zset, at, id)
  redis.call('ZADD', zset, at, id)
  if not bound[zset] or at < bound[zset] then
    bound[zset] = at
    lowered[#lowered + 1] = zset
  end
end

local function put(...)
  local fields = { ... }
  for _, zset in ipairs(lowered) do
    fields[#fields + 1] = BOUND_FIELD[zset]
    fields[#fields + 1] = int(bound[zset])
  end
  lowered = {}
  redis.call('HSET', S, unpack(fields))
end

local function lease(id, permits, lease_ms) -- R4: every grant is a lease with a new fencing token
  token, held = token + 1, held + permits
  local t = int(token)
  schedule(LX, NOW + lease_ms, id)
  put('token', t, 'held', held, id, 'G:' .. permits .. ':' .. t)
  return id .. ':' .. permits .. ':' .. t .. ':' .. lease_ms
end

local function end_lease(id, reason, field) -- field: id's field ("G:permits:token") if known
  local permits = tonumber(string.match(field or redis.call('HGET', S, id), '^G:(%d+)'))
  held = held - permits
  redis.call('ZREM', LX, id)
  schedule(EX, NOW + FORGET_MS, id)
  put('held', held, id, 'E:' .. reason)
end

-- Nothing is due (R5) if no zset's bound has passed: then purge() would do nothing, and the
-- operations' fast paths, placed before the rest of the library (line.lua), answer without it.
local QUIET = not (bound[LX] and NOW >= bound[LX]) and not (bound[WX] and NOW >= bound[WX])
  and not (bound[EX] and NOW >= bound[EX])

