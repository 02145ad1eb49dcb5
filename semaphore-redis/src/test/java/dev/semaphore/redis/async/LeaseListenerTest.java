package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.ListenerRegistration;
import dev.semaphore.distributed.LeaseInfo;
import dev.semaphore.distributed.LeaseLostException;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.distributed.LeaseListener;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A {@link LeaseListener} as a Java caller writes one: only the methods it needs (the others have
 * empty defaults), the lease's figures record-style, and the registration in try-with-resources.
 */
class LeaseListenerTest {
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

    @Test
    void renewedAndLostFromJava() throws Exception {
        List<LeaseInfo> renewed = new CopyOnWriteArrayList<>();
        List<LeaseLostException> lost = new CopyOnWriteArrayList<>();
        LeaseListener listener = new LeaseListener() {
            @Override
            public void onLeaseRenewed(LeaseInfo lease) {
                renewed.add(lease);
            }

            @Override
            public void onLeaseLost(LeaseInfo lease, LeaseLostException cause) {
                lost.add(cause);
            }
        };
        DistributedConfig config = new DistributedConfig()
                .withLeaseTime(Duration.ofSeconds(3))
                .withRenewInterval(Duration.ofMillis(100));
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(client, "java-listened", 2, config);
        try (ListenerRegistration registration = client.addListener(listener)) {
            DistributedPermit permit = s.acquireBlocking(2);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (renewed.isEmpty() && System.nanoTime() < deadline) Thread.sleep(10);
            LeaseInfo info = renewed.get(0);
            assertEquals("java-listened", info.semaphoreName());
            assertEquals(permit.id(), info.leaseId());
            assertEquals(2, info.permits());
            assertEquals(permit.fencingToken(), info.fencingToken());
            Duration left = info.remaining();
            assertTrue(left.compareTo(Duration.ofSeconds(2)) > 0 && left.compareTo(Duration.ofSeconds(3)) <= 0, left.toString());

            // A fixed lease of the same client, not renewed: told lost when it runs out, as its permit's ended() fails.
            AsyncDistributedSemaphore fixed = AsyncDistributedSemaphore.create(client, "java-fixed", 1,
                    new DistributedConfig().withLeaseTime(Duration.ofMillis(300)).withAutoRenew(false));
            DistributedPermit short_ = fixed.acquireBlocking();
            ExecutionException ended = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> short_.ended().get(5, TimeUnit.SECONDS));
            assertInstanceOf(LeaseLostException.class, ended.getCause());
            deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (lost.isEmpty() && System.nanoTime() < deadline) Thread.sleep(10);
            assertEquals(1, lost.size());
            assertEquals(ended.getCause().getMessage(), lost.get(0).getMessage());
            permit.close();
        }
    }
}
