/*
 * The wake-ups (P7 in docs/postgres-protocol.md): one connection per client LISTENs on the client's own channel, and
 * one thread reads what arrives. The connection is the client's only long-lived one, and the only one that cannot go
 * through PgBouncer in transaction mode (LISTEN is a session's).
 */
package dev.semaphore.postgres

import org.postgresql.PGConnection
import java.sql.Connection
import java.util.concurrent.TimeUnit

/**
 * Listens on the channel of client [clientId] and tells [onMessage] each notification: (semaphore, request id, the
 * rest: "slot:permits:token:remainingMs" for a grant, "slot:E:toolarge:total" for a failure). When the connection is lost it
 * connects again (after [retryMs]) and calls [onReconnect] once listening again: messages sent meanwhile are lost,
 * and the waiters must ask the server (their heartbeats do so anyway, which bounds the delay of a lost message by one
 * heartbeat interval). Runs on one daemon thread until [close].
 */
internal class PostgresWakeups(
    private val connect: () -> Connection,
    schema: PostgresSchema,
    clientId: String,
    private val onMessage: (semaphore: String, id: String, rest: String) -> Unit,
    private val onReconnect: () -> Unit = {},
    private val retryMs: Long = 200,
) : AutoCloseable {
    private val channel = schema.channel(clientId)

    @Volatile
    private var closed = false

    @Volatile
    private var connection: Connection? = null

    /** Counted down once the first LISTEN is in place, so that no grant published after [awaitListening] is missed. */
    private val listening = java.util.concurrent.CountDownLatch(1)

    /** How many times the connection was set up (1 after the first LISTEN). */
    @Volatile
    var connects: Int = 0
        private set

    private val thread = Thread(::run, "semaphore-postgres-wakeups-$clientId").apply { isDaemon = true; start() }

    /** Waits at most [ms] for the first LISTEN to be in place; true if it is. */
    fun awaitListening(ms: Long): Boolean = listening.await(ms, TimeUnit.MILLISECONDS)

    private fun run() {
        while (!closed) {
            val c = try {
                connect().also { c ->
                    c.autoCommit = true
                    c.createStatement().use { it.execute("LISTEN \"$channel\"") }
                }
            } catch (e: Exception) {
                if (!closed) Thread.sleep(retryMs)
                continue
            }
            connection = c
            connects++
            if (closed) break
            if (connects > 1) runCatching(onReconnect)
            listening.countDown()
            try {
                val pg = c.unwrap(PGConnection::class.java)
                while (!closed) {
                    val notifications = pg.getNotifications(500) ?: continue
                    for (n in notifications) deliver(n.parameter)
                }
            } catch (e: Exception) {
                // The connection broke (or close() closed it): connect again unless closed.
            } finally {
                runCatching { c.close() }
                connection = null
            }
            if (!closed) Thread.sleep(retryMs)
        }
    }

    private fun deliver(payload: String) {
        val tab = payload.indexOf('\t')
        val colon = payload.indexOf(':', tab + 1)
        if (tab < 0 || colon < 0) return
        runCatching { onMessage(payload.substring(0, tab), payload.substring(tab + 1, colon), payload.substring(colon + 1)) }
    }

    /** Drops the connection (as a network fault would); the thread connects again. For tests of the fallback. */
    internal fun dropConnection() {
        runCatching { connection?.close() }
    }

    override fun close() {
        closed = true
        runCatching { connection?.close() }
        thread.join(2000)
    }
}
