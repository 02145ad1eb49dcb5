-- cancel: ARGV 6 "1" to hand a grant back (a cancelled caller) or "0" to keep it (a timed-out caller
-- takes a grant that won the race). R8: a request leaves the line, or its grant is either taken by
-- its caller or handed back; never both, never neither.
-- [lib.lua]
local kind = MINE and string.sub(MINE, 1, 1)
if kind == 'Q' then
  unqueue(ID)
  redis.call('HDEL', S, ID)
  grant() -- those behind may fit now
  return { 'U' }
end
if ARGV[6] == '1' and kind == 'G' then
  end_lease(ID, MINE)
  grant()
  return { 'U' }
end
return where(ID)
