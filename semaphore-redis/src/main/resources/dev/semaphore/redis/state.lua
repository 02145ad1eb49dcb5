-- state: available permits and queue length, after the purge (R5).
return { TOTAL - held(), redis.call('ZCARD', Q) }
