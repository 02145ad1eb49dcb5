-- renew: ARGV 5 the lease's permits, 6 lease ms, 7 "confirm" if a WAIT for replicas follows (then the
-- script writes even when the expiry did not move, so that the WAIT covers everything before it).
-- Extends a live lease from now (R4); otherwise {"U"}.
LEASE_KEY = ID .. ':' .. ARGV[5]
-- [lib.lua]
if LIVE then
  local lease_ms = tonumber(ARGV[6])
  redis.call('ZADD', LX, 'XX', NOW + lease_ms, LEASE_KEY)
  keep_until(NOW + lease_ms)
  save()
  if ARGV[7] == 'confirm' then redis.call('HSET', S, 'e', exp) end
  return where(ID, tonumber(ARGV[5]))
end
return { 'U' }
