-- The start of every script of a RedisSemaphore (Script in RedisScripts.kt assembles it):
-- this text, the operation's fast path, lib.lua in place of the operation's line "-- [lib.lua]",
-- then the operation's slow path. The rules the scripts keep are stated once, in docs/redis-protocol.md
-- (R1..R9, and what each answer means to the client), and cited here. What costs the server time in a
-- script is each call (a reply that is an array costs more than an integer), each KEYS and ARGV entry
-- (Redis fills KEYS and ARGV into tables that grow one power of two at a time: 4 entries take 3 resizes,
-- 5 to 8 take 4), each access to a global (KEYS, ARGV, redis, string: read once, into locals, below),
-- each Lua closure, each number turned into a string (a double's formatting) and each string turned
-- into a number (a strtod; tonumber(s) runs two): the fast paths (an uncontended acquire in 4 calls, its
-- release in 3) take at most 5 and 4 ARGV (what only a slow path needs comes in one string, the
-- settings), pass strings where they can, read integers, and turn each string into a number once; the
-- rest of the library, with its functions, is reached only by slow paths. (Measured with callgrind and
-- interleaved script timings against Redisson's scripts: docs/redis.md, "Cost".)
--
-- KEYS (one hash slot: every key starts with dsem:{name}):
--   1 s   hash: the counters, as integers (so that the fast paths read and change them without a
--         double's formatting): f free permits (total minus held; below zero while a reduction is
--         repaid; lowered by QBIAS while anyone is queued, so that a fast path sees the line in the
--         same read), t the last fencing token, n the total, e when the keys expire (R9; s's expiry is
--         e, which the acquire's fast path reads the clock through, R1), queued (requests in line), seq
--         (last queue number), resized (R6), "~" (a constant longer than a listpack value, which keeps s
--         a hashtable: lib.lua); and one field per request in
--         line ("Q:permits:leaseMs:sinceMs", sinceMs when it joined the line, server ms), per live
--         lease ("G:permits:token", removed with the lease), and per request that a reduction failed
--         ("E:toolarge", answered until its client withdraws it or its deadline passes, R3)
--   2 q   zset: queued request id -> queue number (FIFO order)
--   3 wx  zset: queued request id -> heartbeat deadline (server ms)
--   4 lx  zset: "id:permits" of each live lease -> its expiry (server ms)
--   q, wx and lx also hold the member "~" at +inf, so that they are never empty and deleted, and their
--   expiry (R9) is set with s's.
-- Ids are the clients' (RedisSemaphoreClient.newRequestId): "clientId-n", then "/name" if the client
-- has a name (encoded without ':', ',' or spaces). The scripts do not parse them; inspect's caller does.
-- ARGV: 1 the request or lease id the operation is about ("-" if none), then the operation's own, and
-- last the settings, one string that lib.lua reads (so only slow paths parse it): "idleMs total publish",
-- the idle time in ms (R9), the total the caller configured (used only to create the semaphore, R2),
-- and "PUBLISH" or "SPUBLISH" (sharded pub/sub on a Redis 7 cluster), separated by spaces; acquire's
-- adds a word of its own (acquire.lua). Script.argv in RedisScripts.kt builds each operation's ARGV.
-- Replies (but those of the fast paths, which are integers, as each operation says) are arrays whose
-- first element names a place: {"G", permits, token, remainingMs, total}
-- granted; {"Q", number, total} queued; {"B", total} busy (a try that did not fit); {"E", reason}
-- ended by the server with a reason the caller must hear; {"U"} unknown (ended, or never known);
-- {"A"} already granted at once, by an earlier run of the same acquire (R6), whose token is not kept.

local K, A = KEYS, ARGV -- each global is read once: a global costs more than a local
local S, Q, WX, LX = K[1], K[2], K[3], K[4]
local ID = A[1]
local call = redis.call
local QBIAS = 1099511627776 -- 2^40: f is lowered by this while anyone is queued
local NOW, NOW_US -- the server's time in ms and in µs (R1), once a script asked for it
local LEASE_KEY -- "id:permits", the member of lx of the lease the operation is about (set by the operations about one)
