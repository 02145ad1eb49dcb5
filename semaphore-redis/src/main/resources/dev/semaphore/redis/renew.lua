-- renew: ARGV 3 lease id, 4 lease ms. Extends a live lease from now; otherwise says where it is.
if MINE and string.sub(MINE, 1, 1) == 'G' then
  redis.call('ZADD', LX, 'XX', NOW + tonumber(ARGV[4]), ID)
  return 'G:' .. ID .. string.sub(MINE, 2) .. ':' .. ARGV[4] -- as where(ID) would answer, without two calls
end
return where(ID)
