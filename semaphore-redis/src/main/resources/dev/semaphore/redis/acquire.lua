-- acquire: ARGV 5 permits, 6 lease ms, 7 heartbeat ms (time to live while queued), 8 "queue" (join
-- the line if not granted now) or "try" (only now).
local permits, lease_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
LEASE_KEY = ID .. ':' .. ARGV[5]
local t = redis.call('TIME') -- R1: the server's time, never a client's
NOW, NOW_US = t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
-- Fast path (R3): an existing semaphore, nobody queued and it fits (both read from f), and the keys'
-- expiry far enough (R9); ZADD NX adds the lease unless this is a repeated run (R6). It does not purge
-- (R5): a grant that fits while expired leases still count as held needs none of their permits.
local c = redis.call('HMGET', S, 'f', 'e')
local until_ms = NOW + lease_ms
if c[1] and tonumber(c[1]) >= permits and until_ms + tonumber(ARGV[2]) <= tonumber(c[2]) then
  if redis.call('ZADD', LX, 'NX', until_ms, LEASE_KEY) == 1 then -- else a repeated run (R6): below
    redis.call('HINCRBY', S, 'f', '-' .. ARGV[5])
    return redis.call('HINCRBY', S, 't', '1') -- granted: its token (an integer reply costs less than an array)
  end
end
-- [lib.lua]
if MINE then return where(ID, 0) end -- R6: a repeated call gets the same answer
if LIVE then return { 'A' } end -- R6: granted at once by an earlier run, whose token was not kept
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
