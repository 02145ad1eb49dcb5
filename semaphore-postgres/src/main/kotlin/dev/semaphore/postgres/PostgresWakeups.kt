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

    /**
     * When the current connection's LISTEN was in place; null while there is none (connecting, or after a drop).
     * Notifications sent while it is null are lost: a request queued then asks the server once where it is.
     */
    @Volatile
    var listeningSince: kotlin.time.TimeMark? = null
        private set

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
                connect()
            } catch (e: Exception) {
                pause()
                continue
            }
            try {
                c.autoCommit = true
                c.createStatement().use { it.execute("LISTEN \"$channel\"") }
                connection = c
                listeningSince = kotlin.time.TimeSource.Monotonic.markNow()
                connects++
                if (closed) continue // close() may have missed it: the finally below closes it
                if (connects > 1) runCatching(onReconnect)
                listening.countDown()
                val pg = c.unwrap(PGConnection::class.java)
                var quietSince = System.nanoTime()
                while (!closed) {
                    val notifications = pg.getNotifications(500)
                    if (!notifications.isNullOrEmpty()) {
                        quietSince = System.nanoTime()
                        for (n in notifications) deliver(n.parameter)
                    } else if (System.nanoTime() - quietSince > PROBE_AFTER_NANOS) {
                        // A connection whose peer vanished without a reset (a partition, a moved address) would wait
                        // for ever: a short query finds out, and a failed one makes us connect again.
                        if (!c.isValid(PROBE_TIMEOUT_SECONDS)) break
                        quietSince = System.nanoTime()
                    }
                }
            } catch (e: Exception) {
                // LISTEN failed (a standby in recovery refuses it), or the connection broke, or close() closed it.
            } finally {
                listeningSince = null
                runCatching { c.close() } // every connection made here is closed here, whatever happened
                connection = null
            }
            pause()
        }
    }

    private fun pause() {
        if (closed) return
        try {
            Thread.sleep(retryMs)
        } catch (e: InterruptedException) {
            // close() does not interrupt; an interrupt from elsewhere only shortens the pause.
        }
    }

    /** How many notifications arrived (for tests: waiters are woken by them, not only by their heartbeats). */
    val delivered = java.util.concurrent.atomic.AtomicLong()

    private fun deliver(payload: String) {
        delivered.incrementAndGet()
        val tab = payload.indexOf('\t')
        val colon = payload.indexOf(':', tab + 1)
        if (tab < 0 || colon < 0) return
        runCatching { onMessage(payload.substring(0, tab), payload.substring(tab + 1, colon), payload.substring(colon + 1)) }
    }

    /** Drops the connection (as a network fault would); the thread connects again. For tests of the fallback. */
    internal fun dropConnection() {
        runCatching { connection?.close() }
    }

    private companion object {
        /** How long the connection may be quiet before a probe checks it (a half-open connection hears nothing). */
        const val PROBE_AFTER_NANOS = 5_000_000_000L
        const val PROBE_TIMEOUT_SECONDS = 2
    }

    override fun close() {
        closed = true
        runCatching { connection?.close() }
        // Not on the thread itself (Engine.close): a caller without a dispatcher whose grant this thread delivered
        // continues here, and would wait the 2 s for itself; the loop ends by itself once that caller returns.
        if (Thread.currentThread() !== thread) thread.join(2000)
    }
}
