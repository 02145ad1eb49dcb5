/*
 * The client's side of the wire: one method per function of schema.sql, each one statement (one round trip, one
 * short transaction in autocommit mode), and the answers read into places. What each answer means to the client is
 * docs/postgres-protocol.md's; these methods only carry them.
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.postgres

import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.RequestRef
import java.sql.Connection
import java.sql.ResultSet
import java.sql.SQLException
import java.sql.Types

/**
 * Where a request is, as the server answered (schema.sql, `place`): [kind] 'G' granted ([permits], fencing [token],
 * [remainingMs] of its lease by the server's clock), 'Q' queued (its queue [number]), 'B' busy (a try that did not
 * fit), 'E' failed (too large after a reduction), 'U' unknown (ended, or never known). [total] is the semaphore's
 * total when the server knew it, else -1. [slot] is the request's row (P10), which every later call about it names.
 */
internal data class Place(
    val kind: Char,
    val permits: Int = 0,
    val token: Long = 0,
    val remainingMs: Long = 0,
    val total: Int = -1,
    val number: Long = 0,
    val slot: Int = 0,
) {
    companion object {
        fun read(rs: ResultSet, from: Int = 1): Place = Place(
            kind = rs.getString(from)[0],
            permits = rs.getInt(from + 1),
            token = rs.getLong(from + 2),
            remainingMs = rs.getLong(from + 3),
            total = rs.getInt(from + 4).let { if (rs.wasNull()) -1 else it },
            number = rs.getLong(from + 5),
            slot = rs.getInt(from + 6),
        )
    }
}


/** (available, queued, total) of a semaphore (schema.sql, `state`). */
internal data class SemaphoreState(val available: Int, val queued: Int, val total: Int)

/** One row of an inspection (schema.sql, `inspect`). */
internal data class InspectedRequest(val id: String, val permits: Int, val token: Long, val ms: Long)

/** What `inspect` answered: null counts if the server has no such semaphore. */
internal data class Inspected(
    val total: Int,
    val holderCount: Long,
    val heldPermits: Long,
    val queuedCount: Long,
    val holders: List<InspectedRequest>,
    val queued: List<InspectedRequest>,
)

/** The functions of schema.sql, called on a connection the caller owns (autocommit on). */
internal class PostgresCalls(private val schema: PostgresSchema) {
    private val acquireSql = "SELECT * FROM ${schema.qualified("acquire")}(?, ?, ?, ?, ?, ?, ?, ?)"
    private val heartbeatSql = "SELECT * FROM ${schema.qualified("heartbeat")}(?, ?, ?, ?, ?)"
    private val releaseSql = "SELECT ${schema.qualified("release")}(?, ?, ?, ?)"
    private val renewSql = "SELECT * FROM ${schema.qualified("renew")}(?, ?, ?, ?, ?, ?)"
    private val cancelSql = "SELECT * FROM ${schema.qualified("cancel")}(?, ?, ?, ?, ?, ?)"
    private val resizeSql = "SELECT ${schema.qualified("resize")}(?, ?, ?, ?, ?, ?)"
    private val stateSql = "SELECT * FROM ${schema.qualified("state")}(?, ?, ?)"
    private val deleteSql = "SELECT ${schema.qualified("delete")}(?)"
    private val sweepSql = "SELECT ${schema.qualified("sweep")}(?)"
    private val inspectSql = "SELECT * FROM ${schema.qualified("inspect")}(?, ?)"

