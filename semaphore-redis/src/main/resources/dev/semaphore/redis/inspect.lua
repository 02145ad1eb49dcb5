-- inspect: ARGV 2 limit (0 or more: entries listed per list), 3 the settings (head.lua; not read). Who
-- holds and who waits, read-only: no lib.lua, so it neither purges (R5) nor creates the semaphore (R2),
-- and it never waits. What is past its time by the server's clock (R1) is left out, as the next purge
-- would end it: a lease past its expiry, a queued request past its heartbeat deadline. Bounded work and
-- reply: at most limit entries per list, and at most DEAD_SCAN dead requests looked at.
-- Reply: {total, holders, {id, permits, token, remainingMs, ...}, queued, {id, permits, waitedMs, ...},
-- held}: total -1 if the server has no such semaphore; holders and queued the true counts; the holders
-- by expiry, soonest first (at most limit), the line from its head (at most limit); held the permits of
-- the live leases (the free count f counts the leases past their expiry as held: their permits are
-- taken out, those of at most DEAD_SCAN of them, the others' still counted).
local limit = tonumber(A[2])
local t = redis.call('TIME') -- R1
NOW = t[1] * 1000 + math.floor(t[2] / 1000)
local now = string.format('%d', NOW)
local DEAD_SCAN = 1000
local c = redis.call('HMGET', S, 'n', 'queued', 'f')
if not c[1] then return { -1, 0, {}, 0, {}, 0 } end

-- Holders: the live leases in lx ("~" is at +inf, left out by the exclusive bound), and their fields.
local holder_count = redis.call('ZCOUNT', LX, '(' .. now, '(+inf')
local holders = {}
if limit > 0 and holder_count > 0 then
  local leases = redis.call('ZRANGEBYSCORE', LX, '(' .. now, '(+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  local ids = {}
  for i = 1, #leases, 2 do ids[#ids + 1] = string.match(leases[i], '^(.*):%d+$') end
  local fields = redis.call('HMGET', S, unpack(ids))
  for i, id in ipairs(ids) do
    local permits = string.match(leases[2 * i - 1], ':(%d+)$')
    local token = fields[i] and string.match(fields[i], '^G:%d+:(%d+)') -- none: an earlier version's grant at once
    holders[#holders + 1] = id
    holders[#holders + 1] = tonumber(permits)
    holders[#holders + 1] = tonumber(token) or 0
    holders[#holders + 1] = tonumber(leases[2 * i]) - NOW
  end
end

-- The line: q in order, without the requests past their heartbeat deadline (dead ones, counted from
-- wx: those of its entries past their deadline that are still in q; an "E" field's entry is not).
local queued = tonumber(c[2]) or 0
local dead = 0
if queued > 0 then dead = redis.call('ZCOUNT', WX, '-inf', now) end
local dead_in_line = 0
if dead > 0 then
  local ids = redis.call('ZRANGEBYSCORE', WX, '-inf', now, 'LIMIT', 0, DEAD_SCAN)
  for _, number in ipairs(redis.call('ZMSCORE', Q, unpack(ids))) do
    if number then dead_in_line = dead_in_line + 1 end
  end
  dead_in_line = dead_in_line + (dead - #ids) -- beyond DEAD_SCAN: counted as in line (an "E" entry is rare)
end
local line = {}
local listed, start, scanned = 0, 0, 0
while listed < limit and start < queued and scanned < limit + DEAD_SCAN do
  local ids = redis.call('ZRANGE', Q, start, start + limit - 1)
  if ids[#ids] == '~' then ids[#ids] = nil end
  if #ids == 0 then break end
  start, scanned = start + #ids, scanned + #ids
  local deadlines = dead > 0 and redis.call('ZMSCORE', WX, unpack(ids)) or {}
  local fields = redis.call('HMGET', S, unpack(ids))
  for i, id in ipairs(ids) do
    if listed < limit and not (deadlines[i] and tonumber(deadlines[i]) <= NOW) and fields[i] then
      local permits, since = string.match(fields[i], '^Q:(%d+):%d+:?(%d*)')
      if permits then
        listed = listed + 1
        line[#line + 1] = id
        line[#line + 1] = tonumber(permits)
        line[#line + 1] = NOW - (tonumber(since) or NOW) -- no since: queued by an earlier version of these scripts
      end
    end
  end
end
-- Held: the total minus the free count (f without QBIAS, head.lua), minus the expired leases' permits.
local free = tonumber(c[3]) or 0
if queued > 0 then free = free + QBIAS end
local held = tonumber(c[1]) - free
for _, member in ipairs(redis.call('ZRANGEBYSCORE', LX, '-inf', now, 'LIMIT', 0, DEAD_SCAN)) do
  held = held - tonumber(string.match(member, ':(%d+)$'))
end
return { tonumber(c[1]), holder_count, holders, queued - dead_in_line, line, held }
