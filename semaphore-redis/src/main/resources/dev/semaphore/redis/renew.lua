-- renew: ARGV 6 lease ms, 7 "confirm" if a WAIT for replicas follows (then the script writes even
-- when the expiry did not move, so that the WAIT covers everything before it). Extends a live lease
-- from now (R4); otherwise {"U"}.
-- [lib.lua]
if MINE and string.byte(MINE) == 71 then
  local lease_ms = tonumber(ARGV[6])
  redis.call('ZADD', LX, 'XX', NOW + lease_ms, ID)
  keep_until(NOW + lease_ms)
  if ARGV[7] == 'confirm' then redis.call('HSET', S, ID, MINE) end
  local permits, t = string.match(MINE, '^G:(%d+):(%d+)')
  return { 'G', tonumber(permits), tonumber(t), lease_ms, TOTAL }
end
return where(ID)