    /**
     * Asks for [permits] permits of [name] (created with [total] if the server has none) for request [id]: a lease of
     * [leaseMs] if granted; if not, a place in line with a heartbeat deadline [ttlMs] from now, or, for a try
     * ([ttlMs] null), 'B'. [retry]: this request may have reached the server already (P6); the server looks for it.
     * @throws IllegalArgumentException if [permits] is more than the server's total (nothing queued).
     */
    fun acquire(
        c: Connection, name: String, total: Int, idleMs: Long, id: String, permits: Int, leaseMs: Long, ttlMs: Long?,
        retry: Boolean = false,
    ): Place = call(c, acquireSql) { st ->
        st.setString(1, name); st.setInt(2, total); st.setLong(3, idleMs); st.setString(4, id)
        st.setInt(5, permits); st.setLong(6, leaseMs)
        if (ttlMs == null) st.setNull(7, Types.BIGINT) else st.setLong(7, ttlMs)
        st.setBoolean(8, retry)
        st.executeQuery().use { rs -> rs.next(); Place.read(rs) }
    }

    /** Keeps [requests] (queued requests of [name]) in line [ttlMs] longer and answers where each is, by id. */
    fun heartbeat(c: Connection, name: String, idleMs: Long, ttlMs: Long, requests: List<RequestRef>): Map<String, Place> =
        call(c, heartbeatSql) { st ->
            st.setString(1, name); st.setLong(2, idleMs); st.setLong(3, ttlMs)
            st.setArray(4, c.createArrayOf("text", requests.map { it.id }.toTypedArray()))
            st.setArray(5, c.createArrayOf("integer", requests.map { it.slot }.toTypedArray()))
            st.executeQuery().use { rs ->
                val places = LinkedHashMap<String, Place>()
                while (rs.next()) places[rs.getString(1)] = Place.read(rs, 2)
                places
            }
        }

    /** Ends lease [lease]: the last fencing token granted before the release, or null if the server has no such lease. */
    fun release(c: Connection, name: String, lease: RequestRef, permits: Int): Long? = call(c, releaseSql) { st ->
        st.setString(1, name); st.setString(2, lease.id); st.setInt(3, lease.slot); st.setInt(4, permits)
        st.executeQuery().use { rs -> rs.next(); rs.getLong(1).takeUnless { rs.wasNull() } }
    }

    /** Extends live lease [lease] by [leaseMs] from now: 'G' with its new time, or 'U' if it had ended. */
    fun renew(c: Connection, name: String, idleMs: Long, lease: RequestRef, permits: Int, leaseMs: Long): Place =
        call(c, renewSql) { st ->
            st.setString(1, name); st.setLong(2, idleMs); st.setString(3, lease.id); st.setInt(4, lease.slot)
            st.setInt(5, permits); st.setLong(6, leaseMs)
            st.executeQuery().use { rs -> rs.next(); Place.read(rs) }
        }

    /**
     * Withdraws [request]: 'U' once it left the line or its grant was handed back ([handBack]); a grant that won the
     * race is answered ('G') when not [handBack].
     */
    fun cancel(c: Connection, name: String, idleMs: Long, request: RequestRef, permits: Int, handBack: Boolean): Place =
        call(c, cancelSql) { st ->
            st.setString(1, name); st.setLong(2, idleMs); st.setString(3, request.id); st.setInt(4, request.slot)
            st.setInt(5, permits); st.setBoolean(6, handBack)
            st.executeQuery().use { rs -> rs.next(); Place.read(rs) }
        }

    /**
     * Changes [name]'s total ([mode] "add", "reduce" or "set" by or to [n]) once per [resizeId]; the new total.
     * @throws IllegalArgumentException if the total would leave 0..Int.MAX_VALUE.
     */
    fun resize(c: Connection, name: String, total: Int, idleMs: Long, resizeId: String, mode: String, n: Int): Int =
        call(c, resizeSql) { st ->
            st.setString(1, name); st.setInt(2, total); st.setLong(3, idleMs); st.setString(4, resizeId)
            st.setString(5, mode); st.setInt(6, n)
            st.executeQuery().use { rs -> rs.next(); rs.getInt(1) }
        }

    fun state(c: Connection, name: String, total: Int, idleMs: Long): SemaphoreState = call(c, stateSql) { st ->
        st.setString(1, name); st.setInt(2, total); st.setLong(3, idleMs)
        st.executeQuery().use { rs -> rs.next(); SemaphoreState(rs.getInt(1), rs.getInt(2), rs.getInt(3)) }
    }

