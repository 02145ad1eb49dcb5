-- The rest of the library, for the slow paths (after head.lua and an operation's fast path): the
-- clock, creation (R2), the keys' expiry (R9), the line (R3), leases (R4), the purge of what is due
-- (R5), and where a request is.

if not NOW then
  local t = redis.call('TIME') -- R1
  NOW = t[1] * 1000 + math.floor(t[2] / 1000)
end
local IDLE_MS = tonumber(ARGV[4])
local PUBLISH = ARGV[5]
local PURGE_LIMIT = 100 -- due entries ended per zset and call (R5): every call does bounded work
local exp = tonumber(c[7])
local fields = {} -- written to S by the next put(), with its own

-- R9: the keys expire IDLE_MS after the last deadline (of a lease or a queued request) has passed;
-- keep_until(deadline) is called with every new deadline, and moves their expiry when it must, a
-- little further (at most a minute) so that busy semaphores move it rarely.
local function keep_until(deadline)
  if exp and deadline + IDLE_MS <= exp then return end
  exp = deadline + IDLE_MS + math.min(IDLE_MS, 60000)
  for _, key in ipairs({ S, Q, WX, LX }) do redis.call('PEXPIREAT', key, exp) end
  fields[#fields + 1] = 'exp'
  fields[#fields + 1] = exp
end

-- R2: the first script to touch a semaphore (or the first after it expired or was deleted) creates it
-- with the total its caller configured; afterwards the total on the server stands, and changes only
-- by a resize. The fencing counter starts at the server's time in microseconds (R4).
if not TOTAL then
  TOTAL, held, queued, token, exp = tonumber(ARGV[1]), 0, 0, NOW * 1000, nil
  redis.call('DEL', Q, WX, LX)
  for _, key in ipairs({ Q, WX, LX }) do redis.call('ZADD', key, '+inf', '~') end
  redis.call('HSET', S, 'total', TOTAL, 'held', 0, 'queued', 0, 'seq', 0, 'token', token)
  c[5], c[6] = nil, nil
  keep_until(NOW)
end

local bound = { [LX] = tonumber(c[5]), [WX] = tonumber(c[6]) }
local BOUND_FIELD = { [LX] = 'lx_min', [WX] = 'wx_min' }

local function put(...)
  local args = { ... }
  for i = 1, #fields do args[#args + 1] = fields[i] end
  fields = {}
  if #args > 0 then redis.call('HSET', S, unpack(args)) end
end

-- Adding to a zset of deadlines lowers its bound if needed (written by the next put()). Renewals and
-- heartbeats only move deadlines later, so the bound stays a bound without a write.
local function schedule(zset, at, id)
  redis.call('ZADD', zset, at, id)
  if not bound[zset] or at < bound[zset] then
    bound[zset] = at
    fields[#fields + 1] = BOUND_FIELD[zset]
    fields[#fields + 1] = at
  end
end

local function lease(id, permits, lease_ms) -- R4: every grant is a lease with a new fencing token
  token, held = token + 1, held + permits
  schedule(LX, NOW + lease_ms, id)
  keep_until(NOW + lease_ms)
  put('token', token, 'held', held, id, 'G:' .. permits .. ':' .. string.format('%d', token))
  return { 'G', permits, token, lease_ms, TOTAL }
end

local function end_lease(id, field) -- field: id's field, "G:permits:token"
  held = held - tonumber(string.match(field, '^G:(%d+)'))
  redis.call('ZREM', LX, id)
  redis.call('HDEL', S, id)
  put('held', held)
end

local function unqueue(id)
  queued = queued - 1
  redis.call('ZREM', Q, id)
  redis.call('ZREM', WX, id)
  put('queued', queued)
end

-- R3: grants whole from the head of the line while the head's request fits, and publishes the
-- grants ("id:permits:token:remainingMs"). A head larger than the total (after a reduction) fails:
-- it leaves the line, its field becomes "E:toolarge" (kept until its client reads it, or until its
-- heartbeat deadline), and "id:E:toolarge" is published.
local function grant()
  local messages = {}
  while queued > 0 do
    local head = redis.call('ZRANGE', Q, 0, 0)[1]
    local permits, lease_ms = string.match(redis.call('HGET', S, head), '^Q:(%d+):(%d+)')
    permits, lease_ms = tonumber(permits), tonumber(lease_ms)
    if permits > TOTAL then
      queued = queued - 1
      redis.call('ZREM', Q, head)
      put('queued', queued, head, 'E:toolarge')
      messages[#messages + 1] = head .. ':E:toolarge'
    elseif TOTAL - held < permits then
      break
    else
      queued = queued - 1
      redis.call('ZREM', Q, head)
      redis.call('ZREM', WX, head)
      put('queued', queued)
      lease(head, permits, lease_ms)
      messages[#messages + 1] = head .. ':' .. permits .. ':' .. string.format('%d', token) .. ':' .. lease_ms
    end
  end
  if #messages > 0 then redis.call(PUBLISH, ARGV[2], table.concat(messages, ',')) end
end

-- The place of id (see head.lua). An "E" field is answered once, then removed.
local function where(id)
  local f = redis.call('HGET', S, id)
  if not f then return { 'U' } end
  local kind = string.sub(f, 1, 1)
  if kind == 'Q' then return { 'Q' } end
  if kind == 'G' then
    local permits, t = string.match(f, '^G:(%d+):(%d+)')
    return { 'G', tonumber(permits), tonumber(t), tonumber(redis.call('ZSCORE', LX, id)) - NOW, TOTAL }
  end
  redis.call('HDEL', S, id)
  redis.call('ZREM', WX, id)
  return { 'E', string.sub(f, 3), TOTAL }
end

-- The ids of zset due now, at most PURGE_LIMIT; the caller ends them, then calls rebound(zset).
local function due(zset)
  if not bound[zset] or NOW < bound[zset] then return {} end
  return redis.call('ZRANGEBYSCORE', zset, '-inf', NOW, 'LIMIT', 0, PURGE_LIMIT)
end

local function rebound(zset) -- the bound becomes the earliest entry left (exact again)
  local first = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
  if first[1] == '~' or not first[1] then
    bound[zset] = nil
    redis.call('HDEL', S, BOUND_FIELD[zset])
  else
    bound[zset] = tonumber(first[2])
    redis.call('HSET', S, BOUND_FIELD[zset], first[2])
  end
end

-- R5: before anything else, leases past their expiry end and requests past their heartbeat deadline
-- leave the line (at most PURGE_LIMIT of each per call; the rest at the next call, which is never
-- far: every queued request's client sends heartbeats); what that freed goes to the head of the
-- line. The server keeps no record of what ended (R6). If ID's place changed, MINE is read again.
local function purge()
  local freed = false
  if bound[LX] and NOW >= bound[LX] then
    for _, id in ipairs(due(LX)) do
      local f = redis.call('HGET', S, id)
      if f then end_lease(id, f) else redis.call('ZREM', LX, id) end
      freed = true
    end
    rebound(LX)
  end
  if bound[WX] and NOW >= bound[WX] then
    for _, id in ipairs(due(WX)) do
      local f = redis.call('HGET', S, id)
      if f and string.sub(f, 1, 1) == 'Q' then
        unqueue(id)
        freed = true
      else
        redis.call('ZREM', WX, id)
      end
      redis.call('HDEL', S, id)
    end
    rebound(WX)
  end
  if freed then
    grant()
    MINE = redis.call('HGET', S, ID)
  end
  put()
end

purge()
