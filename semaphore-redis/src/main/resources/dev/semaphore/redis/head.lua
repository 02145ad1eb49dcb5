-- The start of every script of a RedisSemaphore (Script in RedisSemaphoreClient.kt assembles it):
-- this text, the operation's fast path, lib.lua in place of the operation's line "-- [lib.lua]",
-- then the operation's slow path. The rules the scripts keep are stated once, in RedisSemaphore.kt
-- ("THE SERVER SIDE", R1..R9), and cited here. A fast path uses only what this text read: a Lua
-- closure or a string.format costs the server time on every call, so they live in lib.lua, which
-- only slow paths reach.
--
-- KEYS (one hash slot: every key starts with dsem:{name}):
--   1 s   hash: total (permits that exist), held (permits in live leases; above total while a
--         reduction is repaid), queued (requests in line), seq (last queue number), token (last
--         fencing token), exp (when the keys expire unless used again, server ms), resized (ids of
--         the last resizes, R6), lx_min / wx_min (a time before which no entry of lx / wx is due;
--         absent iff that zset holds only its sentinel), and one field per live request id:
--         "Q:permits:leaseMs" queued, "G:permits:token" a live lease, "E:toolarge" failed by a
--         reduction (read once by its client, R3)
--   2 q   zset: queued request id -> queue number (FIFO order)
--   3 wx  zset: queued request id -> heartbeat deadline (server ms)
--   4 lx  zset: lease id -> expiry (server ms)
--   Each zset also holds the member "~" at +inf, so that it is never empty and deleted, and its
--   expiry (R9) is set with the others'.
-- ARGV: 1 the total the caller configured (used only to create the semaphore, R2), 2 the wake-up
-- channel, 3 the request or lease id the operation is about ("-" if none), 4 the idle time in ms
-- (R9), 5 "PUBLISH" or "SPUBLISH" (sharded pub/sub on a Redis 7 cluster), then the operation's own.
-- Replies are arrays whose first element names a place: {"G", permits, token, remainingMs, total}
-- granted; {"Q", number, total} queued; {"B", total} busy (a try that did not fit); {"E", reason}
-- ended by the server with a reason the caller must hear; {"U"} unknown (ended, or never known).

local S, Q, WX, LX = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local ID = ARGV[3]
local c = redis.call('HMGET', S, 'total', 'held', 'queued', 'token', 'lx_min', 'wx_min', 'exp', ID)
local TOTAL, held, queued, token = tonumber(c[1]), tonumber(c[2]), tonumber(c[3]), tonumber(c[4])
local MINE = c[8]
local NOW
