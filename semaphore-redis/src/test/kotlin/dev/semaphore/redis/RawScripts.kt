package dev.semaphore.redis

import dev.semaphore.distributed.*

/**
 * Runs [script] as a client of another process would, without a handle: with [id], the operation's
 * own arguments ([rest], as [Script.argv] takes them), a configured total of [total], and [publish] as
 * the command that publishes grants (the settings of head.lua's ARGV; "EXISTS" loses them). Returns
 * the script's reply (an array, or an integer from a fast path).
 */
internal suspend fun RedisSemaphoreClient.raw(
    script: Script,
    name: String,
    id: String,
    vararg rest: String,
    total: Int = 1,
    publish: String = "PUBLISH",
): Any? = redis.run(script, redisKeys(name), script.argv(id, "86400000", total.toString(), publish, *rest))
