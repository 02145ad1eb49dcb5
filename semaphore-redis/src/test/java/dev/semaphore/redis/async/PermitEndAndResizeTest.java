package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.distributed.LeaseLostException;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * DistributedPermit.ended() and the resize and delete futures of AsyncDistributedSemaphore, as a Java caller uses
 * them, on a real redis-server; two clients stand for two JVMs.
 */
class PermitEndAndResizeTest {
    private static LocalRedisServer server;
    private static RedisSemaphoreClient a;
    private static RedisSemaphoreClient b;
    private static int names;

    @BeforeAll
    static void start() {
        server = LocalRedisServer.Companion.start(false);
        a = RedisSemaphoreClient.connect(server.getUri());
        b = RedisSemaphoreClient.connect(server.getUri());
    }

    @AfterAll
    static void stop() {
        a.close();
        b.close();
        server.close();
    }

    private static String fresh(String prefix) {
        return prefix + "-" + (++names);
    }

    @Test
    void endedCompletesNormallyOnceClosedAndNotBeforeWhileTheLeaseIsRenewed() throws Exception {
        DistributedConfig shortLease = new DistributedConfig().withLeaseTime(Duration.ofMillis(600));
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("ended"), 2, shortLease);
        DistributedPermit p = s.acquire().join();
        CompletableFuture<Void> ended = p.ended();
        Thread.sleep(1500); // more than two lease times: renewed by the client, so still held
        assertFalse(ended.isDone(), "ended() completed while the lease was held: " + ended);
        assertTrue(p.remaining().toMillis() > 0);
        assertEquals(1, s.availablePermits().join());

        // Completing or cancelling an ended() future does not touch the lease.
        DistributedPermit q = s.acquire().join();
        assertTrue(q.ended().cancel(true));
        assertTrue(q.ended().complete(null));
        assertEquals(0, s.availablePermits().join());

        p.close();
        assertNull(ended.get(5, TimeUnit.SECONDS));
        assertFalse(ended.isCompletedExceptionally());
        CompletableFuture<Void> later = p.ended(); // asked after the end: already complete
        assertTrue(later.isDone());
        assertFalse(later.isCompletedExceptionally());
        q.close();
        assertEquals(2, s.availablePermits().join());
    }

    @Test
    void endedFailsWithLeaseLostExceptionWhenAFixedLeaseRunsOut() throws Exception {
        DistributedConfig fixed = new DistributedConfig().withLeaseTime(Duration.ofMillis(600)).withAutoRenew(false);
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("fixed"), 1, fixed);
        long start = System.nanoTime();
        DistributedPermit p = s.acquire().join();
        CompletableFuture<Void> ended = p.ended();
        ExecutionException e = assertThrows(ExecutionException.class, () -> ended.get(5, TimeUnit.SECONDS));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        LeaseLostException lost = assertInstanceOf(LeaseLostException.class, e.getCause());
        assertTrue(lost.getMessage().contains("fixed lease time"), lost.getMessage());
        assertTrue(tookMs >= 600, "told after " + tookMs + " ms, before the lease time");
        assertTrue(tookMs < 600 + 1500, "told only after " + tookMs + " ms");
        assertTrue(p.lease().isLost());
        assertThrows(LeaseLostException.class, p::close);
        // Its permit comes back (the server ends the lease at its own expiry, no earlier than the client's count).
        DistributedConfig quick = new DistributedConfig().withHeartbeatInterval(Duration.ofMillis(100));
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, s.asKotlin().getName(), 1, quick);
        try (DistributedPermit next = other.acquireBlocking(Duration.ofSeconds(5)).orElseThrow()) {
            assertTrue(next.fencingToken() > p.fencingToken());
        }
    }

    @Test
    void resizeFuturesChangeTheServersTotalForEveryClient() {
        String name = fresh("resize");
        AsyncDistributedSemaphore two = AsyncDistributedSemaphore.create(a, name, 2);
        AsyncDistributedSemaphore nine = AsyncDistributedSemaphore.create(b, name, 9);
        assertEquals(2, two.configuredPermits());
        assertEquals(9, nine.configuredPermits());
        assertEquals(2, two.totalPermits().join()); // created by the first use, with its total
        assertEquals(2, nine.totalPermits().join()); // the server's total stands

        assertNull(two.addPermits(3).join());
        assertEquals(5, nine.totalPermits().join());
        assertNull(nine.reducePermits(1).join());
        assertEquals(4, two.totalPermits().join());
        nine.setPermits(6).join();
        two.setPermits(6).join(); // idempotent: 6, not 12
        assertEquals(6, two.totalPermits().join());
        assertEquals(6, two.availablePermits().join());

        // A reduction below what is held is a debt, repaid by the release.
        DistributedPermit all = two.acquire(6).join();
        nine.reducePermits(2).join();
        assertEquals(4, nine.totalPermits().join());
        assertEquals(-2, nine.availablePermits().join());
        all.close();
        assertEquals(4, nine.availablePermits().join());

        // More than the total is refused by the server: the future fails, nothing changes.
        CompletionException tooMany = assertThrows(CompletionException.class, () -> two.reducePermits(5).join());
        IllegalArgumentException cause = assertInstanceOf(IllegalArgumentException.class, tooMany.getCause());
        assertTrue(cause.getMessage().contains("cannot remove 5 permits: the total is 4"), cause.getMessage());
        assertEquals(4, two.totalPermits().join());
    }

    @Test
    void deleteFailsWhileHeldAndRemovesTheSemaphoreWhenIdle() {
        String name = fresh("delete");
        AsyncDistributedSemaphore two = AsyncDistributedSemaphore.create(a, name, 2);
        DistributedPermit held = two.acquire().join();
        CompletionException inUse = assertThrows(CompletionException.class, () -> two.delete().join());
        IllegalStateException cause = assertInstanceOf(IllegalStateException.class, inUse.getCause());
        assertTrue(cause.getMessage().contains("1 permits held and 0 requests queued"), cause.getMessage());
        assertEquals(1, two.availablePermits().join()); // nothing changed
        held.close();
        assertNull(two.delete().join());
        assertEquals(":0", server.command("EXISTS", "dsem:{" + name + "}:s"));
        AsyncDistributedSemaphore five = AsyncDistributedSemaphore.create(b, name, 5);
        assertEquals(5, five.totalPermits().join()); // created again, with the total of the handle that used it
        try (DistributedPermit next = five.acquire().join()) {
            assertTrue(next.fencingToken() > held.fencingToken());
        }
    }

    @Test
    void badCountsThrowIllegalArgumentExceptionAtTheCallNamingTheValue() {
        String name = fresh("bad-counts");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 3);
        assertEquals(3, s.totalPermits().join());
        assertMessage(() -> s.addPermits(0), "was 0");
        assertMessage(() -> s.addPermits(-4), "was -4");
        assertMessage(() -> s.reducePermits(0), "was 0");
        assertMessage(() -> s.reducePermits(-1), "was -1");
        assertMessage(() -> s.setPermits(-7), "was -7");
        assertEquals(3, s.totalPermits().join()); // nothing was sent
        s.setPermits(0).join(); // zero is a total: nothing can be granted until it grows
        assertEquals(0, s.totalPermits().join());
        assertMessage(s::tryAcquire, "a request for 1 permits can never be granted: the total is 0");
        s.setPermits(3).join();
        assertEquals(3, s.availablePermits().join());
    }

    private static void assertMessage(Executable call, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
