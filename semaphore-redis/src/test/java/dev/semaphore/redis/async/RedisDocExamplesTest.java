package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.ListenerRegistration;
import dev.semaphore.distributed.LeaseInfo;
import dev.semaphore.distributed.LeaseLostException;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.distributed.LeaseListener;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Java examples of docs/redis.md ("Connecting", "Events and metrics"), run on a real server: each is the text between
 * an "// example: NAME" line and the next "// end" line, which EventsDocExamplesSpec finds verbatim in the
 * document.
 */
class RedisDocExamplesTest {
    private static LocalRedisServer server;
    private static RedisSemaphoreClient client;

    /** What the examples log to. */
    private static final class Log {
        final List<String> lines = new CopyOnWriteArrayList<>();

        void error(String message) {
            lines.add("ERROR " + message);
        }
    }

    private final Log log = new Log();

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

    @Test
    void listenerJava() throws Exception {
        // example: listener-java
        ListenerRegistration registration = client.addListener(new LeaseListener() {
            @Override
            public void onLeaseLost(LeaseInfo lease, LeaseLostException cause) {
                log.error("lost " + lease.semaphoreName() + " (token " + lease.fencingToken() + "): " + cause.getMessage());
            }
        });
        // end
        try {
            AsyncDistributedSemaphore reports = AsyncDistributedSemaphore.create(client, "java-reports", 1,
                    new DistributedConfig().withLeaseTime(Duration.ofMillis(300)).withAutoRenew(false));
            DistributedPermit permit = reports.acquireBlocking();
            ExecutionException ended = assertThrows(ExecutionException.class, () -> permit.ended().get(5, TimeUnit.SECONDS));
            assertInstanceOf(LeaseLostException.class, ended.getCause());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (log.lines.isEmpty() && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(1, log.lines.size());
            assertTrue(log.lines.get(0).startsWith("ERROR lost java-reports (token " + permit.fencingToken() + "): "), log.lines.get(0));
        } finally {
            registration.close();
        }
    }

    @Test
    void lettuceClientJava() throws Exception {
        String address = "redis://127.0.0.1:" + server.getPort();
        // example: lettuce-client-java
        ClientResources resources = DefaultClientResources.builder()
            .reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
            .build();
        RedisClient lettuce = RedisClient.create(resources, RedisURI.create(address));
        // end
        try (RedisSemaphoreClient ours = RedisSemaphoreClient.connect(lettuce)) {
            AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(ours, "through-lettuce", 1); // the default timings fit
            try (DistributedPermit permit = s.acquireBlocking()) {
                assertTrue(permit.fencingToken() > 0);
            }
        } finally {
            lettuce.shutdown();
            resources.shutdown();
        }
    }

    @Test
    void metricsJava() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        // example: metrics-java
        AsyncDistributedSemaphore db = AsyncDistributedSemaphore.create(client, "db", 8);
        DistributedSemaphoreMetrics metrics = DistributedSemaphoreMetrics.of(db.asKotlin()).refreshEvery(Duration.ofSeconds(5));
        metrics.bindTo(registry);
        // end
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Double.isNaN(registry.get(DistributedSemaphoreMetrics.PERMITS_LIMIT).gauge().value()) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(8.0, registry.get(DistributedSemaphoreMetrics.PERMITS_LIMIT).tag("name", "db").gauge().value());
        } finally {
            metrics.close();
        }
        assertTrue(registry.getMeters().isEmpty());
    }
}
