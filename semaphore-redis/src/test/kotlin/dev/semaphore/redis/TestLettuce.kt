package dev.semaphore.redis

import dev.semaphore.distributed.*

import io.lettuce.core.resource.ClientResources
import io.lettuce.core.resource.DefaultClientResources
import io.lettuce.core.resource.Delay
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * Lettuce resources as an application builds them for a Lettuce client it passes to RedisSemaphoreClient.connect
 * (C1 in docs/redis-protocol.md): a reconnect delay that grows from 10 ms to at most 100 ms, short enough for every
 * lease timing the tests use. Shut them down after the client.
 */
fun quickReconnects(): ClientResources = DefaultClientResources.builder()
    .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(100), 2, TimeUnit.MILLISECONDS))
    .build()
