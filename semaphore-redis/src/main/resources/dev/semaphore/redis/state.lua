-- state: {available, queued, total}, after the purge (R5). Available is below zero while a reduction
-- is repaid (R2).
-- [lib.lua]
save()
return { free, queued, TOTAL }
