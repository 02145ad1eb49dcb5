/*
 * What the Redis engine sends: the Lua scripts (one per operation, built from the resources head.lua, lib.lua and the
 * operation's own file).
 */
package dev.semaphore.redis

import java.security.MessageDigest

/**
 * One Lua script: head.lua, then the operation's text with lib.lua in place of its line
 * `-- [lib.lua]` (what comes before that line is the operation's fast path), or at its start; a
 * read-only operation ([withLib] false: no purge, no creation) is head.lua and its text alone.
 */
internal class Script private constructor(operation: String, val integerReplies: Boolean = false, withLib: Boolean = true) {
    val text: String = head + when {
        !withLib -> operation
        LIB_MARK in operation -> operation.replace(LIB_MARK, lib)
        else -> lib + operation
    }
    val sha: String = MessageDigest.getInstance("SHA-1").digest(text.toByteArray()).joinToString("") { "%02x".format(it) }

    /**
     * This operation's ARGV (head.lua): [id], then [own], its own arguments in the order its file lists
     * them, and last the settings, "idleMs total publish" (read by slow paths only). An acquire's own are
     * (permits, leaseMs, heartbeatMs, "queue" or "try"): it sends permits, leaseMs, the idle time (for its
     * fast path) and the settings followed by the heartbeat ms or "try", 5 entries in all, as a release
     * sends 4: Redis grows its ARGV table one power of two at a time, so every entry past 4 costs a resize.
     */
    fun argv(id: String, idleMs: String, total: String, publish: String, vararg own: String): Array<String> {
        val settings = "$idleMs $total $publish"
        return if (this === acquire) {
            arrayOf(id, own[0], own[1], idleMs, "$settings ${if (own[3] == "try") "try" else own[2]}")
        } else {
            arrayOf(id, *own, settings)
        }
    }

    companion object {
        private const val LIB_MARK = "-- [lib.lua]\n"

        private fun resource(name: String): String =
            Script::class.java.getResource(name)?.readText() ?: error("missing script resource $name")

        private val head = resource("head.lua")
        private val lib = resource("lib.lua")

        val acquire = Script(resource("acquire.lua"), integerReplies = true)
        val heartbeat = Script(resource("heartbeat.lua"))
        val cancel = Script(resource("cancel.lua"))
        val release = Script(resource("release.lua"), integerReplies = true)
        val renew = Script(resource("renew.lua"))
        val state = Script(resource("state.lua"))
        val resize = Script(resource("resize.lua"))
        val delete = Script(resource("delete.lua"))
        val inspect = Script(resource("inspect.lua"), withLib = false)
    }
}

