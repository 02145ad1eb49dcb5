-- release: ARGV 3 lease id. "R:token" if it was live and is now released, where token is the last
-- fencing token granted before the release (so the lease was held from its own token to that one);
-- otherwise where it is ("E:expired" for a lease that ran out, "E:released" for a second release,
-- "U" if never known).
local id = ARGV[3]
if redis.call('HEXISTS', L, id) == 1 then
  end_lease(id, 'released')
  local last = redis.call('HGET', S, 'token')
  grant()
  return 'R:' .. last
end
return where(id)
