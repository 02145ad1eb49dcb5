-- renew: ARGV 3 lease id, 4 lease ms. Extends a live lease from now; otherwise says where it is.
local id, lease_ms = ARGV[3], tonumber(ARGV[4])
if redis.call('HEXISTS', L, id) == 1 then redis.call('ZADD', LX, 'XX', NOW + lease_ms, id) end
return where(id)
