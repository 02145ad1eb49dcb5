package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.redis.RedisSemaphoreClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The blocking forms (acquireBlocking, lockBlocking) and the try forms (tryAcquire, tryLock) as a Java
 * caller uses them, on a real redis-server; two clients stand for two JVMs. "Nothing queued" is read
 * from the server: the queue length, and the line's zset itself.
 */
class BlockingAndTryFormsTest {
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

    /** The number of requests in the semaphore's line, read from the server's own zset. */
    /** The requests in the semaphore's line on the server: its queue's entries, without the sentinel "~" (head.lua). */
    private static int lineOnServer(String name) {
        return Integer.parseInt(server.reply("ZCOUNT", "dsem:{" + name + "}:q", "-inf", "(+inf").get(0));
    }

    /** Waits (at most 20 s) until {@code count} reaches {@code expected}. */
    private static void awaitCount(IntSupplier count, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (count.getAsInt() != expected) {
            assertTrue(System.nanoTime() < deadline, "still " + count.getAsInt() + ", expected " + expected);
            Thread.sleep(10);
        }
    }

    @Test
    void acquireBlockingReturnsAPermitThatCloseReleases() throws InterruptedException {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("blocking"), 3);
        assertEquals(3, s.configuredPermits());
        assertEquals(3, s.totalPermits().join());
        try (DistributedPermit one = s.acquireBlocking(); DistributedPermit two = s.acquireBlocking(2)) {
            assertEquals(1, one.permits());
            assertEquals(2, two.permits());
            assertTrue(two.fencingToken() > one.fencingToken());
            assertEquals(0, s.availablePermits().join());
        }
        assertEquals(3, s.availablePermits().join());
    }

    @Test
    void acquireBlockingWaitsInLineUntilTheHolderReleases() throws Exception {
        String name = fresh("blocking-wait");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        DistributedPermit held = s.acquireBlocking();
        CompletableFuture<DistributedPermit> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                return AsyncDistributedSemaphore.create(b, name, 1).acquireBlocking();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        awaitCount(() -> s.queueLength().join(), 1);
        assertFalse(waiter.isDone());
        held.close();
        try (DistributedPermit next = waiter.get(20, TimeUnit.SECONDS)) {
            assertTrue(next.fencingToken() > held.fencingToken());
        }
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void aTimedAcquireBlockingThatRunsOutIsEmptyWithNothingHeldAndNothingQueued() throws InterruptedException {
        String name = fresh("blocking-timeout");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 2);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, name, 2);
        try (DistributedPermit held = s.acquireBlocking()) {
            long start = System.nanoTime();
            Optional<DistributedPermit> two = other.acquireBlocking(2, Duration.ofMillis(300));
            long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(two.isEmpty(), "granted " + two);
            assertTrue(waitedMs >= 300, "returned after " + waitedMs + " ms");
            assertEquals(0, lineOnServer(name)); // withdrawn before it returned
            assertEquals(0, s.queueLength().join());
            assertEquals(1, s.availablePermits().join()); // only the held one is taken
            assertEquals(1, held.permits());
        }
        assertEquals(2, s.availablePermits().join());
        Optional<DistributedPermit> free = other.acquireBlocking(Duration.ofMillis(300)); // free now: granted at once
        assertTrue(free.isPresent());
        free.get().close();
        assertEquals(2, s.availablePermits().join());
    }

    @Test
    void aZeroTimeoutOnlyTriesNow() throws InterruptedException {
        String name = fresh("blocking-zero");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        try (DistributedPermit held = s.acquireBlocking(Duration.ZERO).orElseThrow()) {
            assertEquals(1, held.permits());
            assertTrue(AsyncDistributedSemaphore.create(b, name, 1).acquireBlocking(Duration.ofSeconds(-1)).isEmpty());
            assertEquals(0, lineOnServer(name));
        }
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void anInterruptedAcquireBlockingWithdrawsItsRequestFromTheServerAndHoldsNothing() throws Exception {
        String name = fresh("blocking-interrupt");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, name, 1);
        DistributedPermit held = s.acquireBlocking();
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicReference<Integer> lineWhenThrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                outcome.set(other.acquireBlocking());
            } catch (InterruptedException e) {
                lineWhenThrown.set(lineOnServer(name)); // read before anything else can change it
                outcome.set(e);
            }
        });
        waiter.start();
        awaitCount(() -> lineOnServer(name), 1);
        waiter.interrupt();
        waiter.join(20_000);
        assertFalse(waiter.isAlive());
        assertInstanceOf(InterruptedException.class, outcome.get());
        assertEquals(0, lineWhenThrown.get()); // the request had left the server's line when it threw
        held.close();
        assertEquals(1, s.availablePermits().join()); // nothing was granted to the withdrawn request
        assertEquals(0, s.queueLength().join());
    }

    @Test
    void aThreadInterruptedBeforeTheCallSendsNothing() throws InterruptedException {
        String name = fresh("blocking-interrupted-before");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> s.acquireBlocking(Duration.ofSeconds(5)));
        assertFalse(Thread.interrupted());
        assertEquals(1, s.availablePermits().join()); // granted at once would have taken it
        assertEquals(0, lineOnServer(name));
    }

    @Test
    void interruptsRacingGrantsNeverLeaveAPermitHeldOrARequestQueued() throws Exception {
        String name = fresh("blocking-interrupt-storm");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, name, 1);
        int interrupted = 0;
        int granted = 0;
        for (int i = 0; i < 60; i++) {
            DistributedPermit held = s.acquireBlocking();
            AtomicReference<Object> outcome = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread waiter = new Thread(() -> {
                started.countDown();
                try {
                    outcome.set(other.acquireBlocking());
                } catch (InterruptedException e) {
                    outcome.set(e);
                }
            });
            waiter.start();
            started.await();
            if (i % 2 == 0) awaitCount(() -> lineOnServer(name), 1); // half: interrupted while queued
            held.close(); // grants the waiter, if queued, while the interrupt may be on its way
            long spin = System.nanoTime() + (i % 10) * 200_000L;
            while (System.nanoTime() < spin) Thread.onSpinWait();
            waiter.interrupt();
            waiter.join(20_000);
            assertFalse(waiter.isAlive());
            if (outcome.get() instanceof DistributedPermit p) {
                granted++;
                p.close();
            } else {
                assertInstanceOf(InterruptedException.class, outcome.get());
                interrupted++;
            }
            // No waiting here: an interrupted request was withdrawn (and a raced grant handed back)
            // before acquireBlocking threw.
            assertEquals(1, s.availablePermits().join(), "round " + i + ": a permit is still held");
            assertEquals(0, lineOnServer(name), "round " + i + ": a request is still queued");
        }
        assertTrue(interrupted > 0, "no request was interrupted");
        System.out.println("interrupt storm: " + interrupted + " interrupted, " + granted + " granted first");
    }

    @Test
    void tryAcquireTakesFreePermitsNowAndNeverJumpsTheLine() throws Exception {
        String name = fresh("try");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 2);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, name, 2);
        Optional<DistributedPermit> first = s.tryAcquire();
        assertTrue(first.isPresent());
        assertEquals(1, first.get().permits());
        assertTrue(s.tryAcquire(2).isEmpty()); // 1 free of 2
        CompletableFuture<DistributedPermit> big = other.acquire(2);
        awaitCount(() -> lineOnServer(name), 1);
        assertEquals(1, s.availablePermits().join());
        assertTrue(s.tryAcquire(1).isEmpty()); // 1 is free, but the request for 2 is ahead
        assertEquals(1, lineOnServer(name)); // a try never queues
        first.get().close();
        try (DistributedPermit both = big.get(20, TimeUnit.SECONDS)) {
            assertEquals(2, both.permits());
            assertTrue(both.fencingToken() > first.get().fencingToken());
        }
        Optional<DistributedPermit> again = s.tryAcquire(2);
        assertTrue(again.isPresent());
        again.get().close();
        assertEquals(2, s.availablePermits().join());
    }

    @Test
    void theLockHasTheSameFamilies() throws Exception {
        String name = fresh("lock");
        AsyncDistributedLock la = AsyncDistributedLock.create(a, name);
        AsyncDistributedLock lb = AsyncDistributedLock.create(b, name);
        try (DistributedPermit held = la.lockBlocking()) {
            assertTrue(la.isLocked().join());
            assertTrue(lb.tryLock().isEmpty());
            assertTrue(lb.lockBlocking(Duration.ofMillis(200)).isEmpty());
            assertEquals(0, lineOnServer(name));
            CompletableFuture<Optional<DistributedPermit>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return lb.lockBlocking(Duration.ofSeconds(20));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            });
            awaitCount(() -> la.queueLength().join(), 1);
            held.close();
            try (DistributedPermit next = waiting.get(20, TimeUnit.SECONDS).orElseThrow()) {
                assertTrue(next.fencingToken() > held.fencingToken());
                assertTrue(lb.isLocked().join());
            }
        }
        Optional<DistributedPermit> now = lb.tryLock();
        assertTrue(now.isPresent());
        now.get().close();
        assertFalse(la.isLocked().join());
    }
}
