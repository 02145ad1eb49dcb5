-- renew: ARGV 2 the lease's permits, 3 lease ms, 4 "confirm" if a WAIT for replicas follows (then the
-- script writes even when the expiry did not move, so that the WAIT covers everything before it), else
-- "-", 5 the settings (head.lua).
-- Extends a live lease from now (R4); otherwise {"U"}.
LEASE_KEY = ID .. ':' .. A[2]
-- [lib.lua]
if LIVE then
  local lease_ms = tonumber(A[3])
  redis.call('ZADD', LX, 'XX', NOW + lease_ms, LEASE_KEY)
  keep_until(NOW + lease_ms)
  save()
  if A[4] == 'confirm' then redis.call('HSET', S, 'e', exp) end
  return where(ID, tonumber(A[2]))
end
return { 'U' }
