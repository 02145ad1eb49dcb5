-- heartbeat: ARGV 3 heartbeat ms, 4.. the ids of this client's queued requests. Extends the
-- deadline of those still queued (R5) and answers where each one is (the safety net under pub/sub, R7).
local ttl_ms = tonumber(ARGV[3])
local places = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if redis.call('ZSCORE', Q, id) then redis.call('ZADD', WX, 'XX', NOW + ttl_ms, id) end
  places[#places + 1] = where(id)
end
return places
