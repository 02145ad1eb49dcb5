-- acquire: ARGV 5 permits, 6 lease ms, 7 heartbeat ms (time to live while queued), 8 "queue" (join
-- the line if not granted now) or "try" (only now).
local permits, lease_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
LEASE_KEY = ID .. ':' .. ARGV[5]
local t = redis.call('TIME') -- R1: the server's time, never a client's
NOW = t[1] * 1000 + math.floor(t[2] / 1000)
-- Fast path (R3): an existing semaphore, nobody queued and it fits (both read from "~f"), not a
-- repeated call (R6), and the keys' expiry far enough (R9). It does not purge (R5): a grant that fits
-- while expired leases still count as held needs none of their permits.
local c = redis.call('ZMSCORE', LX, '~f', '~t', '~e', '~n', LEASE_KEY)
local until_ms = NOW + lease_ms
if c[1] and not c[5] and tonumber(c[1]) >= permits and until_ms + tonumber(ARGV[2]) <= -tonumber(c[3]) then
  local token = tonumber(c[2]) + 1
  redis.call('ZADD', LX, until_ms, LEASE_KEY, token, '~k:' .. ID, tonumber(c[1]) - permits, '~f', token, '~t')
  return { 'G', permits, token, lease_ms, tonumber(c[4]) }
end
-- [lib.lua]
if MINE or LIVE then return where(ID, permits) end -- R6: a repeated call gets the same answer
if permits > TOTAL then
  return redis.error_reply('PERMITS a request for ' .. permits .. ' permits can never be granted: the total is ' .. TOTAL)
end
if queued == 0 and free >= permits then -- R3: nobody ahead, and it fits
  local granted = lease(ID, permits, lease_ms, false)
  save()
  return granted
end
if ARGV[8] == 'try' then return { 'B', TOTAL } end
local ttl_ms = tonumber(ARGV[7])
local seq = redis.call('HINCRBY', S, 'seq', 1)
enqueue(ID, seq, NOW + ttl_ms, 'Q:' .. permits .. ':' .. lease_ms)
keep_until(NOW + ttl_ms)
save()
return { 'Q', seq, TOTAL }
