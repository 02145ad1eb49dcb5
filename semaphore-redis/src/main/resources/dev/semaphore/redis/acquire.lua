-- acquire: ARGV 5 permits, 6 lease ms, 7 heartbeat ms (time to live while queued), 8 "queue" (join
-- the line if not granted now) or "try" (only now).
local permits, lease_ms = ARGV[5] + 0, ARGV[6] + 0
LEASE_KEY = ID .. ':' .. ARGV[5]
-- Fast path (R3): an existing semaphore, nobody queued and it fits (both read from f), ID without a
-- field (else this is a repeated run, R6: below), and the keys' expiry far enough (R9); ZADD NX adds
-- the lease (unless an earlier version of these scripts granted it without a field: below too), and
-- one HSET writes f, t and the lease's field (R4). It does not purge (R5): a grant that fits while
-- expired leases still count as held needs none of their permits.
-- R1: the server's clock, read through s's expiry, which is e (every script that moves one moves the
-- other: keep_until and save() in lib.lua): PTTL is e minus the server's time in ms, an integer reply,
-- where TIME is an array of two strings to convert. If s has no expiry, or too little left (R9), the
-- slow path reads TIME.
local c = redis.call('HMGET', S, 'f', 'e', 't', ID)
local free_now = c[1] and c[1] + 0
local ttl = free_now and free_now >= permits and not c[4] and redis.call('PTTL', S)
if ttl and ttl >= lease_ms + ARGV[2] then
  local until_ms = c[2] - ttl + lease_ms -- the server's time (e - ttl) plus the lease
  if redis.call('ZADD', LX, 'NX', string.format('%d', until_ms), LEASE_KEY) == 1 then
    local granted = c[3] + 1
    local token = string.format('%d', granted)
    redis.call('HSET', S, 'f', string.format('%d', free_now - permits), 't', token, ID, 'G:' .. ARGV[5] .. ':' .. token)
    return granted -- its token (an integer reply costs less than an array)
  end
end
-- [lib.lua]
if MINE then return where(ID, 0) end -- R6: a repeated call gets the same answer
if LIVE then return { 'A' } end -- R6: a lease without a field (granted by an earlier version of these scripts)
if permits > TOTAL then
  return redis.error_reply('PERMITS a request for ' .. permits .. ' permits can never be granted: the total is ' .. TOTAL)
end
if queued > 0 and free > 0 then grant() end -- R3, R5: heads an earlier call left over (GRANT_LIMIT)
if queued == 0 and free >= permits then -- R3: nobody ahead, and it fits
  local granted = lease(ID, permits, lease_ms)
  save()
  return granted
end
if ARGV[8] == 'try' then return { 'B', TOTAL } end
local ttl_ms = tonumber(ARGV[7])
local seq = redis.call('HINCRBY', S, 'seq', 1)
enqueue(ID, seq, NOW + ttl_ms, 'Q:' .. permits .. ':' .. lease_ms .. ':' .. string.format('%d', NOW))
keep_until(NOW + ttl_ms)
save()
return { 'Q', seq, TOTAL }
