-- resize: ARGV 2 "add", "reduce" or "set", 3 a count, 4 the settings (head.lua). Changes the total for
-- every client (R2): add and reduce change it by the count, set makes it the count. A reduction below
-- what is held leaves fewer than zero free (a debt that releases repay before anyone is granted); a
-- queued request larger than the new total fails when it reaches the head (R3). Returns {total}.
-- [lib.lua]
local resized = redis.call('HGET', S, 'resized') or ''
if string.find(' ' .. resized .. ' ', ' ' .. ID .. ' ', 1, true) then save() return { TOTAL } end -- R6
local mode, n = A[2], tonumber(A[3])
local total = TOTAL
if mode == 'add' then
  if TOTAL + n > 2147483647 then
    return redis.error_reply('PERMITS adding ' .. n .. ' permits to ' .. TOTAL .. ' would exceed 2147483647')
  end
  total = TOTAL + n
elseif mode == 'reduce' then
  if n > TOTAL then
    return redis.error_reply('PERMITS cannot remove ' .. n .. ' permits: the total is ' .. TOTAL)
  end
  total = TOTAL - n
else
  total = n
end
free, TOTAL = free + total - TOTAL, total
local ids = {}
for id in string.gmatch(resized, '%S+') do ids[#ids + 1] = id end
if #ids >= 16 then table.remove(ids, 1) end
ids[#ids + 1] = ID
redis.call('HSET', S, 'resized', table.concat(ids, ' '))
grant()
save()
return { TOTAL }
