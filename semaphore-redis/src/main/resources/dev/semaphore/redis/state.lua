-- state: ARGV 3 "-". Available permits and queue length, after the purge (R5).
return { TOTAL - held, queued }
