-- heartbeat: ARGV 2 heartbeat ms, 3.. the ids of this client's queued requests, last the settings
-- (head.lua). Extends the deadline of those still queued (R5) and answers where each one is (the safety
-- net under pub/sub, R7).
-- [lib.lua]
if queued > 0 and free > 0 then grant() end -- R3, R5: heads an earlier call left over (GRANT_LIMIT)
local ttl_ms = tonumber(A[2])
keep_until(NOW + ttl_ms)
local places = {}
for i = 3, #A - 1 do
  local id = A[i]
  local place = where(id, 0)
  if place[1] == 'Q' then redis.call('ZADD', WX, 'XX', NOW + ttl_ms, id) end
  places[#places + 1] = place
end
save()
return places
