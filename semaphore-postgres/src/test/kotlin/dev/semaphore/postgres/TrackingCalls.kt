package dev.semaphore.postgres

import dev.semaphore.distributed.spi.RequestRef

import java.sql.Connection
import java.util.concurrent.ConcurrentHashMap

/**
 * The client's calls ([PostgresCalls]), named by request id as the tests write them: the slot of each id (P10) is
 * kept from the server's answers, as the client keeps it in its lease.
 */
internal class TrackingCalls(schema: PostgresSchema) {
    private val calls = PostgresCalls(schema)
    private val slots = ConcurrentHashMap<String, Int>()

    private fun ref(id: String) = RequestRef(id, slots[id] ?: 0)

    internal fun acquire(
        c: Connection, name: String, total: Int, idleMs: Long, id: String, permits: Int, leaseMs: Long, ttlMs: Long?,
        retry: Boolean = false,
    ): Place = calls.acquire(c, name, total, idleMs, id, permits, leaseMs, ttlMs, retry).also { if (it.slot > 0) slots[id] = it.slot }

    internal fun heartbeat(c: Connection, name: String, idleMs: Long, ttlMs: Long, ids: List<String>): Map<String, Place> =
        calls.heartbeat(c, name, idleMs, ttlMs, ids.map(::ref))

    fun release(c: Connection, name: String, id: String, permits: Int): Long? = calls.release(c, name, ref(id), permits)

    internal fun renew(c: Connection, name: String, idleMs: Long, id: String, permits: Int, leaseMs: Long): Place =
        calls.renew(c, name, idleMs, ref(id), permits, leaseMs)

    internal fun cancel(c: Connection, name: String, idleMs: Long, id: String, permits: Int, handBack: Boolean): Place =
        calls.cancel(c, name, idleMs, ref(id), permits, handBack)

    /** A withdrawal sent before the request's answer came back: the client does not know its slot yet (slot 0). */
    internal fun cancelUnanswered(c: Connection, name: String, idleMs: Long, id: String, permits: Int, handBack: Boolean): Place =
        calls.cancel(c, name, idleMs, RequestRef(id), permits, handBack)

    fun resize(c: Connection, name: String, total: Int, idleMs: Long, resizeId: String, mode: String, n: Int): Int =
        calls.resize(c, name, total, idleMs, resizeId, mode, n)

    internal fun state(c: Connection, name: String, total: Int, idleMs: Long): SemaphoreState = calls.state(c, name, total, idleMs)

    fun delete(c: Connection, name: String) = calls.delete(c, name)

    fun sweep(c: Connection, limit: Int): Int = calls.sweep(c, limit)

    internal fun inspect(c: Connection, name: String, limit: Int): Inspected? = calls.inspect(c, name, limit)

    /** The slot the server gave request [id]. */
    fun slotOf(id: String): Int = slots.getValue(id)
}
