-- release: ARGV 5 the lease's permits, 6 "line" if the lease was granted to the line (it has a field
-- in s) else "-", 7 "token" to have the last fencing token in the reply. {"R", token or 0} if it was
-- live and is now released (token: the last one granted before the release, so the lease was held
-- from its own token to that one); {"U"} if the server has no such lease (R6: the client reads it).
-- Fast path: the lease was live, and nobody is queued (the new "~f" is above -QBIAS/2), so nothing
-- is to be granted. It needs no clock: a lease past its expiry but not yet purged (R5) is released as
-- live, which is sound, because any grant that needed its permits would have purged it first.
LEASE_KEY = ID .. ':' .. ARGV[5]
if redis.call('ZREM', LX, LEASE_KEY, '~k:' .. ID) > 0 then
  local f = tonumber(redis.call('ZADD', LX, 'INCR', ARGV[5], '~f'))
  if ARGV[6] == 'line' then redis.call('HDEL', S, ID) end
  if f > -QBIAS / 2 then
    if ARGV[7] == 'token' then return { 'R', tonumber(redis.call('ZSCORE', LX, '~t')) } end
    return { 'R', 0 }
  end
  -- [lib.lua]
  local last = token
  grant()
  save()
  return { 'R', last }
end
return { 'U' }
