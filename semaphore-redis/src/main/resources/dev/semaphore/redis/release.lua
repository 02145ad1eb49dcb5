-- release: ARGV 2 the lease's permits, 3 "token" to have the last fencing token in the reply (else
-- "-"), 4 the settings (head.lua). An integer if it was live and is now released (its lx entry and its
-- field in s removed, R4): the last token granted before the release (so the lease was held from its
-- own token to that one), or 0 if not asked for; {"U"} if the server has no such lease (R6: the client
-- reads it).
-- Fast path: the lease was live, and nobody is queued (the new f is above -QBIAS/2), so nothing is to
-- be granted. It needs no clock: a lease past its expiry but not yet purged (R5) is released as live,
-- which is sound, because any grant that needed its permits would have purged it first.
local P = A[2]
LEASE_KEY = ID .. ':' .. P
if call('ZREM', LX, LEASE_KEY) > 0 then
  local f = call('HINCRBY', S, 'f', P)
  call('HDEL', S, ID)
  if f > -QBIAS / 2 then
    if A[3] == 'token' then return tonumber(call('HGET', S, 't')) end
    return 0
  end
  -- [lib.lua]
  local last = token
  grant()
  save()
  return last
end
return { 'U' }
