-- resize: ARGV 6 "add", "reduce" or "set", 7 a count. Changes the total for every client (R2):
-- add and reduce change it by the count, set makes it the count. A reduction below what is held
-- leaves held above the total (a debt that releases repay before anyone is granted); a queued
-- request larger than the new total fails when it reaches the head (R3). Returns {total}.
-- [lib.lua]
local resized = redis.call('HGET', S, 'resized') or ''
if string.find(' ' .. resized .. ' ', ' ' .. ID .. ' ', 1, true) then return { TOTAL } end -- R6
local mode, n = ARGV[6], tonumber(ARGV[7])
if mode == 'add' then
  if TOTAL + n > 2147483647 then
    return redis.error_reply('PERMITS adding ' .. n .. ' permits to ' .. TOTAL .. ' would exceed 2147483647')
  end
  TOTAL = TOTAL + n
elseif mode == 'reduce' then
  if n > TOTAL then
    return redis.error_reply('PERMITS cannot remove ' .. n .. ' permits: the total is ' .. TOTAL)
  end
  TOTAL = TOTAL - n
else
  TOTAL = n
end
local ids = {}
for id in string.gmatch(resized, '%S+') do ids[#ids + 1] = id end
if #ids >= 16 then table.remove(ids, 1) end
ids[#ids + 1] = ID
put('total', TOTAL, 'resized', table.concat(ids, ' '))
grant()
return { TOTAL }
