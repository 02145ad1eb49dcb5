-- cancel: ARGV 3 request id, 4 "1" to hand a grant back (a cancelled caller) or "0" to keep it (a
-- timed-out caller takes a grant that won the race). R8: a request leaves the line, or its grant is
-- either taken by its caller or handed back; never both, never neither.
local hand_back = ARGV[4] == '1'
local kind = MINE and string.sub(MINE, 1, 1)
if kind == 'Q' then
  unqueue(ID)
  ended(ID, 'cancelled')
  grant() -- those behind may fit now
  forget()
  return 'C'
end
if hand_back and kind == 'G' then
  end_lease(ID, 'released', MINE)
  grant()
  forget()
  return 'R'
end
return where(ID)
