-- cancel: ARGV 5 the request's permits, 6 "1" to hand a grant back (a cancelled caller) or "0" to
-- keep it (a timed-out caller takes a grant that won the race). R8: a request leaves the line, or its
-- grant is either taken by its caller or handed back; never both, never neither.
LEASE_KEY = ID .. ':' .. ARGV[5]
-- [lib.lua]
local kind = MINE and string.sub(MINE, 1, 1)
if kind == 'Q' then
  unqueue(ID)
  redis.call('HDEL', S, ID)
  grant() -- those behind may fit now
  save()
  return { 'U' }
end
if ARGV[6] == '1' and (kind == 'G' or LIVE) then
  end_lease(ID, tonumber(ARGV[5]))
  grant()
  save()
  return { 'U' }
end
local place = where(ID, tonumber(ARGV[5]))
if kind == 'E' then -- its client heard why it failed (R3): the field goes
  redis.call('HDEL', S, ID)
  redis.call('ZREM', WX, ID)
end
return place
