-- acquire: ARGV 3 request id, 4 permits, 5 lease ms, 6 heartbeat ms (time to live while queued),
-- 7 "queue" (join the line if not granted now) or "try" (only now).
local id, permits, lease_ms, ttl_ms, mode = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local known = where(id)
if known ~= 'U' then return known end -- R6: a repeated call (a command retried after a reconnect) gets the same answer
if permits > TOTAL then
  return redis.error_reply('PERMITS a request for ' .. permits .. ' permits can never be granted: the total is ' .. TOTAL)
end
if redis.call('ZCARD', Q) == 0 and TOTAL - held() >= permits then -- R3: nobody ahead, and it fits
  return 'G:' .. lease(id, permits, lease_ms)
end
if mode == 'try' then return 'B' end
local seq = redis.call('HINCRBY', S, 'seq', 1)
redis.call('ZADD', Q, seq, id)
redis.call('HSET', W, id, permits .. ':' .. lease_ms)
redis.call('ZADD', WX, NOW + ttl_ms, id)
return 'Q:' .. int(seq)
