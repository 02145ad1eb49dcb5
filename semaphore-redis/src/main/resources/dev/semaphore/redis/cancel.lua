-- cancel: ARGV 3 request id, 4 "1" to hand a grant back (a cancelled caller) or "0" to keep it (a
-- timed-out caller takes a grant that won the race). R8: a request leaves the line, or its grant is
-- either taken by its caller or handed back; never both, never neither.
local id, hand_back = ARGV[3], ARGV[4] == '1'
if redis.call('ZSCORE', Q, id) then
  unqueue(id)
  ended(id, 'cancelled')
  grant() -- those behind may fit now
  return 'C'
end
if hand_back and redis.call('HEXISTS', L, id) == 1 then
  end_lease(id, 'released')
  grant()
  return 'R'
end
return where(id)
