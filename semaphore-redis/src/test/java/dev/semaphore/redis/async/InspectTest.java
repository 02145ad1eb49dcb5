package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.distributed.LockInspection;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.SemaphoreInspection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code inspect()} as a Java caller uses it: who holds and who waits, from another client too. */
class InspectTest {
    private static LocalRedisServer server;
    private static RedisSemaphoreClient a;
    private static RedisSemaphoreClient b;

    @BeforeAll
    static void start() {
        server = LocalRedisServer.Companion.start(false);
        a = RedisSemaphoreClient.connect(server.getUri() + "?clientName=java-a");
        b = RedisSemaphoreClient.connect(server.getUri() + "?clientName=java-b");
    }

    @AfterAll
    static void stop() {
        a.close();
        b.close();
        server.close();
    }

    @Test
    void holdersAndLineWithNamesTokensAndTimes() throws Exception {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, "java-inspect", 2);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, "java-inspect", 2);
        try (DistributedPermit held = s.acquireBlocking(2)) {
            CompletableFuture<DistributedPermit> waiting = other.acquire();
            while (s.queueLength().join() == 0) Thread.sleep(10);

            SemaphoreInspection seen = other.inspect().join();
            assertTrue(seen.exists());
            assertEquals(2, seen.totalPermits());
            assertEquals(1, seen.holderCount());
            assertEquals(2, seen.heldPermits());
            assertEquals(0, seen.availablePermits());
            SemaphoreInspection.Holder holder = seen.holders().get(0);
            assertEquals(held.id(), holder.leaseId());
            assertEquals(a.getClientId(), holder.clientId());
            assertEquals("java-a", holder.clientName());
            assertEquals(2, holder.permits());
            assertEquals(held.fencingToken(), holder.fencingToken());
            assertFalse(holder.isThisClient()); // listed by b
            Duration left = holder.remaining();
            assertTrue(left.compareTo(Duration.ZERO) > 0 && left.compareTo(Duration.ofSeconds(30)) <= 0, left.toString());

            assertEquals(1, seen.queueLength());
            SemaphoreInspection.QueuedRequest request = seen.line().get(0);
            assertEquals("java-b", request.clientName());
            assertEquals(b.getClientId(), request.clientId());
            assertEquals(1, request.permits());
            assertEquals(1, request.position());
            assertTrue(request.isThisClient());
            assertFalse(request.waited().isNegative());
            assertTrue(seen.toString().contains("\"java-a\""), seen.toString());

            held.close();
            try (DistributedPermit next = waiting.join()) {
                SemaphoreInspection after = s.inspect(0).join();
                assertEquals(1, after.holderCount());
                assertEquals(0, after.queueLength());
                assertTrue(after.holders().isEmpty()); // limit 0: the counts only
                assertEquals(next.fencingToken(), s.inspect().join().holders().get(0).fencingToken());
            }
        }
        assertEquals(0, s.inspect().join().holderCount());
    }

    @Test
    void aLockShowsItsHolderAndABadLimitThrowsAtOnce() throws Exception {
        AsyncDistributedLock lock = AsyncDistributedLock.create(a, "java-inspect-lock");
        LockInspection free = lock.inspect().join();
        assertFalse(free.isLocked());
        assertNull(free.holder());
        try (DistributedPermit held = lock.lockBlocking()) {
            LockInspection seen = AsyncDistributedLock.create(b, "java-inspect-lock").inspect(10).join();
            assertTrue(seen.isLocked());
            SemaphoreInspection.Holder holder = seen.holder();
            assertNotNull(holder);
            assertEquals(held.fencingToken(), holder.fencingToken());
            assertEquals("java-a", holder.clientName());
            assertNull(seen.owner());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> lock.inspect(-1));
        assertTrue(e.getMessage().contains("was -1"), e.getMessage());
        IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
            () -> AsyncDistributedSemaphore.create(a, "java-inspect", 2).inspect(5000));
        assertTrue(e2.getMessage().contains("was 5000"), e2.getMessage());
        assertFalse(lock.inspect().join().isLocked());
    }
}
