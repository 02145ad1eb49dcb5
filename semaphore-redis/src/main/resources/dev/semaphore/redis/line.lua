-- The rest of the library (after lib.lua and an operation's fast path, if it has one): the line,
-- the purge of what is due (R5), and where a request is.

-- The ids of zset that are due now (none without a call if its bound is later); the caller removes
-- them from zset, then calls rebound(zset).
local function due(zset, limit)
  if not bound[zset] or NOW < bound[zset] then return {} end
  if limit then return redis.call('ZRANGEBYSCORE', zset, '-inf', NOW, 'LIMIT', 0, limit) end
  return redis.call('ZRANGEBYSCORE', zset, '-inf', NOW)
end

local function rebound(zset) -- the bound becomes the earliest entry left (exact again)
  local first = redis.call('ZRANGE', zset, 0, 0, 'WITHSCORES')
  bound[zset] = tonumber(first[2])
  if bound[zset] then
    redis.call('HSET', S, BOUND_FIELD[zset], int(bound[zset]))
  else
    redis.call('HDEL', S, BOUND_FIELD[zset])
  end
end

local function ended(id, reason)
  schedule(EX, NOW + FORGET_MS, id)
  put(id, 'E:' .. reason)
end

local function unqueue(id)
  queued = queued - 1
  redis.call('ZREM', Q, id)
  redis.call('ZREM', WX, id)
  put('queued', queued)
end

-- R3: grants whole from the head of the line while the head's request fits, and publishes the grants.
local function grant()
  local grants = {}
  while queued > 0 do
    local head = redis.call('ZRANGE', Q, 0, 0)[1]
    local permits, lease_ms = string.match(redis.call('HGET', S, head), '^Q:(%d+):(%d+)')
    permits = tonumber(permits)
    if TOTAL - held < permits then break end
    unqueue(head)
    grants[#grants + 1] = lease(head, permits, lease_ms)
  end
  if #grants > 0 then redis.call('PUBLISH', CHANNEL, table.concat(grants, ',')) end
end

-- R6: ended ids are forgotten once FORGET_MS has passed; the scripts that end something call this.
local function forget()
  local old = due(EX, 100)
  if #old > 0 then
    redis.call('HDEL', S, unpack(old))
    redis.call('ZREM', EX, unpack(old))
    rebound(EX)
  elseif bound[EX] and NOW >= bound[EX] then
    rebound(EX)
  end
end

-- The place of id: its field of S, as a reply (see the top).
local function where(id)
  local f = redis.call('HGET', S, id)
  if not f then return 'U' end
  local kind = string.sub(f, 1, 1)
  if kind == 'Q' then return 'Q' end
  if kind == 'G' then return 'G:' .. id .. string.sub(f, 2) .. ':' .. int(tonumber(redis.call('ZSCORE', LX, id)) - NOW) end
  return f
end

-- R5: before anything else, leases past their expiry end and requests past their heartbeat deadline
-- leave the line; what that frees goes to the head of the line. A zset is looked into only when its
-- bound says that something may be due. If ID's place changed, MINE is read again.
local function purge()
  local freed = false
  if bound[LX] and NOW >= bound[LX] then
    for _, id in ipairs(due(LX)) do
      end_lease(id, 'expired')
      freed = true
    end
    rebound(LX)
  end
  if bound[WX] and NOW >= bound[WX] then
    for _, id in ipairs(due(WX)) do
      unqueue(id)
      ended(id, 'purged')
      freed = true
    end
    rebound(WX)
  end
  if freed then
    grant()
    MINE = redis.call('HGET', S, ID)
  end
end

purge()
