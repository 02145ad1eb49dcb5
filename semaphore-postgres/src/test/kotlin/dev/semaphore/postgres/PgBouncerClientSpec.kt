package dev.semaphore.postgres

import dev.semaphore.distributed.withPermit
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import java.util.concurrent.atomic.AtomicInteger

/**
 * The client behind PgBouncer in transaction mode (docs/postgres.md, "Connections"): its statements through PgBouncer
 * (pgjdbc with `prepareThreshold=0`), its `LISTEN` on a direct URL (`PostgresSettings.withListenUrl`), as the docs tell
 * a user to set it up. Two clients of pool size 4 share 2 server connections; waiters are woken by their notifications.
 */
class PgBouncerClientSpec : FunSpec({
    test("two clients through PgBouncer in transaction mode, LISTEN direct: fair, never over the total, every waiter woken") {
        LocalPostgresServer.start().use { server ->
            LocalPgBouncer(server, poolSize = 2).use { bouncer ->
                val settings = PostgresSettings().withListenUrl(server.url)
                val clients = (1..2).map { PostgresSemaphoreClient.connect(bouncer.url(prepareThreshold = 0), settings) }
                try {
                    val inside = AtomicInteger()
                    val peak = AtomicInteger()
                    val tokens = java.util.concurrent.ConcurrentLinkedQueue<Long>()
                    coroutineScope {
                        (0 until 20).map { i ->
                            async {
                                clients[i % 2].semaphore("bounced", 2).withPermit { lease ->
                                    peak.accumulateAndGet(inside.incrementAndGet(), ::maxOf)
                                    tokens += lease.fencingToken
                                    delay(20)
                                    inside.decrementAndGet()
                                }
                            }
                        }.awaitAll()
                    }
                    peak.get() shouldBeLessThanOrEqual 2
                    tokens.size shouldBe 20
                    tokens.toSet().size shouldBe 20
                    val s = clients[0].semaphore("bounced", 2)
                    listOf(s.availablePermits(), s.queueLength()) shouldContainExactly listOf(2, 0)
                    // The waiters were woken by NOTIFY on the direct connections, not by their heartbeats alone.
                    clients.sumOf { it.postgres.wakeups.delivered.get() } shouldBeGreaterThan 0L
                } finally {
                    clients.forEach { it.close() }
                }
            }
        }
    }
})
