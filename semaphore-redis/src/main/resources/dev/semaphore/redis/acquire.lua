-- acquire: ARGV 2 permits, 3 lease ms, 4 the idle time in ms (for the fast path; also in the settings),
-- 5 the settings (head.lua) and one more word: the heartbeat ms (time to live while queued: join the
-- line if not granted now), or "try" (only now).
local P = A[2]
local permits, lease_ms = P + 0, A[3] + 0
LEASE_KEY = ID .. ':' .. P
-- Fast path (R3): an existing semaphore, nobody queued and it fits (both read from f), ID without a
-- field (else this is a repeated run, R6: below), and the keys' expiry far enough (R9); ZADD NX adds
-- the lease (unless an earlier version of these scripts granted it without a field: below too), and
-- one HSET writes f, t and the lease's field (R4). It does not purge (R5): a grant that fits while
-- expired leases still count as held needs none of their permits.
-- R1: the server's clock, read through s's expiry, which is e (every script that moves one moves the
-- other: keep_until and save() in lib.lua): PTTL is e minus the server's time in ms, an integer reply,
-- where TIME is an array of two strings to convert. If s has no expiry, or too little left (R9), the
-- slow path reads TIME.
local c = call('HMGET', S, 'f', 'e', 't', ID)
local free_now = c[1] and c[1] + 0
local ttl = free_now and free_now >= permits and not c[4] and call('PTTL', S)
if ttl and ttl >= lease_ms + A[4] then
  local until_ms = c[2] - ttl + lease_ms -- the server's time (e - ttl) plus the lease
  local format = string.format
  if call('ZADD', LX, 'NX', format('%d', until_ms), LEASE_KEY) == 1 then
    local granted = c[3] + 1
    local token = format('%d', granted)
    call('HSET', S, 'f', format('%d', free_now - permits), 't', token, ID, 'G:' .. P .. ':' .. token)
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
local wait = string.match(SETTINGS, '(%S+)$') -- the heartbeat ms, or "try"
if wait == 'try' then return { 'B', TOTAL } end
local ttl_ms = tonumber(wait)
local seq = redis.call('HINCRBY', S, 'seq', 1)
enqueue(ID, seq, NOW + ttl_ms, 'Q:' .. permits .. ':' .. lease_ms .. ':' .. string.format('%d', NOW))
keep_until(NOW + ttl_ms)
save()
return { 'Q', seq, TOTAL }
