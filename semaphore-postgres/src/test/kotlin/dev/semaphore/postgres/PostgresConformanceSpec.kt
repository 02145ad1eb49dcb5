package dev.semaphore.postgres

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.conformance.DistributedConformanceSpec
import dev.semaphore.distributed.conformance.ServerUnderTest

/** The conformance suite (semaphore-distributed's test jar) on a real PostgreSQL server. */
class PostgresConformanceSpec : DistributedConformanceSpec({
    object : ServerUnderTest {
        val server = LocalPostgresServer.start()
        override val engine = "postgres"
        override fun client(): DistributedSemaphoreClient = PostgresSemaphoreClient.connect(server.url)
        override val url: String get() = server.url
        override val clientClass: String = PostgresSemaphoreClient::class.java.name
        override fun close() = server.close()
    }
})
