package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** DistributedSemaphoreMetrics as a Java caller binds it: through {@code asKotlin()}, with a period and a tag. */
class RedisMetricsTest {
    private static LocalRedisServer server;
    private static RedisSemaphoreClient client;

    @BeforeAll
    static void start() {
        server = LocalRedisServer.Companion.start(false);
        client = RedisSemaphoreClient.connect(server.getUri());
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
    }

    private static double gauge(MeterRegistry registry, String meter) {
        return registry.get(meter).tags("kind", "DistributedSemaphore", "name", "java-db", "region", "eu").gauge().value();
    }

    @Test
    void gaugesOfAJavaSemaphore() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        AsyncDistributedSemaphore db = AsyncDistributedSemaphore.create(client, "java-db", 4);
        try (DistributedSemaphoreMetrics metrics = DistributedSemaphoreMetrics.of(db.asKotlin())
                .refreshEvery(Duration.ofMillis(200))
                .tag("region", "eu")) {
            metrics.bindTo(registry);
            try (DistributedPermit permit = db.acquireBlocking(3)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (gauge(registry, DistributedSemaphoreMetrics.PERMITS_HELD) != 3.0 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertEquals(3.0, gauge(registry, DistributedSemaphoreMetrics.PERMITS_HELD));
                assertEquals(1.0, gauge(registry, DistributedSemaphoreMetrics.PERMITS_AVAILABLE));
                assertEquals(4.0, gauge(registry, DistributedSemaphoreMetrics.PERMITS_LIMIT));
                assertEquals(1.0, gauge(registry, DistributedSemaphoreMetrics.HOLD_ACTIVE));
                assertEquals(3, permit.permits());
            }
        }
        assertTrue(registry.getMeters().isEmpty(), registry.getMeters().toString());
    }
}
