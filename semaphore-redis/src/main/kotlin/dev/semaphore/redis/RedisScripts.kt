/*
 * What the client sends and how it names its requests: the Lua scripts (one per operation, built from
 * the resources head.lua, lib.lua and the operation's own file), the lease a grant's reply describes,
 * and the request ids ("clientId-n/name") that an inspection reads the client back from.
 */
package dev.semaphore.redis

import java.security.MessageDigest
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.TimeMark

/**
 * One Lua script: head.lua, then the operation's text with lib.lua in place of its line
 * "-- [lib.lua]" (what comes before that line is the operation's fast path), or at its start; a
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

/** A grant's lease from a place reply {"G", permits, token, remainingMs, ...} (head.lua), its expiry counted from [anchor]. */
internal fun leaseOf(semaphore: String, id: String, place: List<Any?>, anchor: TimeMark): Lease =
    Lease(semaphore, id, (place[1] as Long).toInt(), place[2] as Long, anchor + (place[3] as Long).milliseconds)

/**
 * Request ids, "clientId-n/name" (head.lua): [RedisSemaphoreClient.newRequestId] makes them, and an
 * inspection reads the client back from them. The name is encoded so that the id has no ':' (the
 * scripts' separator in lx members and grant messages), ',' (between grant messages) or space (the
 * resize ids): those become %3A, %2C and %20, and '%' %25.
 */
internal object RequestIds {
    /** The longest client name. */
    const val MAX_NAME = 64

    private val ID = Regex("^([0-9a-f]+)-\\d+(?:/(.*))?$")

    /**
     * [name] if it is a valid client name: 1 to [MAX_NAME] characters from '!' to '~' (what Redis's
     * `CLIENT SETNAME` accepts, without spaces).
     * @throws IllegalArgumentException otherwise, naming it.
     */
    fun checkName(name: String): String {
        require(name.length in 1..MAX_NAME && name.all { it in '!'..'~' }) {
            "a client name must be 1 to $MAX_NAME characters from '!' to '~' (no spaces), was \"$name\""
        }
        return name
    }

    fun encodeName(name: String): String =
        name.replace("%", "%25").replace(":", "%3A").replace(",", "%2C").replace(" ", "%20")

    fun decodeName(encoded: String): String =
        Regex("%(25|3A|2C|20)").replace(encoded) { m -> m.groupValues[1].toInt(16).toChar().toString() }

    /** The client id and name in [requestId]: (id, name); the whole id and null if it is not one of ours. */
    fun clientOf(requestId: String): Pair<String, String?> {
        val match = ID.matchEntire(requestId) ?: return requestId to null
        return match.groupValues[1] to match.groups[2]?.value?.let(::decodeName)
    }

    /** "pid@host" of this JVM, for a client whose connections have no name; "pid" if the host is not found. */
    val defaultName: String by lazy {
        val pid = ProcessHandle.current().pid().toString()
        val host = sequenceOf(
            { System.getenv("HOSTNAME") },
            { System.getenv("COMPUTERNAME") },
            { java.io.File("/etc/hostname").takeIf { it.isFile }?.readText() },
        ).mapNotNull { runCatching(it).getOrNull()?.filter { c -> c in '!'..'~' } }.firstOrNull { it.isNotEmpty() }
        if (host == null) pid else "$pid@$host".take(MAX_NAME)
    }
}
