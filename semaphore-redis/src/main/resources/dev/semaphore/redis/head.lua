-- The start of every script of a RedisSemaphore (Script in RedisSemaphoreClient.kt assembles it):
-- this text, the operation's fast path, lib.lua in place of the operation's line "-- [lib.lua]",
-- then the operation's slow path. The rules the scripts keep are stated once, in RedisSemaphore.kt
-- ("THE SERVER SIDE", R1..R9), and cited here. Every call a script makes costs the server about as
-- much as the script's own start, and so does a Lua closure: the fast paths (an uncontended acquire
-- in 3 calls, its release in 2) read and write only the counters in lx, and the rest of the library,
-- with its functions, is reached only by slow paths.
--
-- KEYS (one hash slot: every key starts with dsem:{name}):
--   1 s   hash: queued (requests in line), seq (last queue number), and one field per request in line
--         ("Q:permits:leaseMs"), per lease granted to the line ("G:permits:token"), and per request
--         that a reduction failed ("E:toolarge", read once by its client, R3)
--   2 q   zset: queued request id -> queue number (FIFO order)
--   3 wx  zset: queued request id -> heartbeat deadline (server ms)
--   4 lx  zset: lease id -> expiry (server ms); "~k:" .. lease id -> its fencing token; and the
--         counters: "~f" free permits (total minus held; below zero while a reduction is repaid;
--         lowered by QBIAS while anyone is queued, so that the fast paths see it without a read), "~t"
--         the last fencing token, "~n" the total, "~e" minus the time the keys expire (R9). Only
--         expiries are between 10^12 and 10^15, which is where the purge looks (R5).
--   q and wx also hold the member "~" at +inf, so that they are never empty and deleted, and their
--   expiry (R9) is set with the others'.
-- ARGV: 1 the request or lease id the operation is about ("-" if none), 2 the idle time in ms (R9),
-- 3 the total the caller configured (used only to create the semaphore, R2), 4 "PUBLISH" or "SPUBLISH"
-- (sharded pub/sub on a Redis 7 cluster), then the operation's own.
-- Replies are arrays whose first element names a place: {"G", permits, token, remainingMs, total}
-- granted; {"Q", number, total} queued; {"B", total} busy (a try that did not fit); {"E", reason}
-- ended by the server with a reason the caller must hear; {"U"} unknown (ended, or never known).

local S, Q, WX, LX = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ID = ARGV[1]
local QBIAS = 1099511627776 -- 2^40: "~f" is lowered by this while anyone is queued
local NOW
local LEASE_KEY -- "id:permits", the member of lx of the lease the operation is about (set by the operations about one)
