-- release: {"R", token} if it was live and is now released, where token
-- is the last fencing token granted before the release (so the lease was held from its own token to
-- that one); {"U"} if the server has no such lease (R6: the client reads it).
-- Fast path: nobody queued, so nothing to grant. It needs no clock: a lease past its expiry but not
-- yet purged (R5) is released as live, which is sound, because any grant made after its expiry
-- would have purged it first.
if queued == 0 and MINE and string.byte(MINE) == 71 then -- "G"
  held = held - tonumber(string.match(MINE, '^G:(%d+)'))
  redis.call('ZREM', LX, ID)
  if held == 0 then -- lx holds only its sentinel now
    redis.call('HSET', S, 'held', 0)
    redis.call('HDEL', S, ID, 'lx_min')
  else
    redis.call('HSET', S, 'held', held)
    redis.call('HDEL', S, ID)
  end
  return { 'R', token }
end
-- [lib.lua]
if MINE and string.byte(MINE) == 71 then
  end_lease(ID, MINE)
  local last = token
  grant()
  return { 'R', last }
end
return where(ID)
