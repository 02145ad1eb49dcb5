-- heartbeat: ARGV 3 "-", 4 heartbeat ms, 5.. the ids of this client's queued requests. Extends the
-- deadline of those still queued (R5) and answers where each one is (the safety net under pub/sub, R7).
local ttl_ms = tonumber(ARGV[4])
local places = {}
for i = 5, #ARGV do
  local id = ARGV[i]
  local place = where(id)
  if place == 'Q' then redis.call('ZADD', WX, 'XX', NOW + ttl_ms, id) end
  places[#places + 1] = place
end
return places
