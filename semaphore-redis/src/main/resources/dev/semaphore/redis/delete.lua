-- delete: removes the semaphore's keys if nobody holds or waits (after the purge, R5); otherwise
-- refuses. Returns {1}; the next use creates it again (R2, R9).
-- [lib.lua]
save()
if free < TOTAL or queued > 0 then
  return redis.error_reply('IN_USE ' .. (TOTAL - free) .. ' permits held and ' .. queued .. ' requests queued')
end
redis.call('DEL', S, Q, WX, LX)
return { 1 }
