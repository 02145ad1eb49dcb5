-- renew: ARGV 3 lease id, 4 lease ms, 5 "confirm" if a WAIT for replicas follows (then the script
-- writes even when the expiry did not move, so that the WAIT covers everything before it). Extends a
-- live lease from now; otherwise says where it is.
if MINE and string.sub(MINE, 1, 1) == 'G' then
  redis.call('ZADD', LX, 'XX', NOW + tonumber(ARGV[4]), ID)
  if ARGV[5] == 'confirm' then redis.call('HSET', S, ID, MINE) end
  return 'G:' .. ID .. string.sub(MINE, 2) .. ':' .. ARGV[4] -- as where(ID) would answer, without two calls
end
return where(ID)