    /** @throws IllegalStateException if permits are held or requests queued (nothing changes). */
    fun delete(c: Connection, name: String) {
        call(c, deleteSql, name) { st -> st.setString(1, name); st.executeQuery().close() }
    }

    /** Deletes up to [limit] idle semaphores; how many. */
    fun sweep(c: Connection, limit: Int): Int = call(c, sweepSql) { st ->
        st.setInt(1, limit)
        st.executeQuery().use { rs -> rs.next(); rs.getInt(1) }
    }

    /** Who holds and who waits, at most [limit] of each; null if the server has no such semaphore. */
    fun inspect(c: Connection, name: String, limit: Int): Inspected? = call(c, inspectSql) { st ->
        st.setString(1, name); st.setInt(2, limit)
        st.executeQuery().use { rs ->
            var head: Inspected? = null
            val holders = mutableListOf<InspectedRequest>()
            val queued = mutableListOf<InspectedRequest>()
            while (rs.next()) {
                val row = InspectedRequest(rs.getString(2), rs.getInt(3), rs.getLong(4), rs.getLong(5))
                when (rs.getString(1)) {
                    "S" -> head = Inspected(rs.getInt(6), rs.getLong(7), rs.getLong(8), rs.getLong(9), holders, queued)
                    "G" -> holders += row
                    "Q" -> queued += row
                }
            }
            head
        }
    }

    /**
     * Runs one statement, in autocommit mode (each function is its own transaction: in a caller's open transaction,
     * its grants would not count until that committed, and a rollback would undo grants already answered). The
     * server's refusals that mean misuse become the standard exceptions (schema.sql raises 22023 "PERMITS ..." or
     * "INPUT ..." for bad input, 55006 "IN_USE ..." for a delete of a used semaphore).
     * @throws SQLException with SQLSTATE 08007 (transaction resolution unknown) if the statement's commit waited for
     *   a synchronous standby and that wait was cancelled: PostgreSQL then keeps the commit without the standby's
     *   confirmation and answers as if nothing happened (a WARNING), so the answer may not survive a failover.
     */
    private inline fun <T> call(c: Connection, sql: String, body: (java.sql.PreparedStatement) -> T): T = call(c, sql, null, body)

    /** [call], with the semaphore's [name] for the message of a refused delete. */
    private inline fun <T> call(c: Connection, sql: String, name: String?, body: (java.sql.PreparedStatement) -> T): T {
        check(c.autoCommit) { "semaphore calls run in autocommit mode, each its own transaction; this connection has autocommit off" }
        try {
            return c.prepareStatement(sql).use { st ->
                val answer = body(st)
                var warning = st.warnings
                while (warning != null) {
                    if (warning.message.orEmpty().contains("canceling wait for synchronous replication")) {
                        throw SQLException(
                            "the commit of this call was not confirmed by the synchronous standby (its wait was cancelled): " +
                                "its outcome may not survive a failover",
                            "08007", warning,
                        )
                    }
                    warning = warning.nextWarning
                }
                answer
            }
        } catch (e: SQLException) {
            val message = e.serverErrorMessage()
            when {
                e.sqlState == "22023" && message.startsWith("PERMITS ") -> throw IllegalArgumentException(message.removePrefix("PERMITS "), e)
                e.sqlState == "22023" && message.startsWith("INPUT ") -> throw IllegalArgumentException(message.removePrefix("INPUT "), e)
                e.sqlState == "55006" && message.startsWith("IN_USE ") ->
                    throw IllegalStateException("the semaphore $name is in use: ${message.removePrefix("IN_USE ")}", e)
                else -> throw e
            }
        }
    }

    private fun SQLException.serverErrorMessage(): String =
        (this as? org.postgresql.util.PSQLException)?.serverErrorMessage?.message ?: message.orEmpty()
}
