package dev.semaphore.redis

/**
 * Runs [script] as a client of another process would, without a handle: with [id], the arguments
 * after the common ones ([rest]), a configured total of [total], and [channel] for the grants
 * (head.lua's ARGV). Returns the script's reply (an array).
 */
internal suspend fun RedisSemaphoreClient.raw(
    script: Script,
    name: String,
    id: String,
    vararg rest: String,
    total: Int = 1,
    channel: String = wakeChannel(name),
): List<Any?> = run(script, redisKeys(name), arrayOf(total.toString(), channel, id, "86400000", "PUBLISH", *rest))
