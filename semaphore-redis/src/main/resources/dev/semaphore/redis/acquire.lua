-- acquire: ARGV 6 permits, 7 lease ms, 8 heartbeat ms (time to live while queued), 9 "queue" (join
-- the line if not granted now) or "try" (only now).
local permits, lease_ms = tonumber(ARGV[6]), tonumber(ARGV[7])
local t = redis.call('TIME') -- R1: the server's time, never a client's
NOW = t[1] * 1000 + math.floor(t[2] / 1000)
-- Fast path (R3): an existing semaphore, nothing due (R5), not a repeated call (R6), nobody queued,
-- and it fits; the keys' expiry far enough (R9).
local lx_min, exp = tonumber(c[5]), tonumber(c[7])
local until_ms = NOW + lease_ms
if TOTAL and not MINE and queued == 0 and TOTAL - held >= permits and (not lx_min or lx_min > NOW)
    and exp and until_ms + tonumber(ARGV[4]) <= exp then
  token, held = token + 1, held + permits
  local field = 'G:' .. permits .. ':' .. string.format('%d', token)
  redis.call('ZADD', LX, until_ms, ID)
  if lx_min and lx_min <= until_ms then
    redis.call('HSET', S, 'token', token, 'held', held, ID, field)
  else
    redis.call('HSET', S, 'token', token, 'held', held, ID, field, 'lx_min', until_ms)
  end
  return { 'G', permits, token, lease_ms, TOTAL }
end
-- [lib.lua]
if MINE then return where(ID) end -- R6: a repeated call gets the same answer
if permits > TOTAL then
  return redis.error_reply('PERMITS a request for ' .. permits .. ' permits can never be granted: the total is ' .. TOTAL)
end
if queued == 0 and TOTAL - held >= permits then -- R3: nobody ahead, and it fits
  return lease(ID, permits, lease_ms)
end
if ARGV[9] == 'try' then return { 'B', TOTAL } end
local ttl_ms = tonumber(ARGV[8])
local seq = redis.call('HINCRBY', S, 'seq', 1)
queued = queued + 1
redis.call('ZADD', Q, seq, ID)
schedule(WX, NOW + ttl_ms, ID)
keep_until(NOW + ttl_ms)
put('queued', queued, ID, 'Q:' .. permits .. ':' .. lease_ms)
return { 'Q', seq, TOTAL }
