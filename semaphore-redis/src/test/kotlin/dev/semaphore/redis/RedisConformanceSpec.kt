package dev.semaphore.redis

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.conformance.DistributedConformanceSpec
import dev.semaphore.distributed.conformance.ServerUnderTest

/** The conformance suite (semaphore-distributed's test jar) on a real redis-server. */
class RedisConformanceSpec : DistributedConformanceSpec({
    object : ServerUnderTest {
        val server = LocalRedisServer.start()
        override val engine = "redis"
        override fun client(): DistributedSemaphoreClient = RedisSemaphoreClient.connect(server.uri)
        override val url: String get() = server.uri
        override val clientClass: String = RedisSemaphoreClient::class.java.name
        override fun close() = server.close()
    }
})
