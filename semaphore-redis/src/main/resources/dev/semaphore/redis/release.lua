-- release: ARGV 3 lease id. "R:token" if it was live and is now released, where token is the last
-- fencing token granted before the release (so the lease was held from its own token to that one);
-- otherwise where it is ("E:expired" for a lease that ran out, "E:released" for a second release,
-- "U" if never known).
-- Fast path: nothing due and nobody queued, so nothing to purge, grant or forget.
if QUIET and queued == 0 and MINE and string.sub(MINE, 1, 1) == 'G' then
  end_lease(ID, 'released', MINE)
  return 'R:' .. int(token)
end
-- [line.lua]
if MINE and string.sub(MINE, 1, 1) == 'G' then
  end_lease(ID, 'released', MINE)
  local last = int(token)
  grant()
  forget()
  return 'R:' .. last
end
return where(ID)
