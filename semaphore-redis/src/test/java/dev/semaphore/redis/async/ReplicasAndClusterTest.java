package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.redis.LocalRedisCluster;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.distributed.NotReplicatedException;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** replicaAcks and Redis Cluster from Java, on real servers. */
class ReplicasAndClusterTest {
    @Test
    void aGrantWaitsForTheReplicaAndFailsWithNothingHeldWhileItIsPaused() {
        try (LocalRedisServer master = LocalRedisServer.Companion.start(false);
             LocalRedisServer replica = LocalRedisServer.Companion.startReplica(master);
             RedisSemaphoreClient client = RedisSemaphoreClient.connect(master.getUri())) {
            DistributedConfig config = new DistributedConfig()
                .withLeaseTime(Duration.ofSeconds(10))
                .withWaiterTimeToLive(Duration.ofSeconds(5))
                .withReplicaAcks(1, Duration.ofMillis(300));
            AsyncDistributedSemaphore semaphore = AsyncDistributedSemaphore.create(client, "java-replicated", 1, config);
            try (DistributedPermit permit = semaphore.acquire().join()) {
                assertTrue(permit.fencingToken() > 0);
            }
            replica.pause(true);
            try {
                CompletionException e = assertThrows(CompletionException.class, () -> semaphore.acquire().join());
                assertInstanceOf(NotReplicatedException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("it was handed back"), e.getCause().getMessage());
                assertEquals(1, semaphore.availablePermits().join());
                assertEquals(0, semaphore.queueLength().join());
            } finally {
                replica.pause(false);
            }
        }
    }

    @Test
    void aClusterClientServesSemaphoresOnEveryNode() {
        try (LocalRedisCluster cluster = LocalRedisCluster.Companion.start(3);
             RedisSemaphoreClient client = RedisSemaphoreClient.connectCluster(cluster.getUris())) {
            for (int i = 0; i < 12; i++) { // 12 names: their slots spread over the 3 nodes
                AsyncDistributedLock lock = AsyncDistributedLock.create(client, "java-cluster-" + i);
                DistributedPermit held = lock.lock().join();
                assertTrue(lock.isLocked().join());
                held.close();
                assertEquals(false, lock.isLocked().join());
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AsyncDistributedSemaphore.create(
                client, "x", 1, new DistributedConfig().withReplicaAcks(1, Duration.ofSeconds(1))));
            assertEquals("replicaAcks (1) is not supported on a Redis Cluster client; use 0", e.getMessage());
        }
    }
}
