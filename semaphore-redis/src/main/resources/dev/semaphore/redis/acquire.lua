-- acquire: ARGV 3 request id, 4 permits, 5 lease ms, 6 heartbeat ms (time to live while queued),
-- 7 "queue" (join the line if not granted now) or "try" (only now).
local permits, lease_ms, ttl_ms, mode = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), ARGV[7]
-- Fast path (R3): nothing due, not a repeated call, nobody queued, and it fits.
if QUIET and not MINE and queued == 0 and TOTAL - held >= permits then
  return 'G:' .. lease(ID, permits, lease_ms)
end
-- [line.lua]
if MINE then return where(ID) end -- R6: a repeated call (a command retried after a reconnect) gets the same answer
if permits > TOTAL then
  return redis.error_reply('PERMITS a request for ' .. permits .. ' permits can never be granted: the total is ' .. TOTAL)
end
if queued == 0 and TOTAL - held >= permits then -- R3: nobody ahead, and it fits
  return 'G:' .. lease(ID, permits, lease_ms)
end
if mode == 'try' then return 'B' end
local seq = redis.call('HINCRBY', S, 'seq', 1)
queued = queued + 1
redis.call('ZADD', Q, seq, ID)
schedule(WX, NOW + ttl_ms, ID)
put('queued', queued, ID, 'Q:' .. permits .. ':' .. lease_ms)
return 'Q:' .. int(seq)
