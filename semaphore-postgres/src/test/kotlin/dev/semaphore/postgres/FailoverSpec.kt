package dev.semaphore.postgres

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.comparables.shouldBeGreaterThan
import io.kotest.matchers.comparables.shouldBeLessThanOrEqualTo
import io.kotest.matchers.shouldBe
import java.sql.Connection
import java.sql.SQLException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.random.Random

/**
 * Failover (docs/postgres.md, "Failover"): a primary with a standby on loopback, the primary killed with `kill -9`
 * and the standby promoted. With a synchronous standby, under load: every grant a client was answered is on the new
 * primary with its token, never more permits held than the total, and tokens keep increasing; a grant made while
 * the standby cannot hear the primary is never answered. With an asynchronous standby, what can go wrong does: the
 * same cut-off standby, promoted, has lost grants that clients were answered, and grants their permits again.
 */
class FailoverSpec : FunSpec({
    val schema = PostgresSchema()
    val calls = TrackingCalls(schema)
    val idle = 600_000L
    val leaseMs = 600_000L // no lease ends by itself during a test: whatever is missing was lost by the failover

    /** A lease a client was answered: its request id, permits and token. */
    data class Held(val id: String, val permits: Int, val token: Long)

    fun grantsOn(c: Connection, name: String): Map<String, Held> {
        val rows = mutableMapOf<String, Held>()
        c.prepareStatement("SELECT id, permits, token FROM dsem_requests WHERE semaphore = ? AND state = 'G'").use { st ->
            st.setString(1, name)
            st.executeQuery().use { rs -> while (rs.next()) rows[rs.getString(1)] = Held(rs.getString(1), rs.getInt(2), rs.getLong(3)) }
        }
        return rows
    }

    test("synchronous standby, primary killed under load: every answered grant survives with its token, never more than the total, tokens go on increasing") {
        val primary = LocalPostgresServer.start("synchronous_standby_names=standby1")
        val standby = LocalPostgresServer.startStandby(primary, "standby1")
        try {
            primary.awaitStandby("standby1", sync = true)
            primary.connect().use { schema.create(it) }
            val name = "failover"
            val total = 3
            val held = ConcurrentHashMap<String, Held>() // answered, and no release sent
            val highest = java.util.concurrent.atomic.AtomicLong()
            val violations = CopyOnWriteArrayList<String>()
            val workers = (1..4).map { w ->
                Thread {
                    val random = Random(w)
                    val queued = mutableListOf<Pair<String, Int>>()
                    fun answered(id: String, permits: Int, place: Place) {
                        held[id] = Held(id, permits, place.token)
                        highest.accumulateAndGet(place.token, ::maxOf)
                        if (held.values.sumOf { it.permits } > total) violations += "more than $total permits answered as held"
                    }
                    try {
                        primary.connect().use { c ->
                            var i = 0
                            while (true) {
                                val id = "d$w-${i++}"
                                val permits = 1 + random.nextInt(2)
                                val place = calls.acquire(c, name, total, idle, id, permits, leaseMs, 60_000)
                                if (place.kind == 'G') answered(id, permits, place) else queued += id to permits
                                if (queued.isNotEmpty()) {
                                    val places = calls.heartbeat(c, name, idle, 60_000, queued.map { it.first })
                                    for ((qid, p) in queued.toList()) {
                                        val at = places.getValue(qid)
                                        if (at.kind == 'G') { queued.remove(qid to p); answered(qid, p, at) }
                                    }
                                }
                                val mine = held.values.filter { it.id.startsWith("d$w-") }
                                if (mine.isNotEmpty() && random.nextBoolean()) {
                                    val lease = mine[random.nextInt(mine.size)]
                                    held.remove(lease.id) // from here its outcome is unknown until answered
                                    calls.release(c, name, lease.id, lease.permits) ?: run { violations += "lease ${lease.id} was lost" }
                                }
                            }
                        }
                    } catch (e: SQLException) {
                        // The primary died under this call: its outcome is unknown, and nothing of it was answered.
                    }
                }.apply { start() }
            }
            Thread.sleep(1500)
            primary.kill()
            workers.forEach { it.join(30_000) }
            highest.get() shouldBeGreaterThan 20L // the load ran before the kill
            standby.promote()
            standby.connect().use { c ->
                val survived = grantsOn(c, name)
                // Every grant a client was answered (and did not release) is there, with its permits and token.
                for (lease in held.values) survived[lease.id] shouldBe lease
                survived.values.sumOf { it.permits } shouldBeLessThanOrEqualTo total
                calls.state(c, name, total, idle).let { it.available + survived.values.sumOf { l -> l.permits } shouldBe total }
                // The requests still queued belong to the workers, which are gone: their heartbeat deadlines pass (made
                // now rather than in a minute), and the next calls drop them from the line, at most 100 per call (P5).
                c.createStatement().use { it.executeUpdate("UPDATE dsem_requests SET deadline = clock_timestamp() WHERE state = 'Q'") }
                var calls_ = 0
                while (calls.state(c, name, total, idle).queued > 0) check(++calls_ < 100) { "the dead requests were not purged" }
                // New grants after the failover: never more than the total with the leases that survived, tokens higher.
                var granted = 0
                var n = 0
                while (true) {
                    val place = calls.acquire(c, name, total, idle, "af-${n++}", 1, leaseMs, null)
                    if (place.kind != 'G') break
                    place.token shouldBeGreaterThan highest.get()
                    granted++
                }
                val rows = c.createStatement().use { st ->
                    st.executeQuery("SELECT state, count(*) FROM dsem_requests GROUP BY state").use { rs ->
                        buildString { while (rs.next()) append("${rs.getString(1)}=${rs.getLong(2)} ") }
                    }
                }
                io.kotest.assertions.withClue("survived ${survived.values}, ${calls.state(c, name, total, idle)}, rows $rows") {
                    granted + survived.values.sumOf { it.permits } shouldBe total
                }
            }
            violations.shouldBeEmpty()
        } finally {
            standby.close()
            primary.close()
        }
    }

    test("synchronous standby cut off from the primary: a grant is not answered (its commit waits for the standby); the promoted standby has every answered one") {
        val primary = LocalPostgresServer.start("synchronous_standby_names=standby1")
        val link = TcpRelay(primary.port)
        val standby = LocalPostgresServer.startStandby(primary, "standby1", link.port)
        val pool = Executors.newSingleThreadExecutor()
        try {
            primary.awaitStandby("standby1", sync = true)
            primary.connect().use { schema.create(it) }
            val name = "cutoff-sync"
            val c = primary.connect()
            val before = calls.acquire(c, name, 2, idle, "a-1", 1, leaseMs, null)
            before.kind shouldBe 'G'
            link.cut()
            val during = pool.submit<Place> { primary.connect().use { calls.acquire(it, name, 2, idle, "a-2", 1, leaseMs, null) } }
            val answered = runCatching { during.get(1500, TimeUnit.MILLISECONDS) }
            (answered.exceptionOrNull() is TimeoutException) shouldBe true // not answered while the standby cannot have it
            // Its wait cancelled (a query timeout would do the same), PostgreSQL keeps the commit without the standby
            // and answers as if all were well, with a WARNING: the call reports an unknown outcome instead (08007).
            primary.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
            val cancelled = runCatching { during.get(10, TimeUnit.SECONDS) }.exceptionOrNull()
            ((cancelled?.cause as? SQLException)?.sqlState) shouldBe "08007"
            primary.kill()
            runCatching { c.close() }
            standby.promote()
            standby.connect().use { s ->
                val survived = grantsOn(s, name)
                survived["a-1"] shouldBe Held("a-1", 1, before.token)
                survived.keys shouldBe setOf("a-1") // a-2's grant, never confirmed by the standby, is not there
                calls.state(s, name, 2, idle).available shouldBe 2 - survived.values.sumOf { it.permits }
            }
        } finally {
            pool.shutdownNow()
            standby.close()
            link.close()
            primary.close()
        }
    }

    test("asynchronous standby cut off from the primary (what can go wrong, docs/postgres.md): grants answered on the primary are lost by the promotion, and their permits are granted again") {
        val primary = LocalPostgresServer.start() // no synchronous_standby_names: commits do not wait for the standby
        val link = TcpRelay(primary.port)
        val standby = LocalPostgresServer.startStandby(primary, "standby1", link.port)
        try {
            primary.awaitStandby("standby1", sync = false)
            primary.connect().use { schema.create(it) }
            primary.awaitReplayedBy(standby)
            val name = "cutoff-async"
            link.cut()
            val answered = primary.connect().use { c ->
                (1..2).map { i -> calls.acquire(c, name, 2, idle, "a-$i", 1, leaseMs, null).also { it.kind shouldBe 'G' } }
            }
            // A wake-up listener pointed at the standby (in recovery, it refuses LISTEN) keeps trying, and closes every
            // connection it made.
            val made = CopyOnWriteArrayList<Connection>()
            PostgresWakeups({ standby.connect().also { made += it } }, schema, "ffff", onMessage = { _, _, _ -> }, retryMs = 50).use { w ->
                Thread.sleep(600)
                w.awaitListening(0) shouldBe false
            }
            (made.size > 3) shouldBe true
            made.filterNot { it.isClosed }.shouldBeEmpty()
            primary.kill()
            standby.promote()
            standby.connect().use { s ->
                // The promoted standby never heard of the two answered grants: it grants their permits again.
                grantsOn(s, name).keys shouldBe emptySet()
                val again = (1..2).map { i -> calls.acquire(s, name, 2, idle, "b-$i", 1, leaseMs, null) }
                again.map { it.kind } shouldBe listOf('G', 'G') // 4 holders of 2 permits: over-admission
                // And fencing tokens went back: the new grants' tokens are not above those answered before.
                again.maxOf { it.token } shouldBeLessThanOrEqualTo answered.maxOf { it.token }
            }
        } finally {
            standby.close()
            link.close()
            primary.close()
        }
    }
})
