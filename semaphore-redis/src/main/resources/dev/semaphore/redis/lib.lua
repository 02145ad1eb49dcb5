-- The part shared by every script of a RedisSemaphore: each operation is this text followed by the
-- operation's own text (RedisScripts.kt), run atomically as one script. The rules these scripts keep
-- are stated once, in RedisSemaphore.kt ("THE SERVER SIDE", R1..R8); they are cited here.
--
-- KEYS (one hash slot: every key starts with {name}):
--   1 {name}:s   hash: total, held (permits in live leases), seq (last queue number), token (last fencing token)
--   2 {name}:q   zset: queued request id -> queue number (FIFO order)
--   3 {name}:w   hash: queued request id -> "permits:leaseMs"
--   4 {name}:wx  zset: queued request id -> heartbeat deadline (server ms)
--   5 {name}:l   hash: lease id -> "permits:token"
--   6 {name}:lx  zset: lease id -> expiry (server ms)
--   7 {name}:e   hash: ended id -> "released" | "expired" | "cancelled" | "purged"
--   8 {name}:ex  zset: ended id -> when to forget it (server ms)
-- ARGV: 1 total permits (as configured by the caller), 2 the wake-up channel, then the operation's own.
-- Replies name a request's place (where()): "Q" queued ("Q:number" when it joins the line); "G:id:permits:token:remainingMs" granted;
-- "E:reason" ended; "U" unknown.

if redis.replicate_commands then pcall(redis.replicate_commands) end -- Redis < 5: replicate effects (TIME)

local S, Q, W, WX, L, LX, E, EX = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local TOTAL = tonumber(ARGV[1])
local CHANNEL = ARGV[2]
local FORGET_MS = 600000 -- how long an ended id is remembered, so late or repeated calls get a clear answer

local clock = redis.call('TIME') -- R1: the server's time, never a client's
local NOW = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

local function int(x) return string.format('%.0f', x) end

-- R2: the first script to touch a semaphore creates it; the fencing counter starts at the server's
-- time in microseconds, so tokens keep increasing even if the server lost the semaphore's data.
local known_total = redis.call('HGET', S, 'total')
if not known_total then
  redis.call('HSET', S, 'total', TOTAL, 'held', 0, 'seq', 0, 'token', int(NOW * 1000))
elseif tonumber(known_total) ~= TOTAL then
  return redis.error_reply('TOTAL_MISMATCH semaphore has ' .. known_total .. ' permits, caller configured ' .. TOTAL)
end

local function held() return tonumber(redis.call('HGET', S, 'held')) end

local function ended(id, reason)
  redis.call('HSET', E, id, reason)
  redis.call('ZADD', EX, NOW + FORGET_MS, id)
end

local function lease(id, permits, lease_ms) -- R4: every grant is a lease with a new fencing token
  local token = redis.call('HINCRBY', S, 'token', 1)
  redis.call('HINCRBY', S, 'held', permits)
  redis.call('HSET', L, id, permits .. ':' .. int(token))
  redis.call('ZADD', LX, NOW + lease_ms, id)
  return id .. ':' .. permits .. ':' .. int(token) .. ':' .. int(lease_ms)
end

local function unqueue(id)
  redis.call('ZREM', Q, id)
  redis.call('HDEL', W, id)
  redis.call('ZREM', WX, id)
end

local function end_lease(id, reason)
  local permits = tonumber(string.match(redis.call('HGET', L, id), '^(%d+)'))
  redis.call('HDEL', L, id)
  redis.call('ZREM', LX, id)
  redis.call('HINCRBY', S, 'held', -permits)
  ended(id, reason)
end

-- R3: grants whole from the head of the line while the head's request fits, and publishes the grants.
local function grant()
  local grants = {}
  while true do
    local head = redis.call('ZRANGE', Q, 0, 0)[1]
    if not head then break end
    local permits, lease_ms = string.match(redis.call('HGET', W, head), '(%d+):(%d+)')
    permits = tonumber(permits)
    if TOTAL - held() < permits then break end
    unqueue(head)
    grants[#grants + 1] = lease(head, permits, tonumber(lease_ms))
  end
  if #grants > 0 then redis.call('PUBLISH', CHANNEL, table.concat(grants, ',')) end
end

-- R5: before anything else, leases past their expiry end and requests past their heartbeat deadline
-- leave the line; what that frees goes to the head of the line.
local function purge()
  local freed = false
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', LX, '-inf', NOW)) do
    end_lease(id, 'expired')
    freed = true
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', WX, '-inf', NOW)) do
    unqueue(id)
    ended(id, 'purged')
    freed = true
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', EX, '-inf', NOW)) do
    redis.call('HDEL', E, id)
    redis.call('ZREM', EX, id)
  end
  if freed then grant() end
end

local function where(id)
  if redis.call('ZSCORE', Q, id) then return 'Q' end
  local l = redis.call('HGET', L, id)
  if l then
    local remaining = tonumber(redis.call('ZSCORE', LX, id)) - NOW
    return 'G:' .. id .. ':' .. l .. ':' .. int(remaining)
  end
  local e = redis.call('HGET', E, id)
  if e then return 'E:' .. e end
  return 'U'
end

purge()
