-- cancel: ARGV 2 the request's permits, 3 "1" to hand a grant back (a cancelled caller) or "0" to keep
-- it (a timed-out caller takes a grant that won the race), 4 the settings (head.lua). R8: a request
-- leaves the line, or its grant is either taken by its caller or handed back; never both, never
-- neither.
LEASE_KEY = ID .. ':' .. A[2]
-- [lib.lua]
local kind = MINE and string.sub(MINE, 1, 1)
if kind == 'Q' then
  unqueue(ID)
  redis.call('HDEL', S, ID)
  grant() -- those behind may fit now
  save()
  return { 'U' }
end
if A[3] == '1' and (kind == 'G' or LIVE) then
  end_lease(ID, tonumber(A[2]))
  grant()
  save()
  return { 'U' }
end
local place = where(ID, tonumber(A[2]))
if kind == 'E' then -- its client heard why it failed (R3): the field goes
  redis.call('HDEL', S, ID)
  redis.call('ZREM', WX, ID)
end
return place
