package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.distributed.LeaseLostException;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Java front-end, as a Java caller uses it, on a real redis-server; two clients stand for two JVMs. */
class AsyncRedisSemaphoreTest {
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

    /** Waits (at most 20 s) until {@code count} reaches {@code expected}. */
    private static void awaitCount(IntSupplier count, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (count.getAsInt() != expected) {
            assertTrue(System.nanoTime() < deadline, "still " + count.getAsInt() + ", expected " + expected);
            Thread.sleep(10);
        }
    }

    @Test
    void tryWithResourcesReleasesAndTokensIncrease() {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("twr"), 2);
        long first;
        try (DistributedPermit p = s.acquire(2).join()) {
            first = p.fencingToken();
            assertEquals(2, p.permits());
            assertEquals(0, s.availablePermits().join());
            assertTrue(p.remaining().toMillis() > 0);
        }
        assertEquals(2, s.availablePermits().join());
        try (DistributedPermit p = s.acquire().join()) {
            assertTrue(p.fencingToken() > first);
        }
    }

    @Test
    void fifoAcrossTwoClients() throws InterruptedException {
        String name = fresh("fifo");
        AsyncDistributedSemaphore[] handles = {AsyncDistributedSemaphore.create(a, name, 1), AsyncDistributedSemaphore.create(b, name, 1)};
        DistributedPermit holder = handles[0].acquire().join();
        List<Integer> order = new CopyOnWriteArrayList<>();
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int me = i;
            done.add(handles[i % 2].acquire().thenCompose(p -> {
                order.add(me);
                return p.release();
            }));
            awaitCount(() -> handles[0].queueLength().join(), i + 1);
        }
        holder.close();
        CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).join();
        assertEquals(List.of(0, 1, 2, 3, 4, 5), order);
        assertEquals(1, handles[1].availablePermits().join());
    }

    @Test
    void aTimedAcquireThatTimesOutHoldsNothing() {
        String name = fresh("timeout");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        try (DistributedPermit held = s.acquire().join()) {
            CompletionException e = assertThrows(CompletionException.class,
                () -> AsyncDistributedSemaphore.create(b, name, 1).acquire(1, Duration.ofMillis(200)).join());
            assertInstanceOf(TimeoutException.class, e.getCause());
            assertEquals(0, s.queueLength().join());
            assertEquals(1, held.permits());
        }
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void cancellingAPendingFutureWithdrawsTheRequest() throws InterruptedException {
        String name = fresh("cancel");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        DistributedPermit held = s.acquire().join();
        CompletableFuture<DistributedPermit> pending = AsyncDistributedSemaphore.create(b, name, 1).acquire();
        awaitCount(() -> s.queueLength().join(), 1);
        assertTrue(pending.cancel(true));
        awaitCount(() -> s.queueLength().join(), 0);
        held.close();
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void futuresCancelledAtAnyMomentLeaveNothingHeldOrQueued() throws InterruptedException {
        String name = fresh("storm");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 2);
        AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(b, name, 2);
        List<Function<Integer, CompletableFuture<?>>> kinds = List.of(
            i -> s.acquire(2), i -> other.acquire(1, Duration.ZERO), i -> other.acquire(Duration.ofSeconds(5)));
        for (Function<Integer, CompletableFuture<?>> kind : kinds) {
            int cancelled = 0;
            for (int i = 0; i < 100; i++) {
                CompletableFuture<?> f = kind.apply(i);
                long spin = System.nanoTime() + (i % 20) * 100_000L; // cancel before, during or after the round trip
                while (System.nanoTime() < spin) Thread.onSpinWait();
                if (f.cancel(true)) {
                    cancelled++;
                } else if (!f.isCompletedExceptionally() && f.join() instanceof DistributedPermit p) {
                    p.close();
                }
            }
            // A lease lost by a cancelled future stays held for the lease time (30 s), past this deadline.
            awaitCount(() -> s.availablePermits().join(), 2);
            assertEquals(0, s.queueLength().join());
            assertTrue(cancelled > 0, "no future was cancelled");
        }
    }

    @Test
    void aClosedHandleFailsItsPendingFutureAndLeavesTheLine() throws InterruptedException {
        String name = fresh("closed");
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, name, 1);
        AsyncDistributedSemaphore closing = AsyncDistributedSemaphore.create(b, name, 1);
        try (DistributedPermit held = s.acquire().join()) {
            CompletableFuture<DistributedPermit> pending = closing.acquire();
            awaitCount(() -> s.queueLength().join(), 1);
            closing.close();
            CompletionException e = assertThrows(CompletionException.class, pending::join);
            assertInstanceOf(SemaphoreClosedException.class, e.getCause());
            assertEquals(0, s.queueLength().join());
            assertThrows(SemaphoreClosedException.class, closing::acquire);
            assertEquals(1, held.permits());
        }
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void closingAnExpiredPermitThrowsLeaseLostOnceAndRenewingFails() throws InterruptedException {
        DistributedConfig shortLease = new DistributedConfig().withLeaseTime(Duration.ofMillis(300)).withAutoRenew(false);
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("expired"), 1, shortLease);
        DistributedPermit p = s.acquire().join();
        assertTrue(p.remaining().compareTo(Duration.ofMillis(300)) <= 0);
        awaitCount(() -> s.availablePermits().join(), 1); // the server ended the lease at its expiry
        CompletionException ended = assertThrows(CompletionException.class, () -> p.ended().join()); // and the holder was told
        assertInstanceOf(LeaseLostException.class, ended.getCause());
        CompletionException renew = assertThrows(CompletionException.class, () -> p.renew().join());
        assertInstanceOf(LeaseLostException.class, renew.getCause());
        LeaseLostException lost = assertThrows(LeaseLostException.class, p::close);
        assertTrue(lost.getMessage().contains(p.id()), lost.getMessage());
        p.close(); // later calls do nothing
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void withPermitReleasesOnSuccessAndOnAFailedStage() {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("with"), 1);
        assertEquals(7L, s.withPermit(1, lease -> CompletableFuture.completedFuture(lease.permits() + 6L)).join());
        assertEquals(1, s.availablePermits().join());
        CompletionException e = assertThrows(CompletionException.class,
            () -> s.withPermit(1, lease -> CompletableFuture.failedFuture(new IllegalStateException("boom"))).join());
        assertEquals("boom", e.getCause().getMessage());
        assertEquals(1, s.availablePermits().join());
    }

    @Test
    void closeTwiceReleasesOnce() {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("twice"), 2);
        DistributedPermit p = s.acquire().join();
        DistributedPermit other = s.acquire().join();
        assertTrue(p.fencingToken() < other.fencingToken());
        p.close();
        p.close();
        assertSame(p.release(), p.release()); // released once: every call gets the first outcome
        assertTrue(p.release().isDone() && !p.release().isCompletedExceptionally());
        assertEquals(1, s.availablePermits().join()); // the other permit is still held
        other.close();
        assertEquals(2, s.availablePermits().join());
    }

    @Test
    void lockIsFifoAcrossClients() throws InterruptedException {
        String name = fresh("lock");
        AsyncDistributedLock la = AsyncDistributedLock.create(a, name);
        AsyncDistributedLock lb = AsyncDistributedLock.create(b, name);
        DistributedPermit first = la.lock().join();
        assertTrue(la.isLocked().join());
        assertTrue(lb.tryLock().isEmpty());
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<String> second = lb.withLock(lease -> CompletableFuture.completedFuture(order.add("b") ? "b" : "?"));
        awaitCount(() -> la.queueLength().join(), 1);
        CompletableFuture<String> third = la.withLock(lease -> CompletableFuture.completedFuture(order.add("a") ? "a" : "?"));
        awaitCount(() -> la.queueLength().join(), 2);
        first.close();
        assertEquals("b", second.join());
        assertEquals("a", third.join());
        assertEquals(List.of("b", "a"), order);
        assertTrue(!la.isLocked().join());
    }

    private final List<Long> reports = new CopyOnWriteArrayList<>();

    private void runReport(long fencingToken) {
        reports.add(fencingToken);
    }

    private CompletableFuture<String> runReportAsync(long fencingToken) {
        reports.add(fencingToken);
        return CompletableFuture.completedFuture("report " + fencingToken);
    }

    private String docsExample(String redisUri) throws InterruptedException {
        // docs/redis.md example begins
        RedisSemaphoreClient client = RedisSemaphoreClient.connect(redisUri); // one per JVM
        AsyncDistributedSemaphore connections = AsyncDistributedSemaphore.create(client, "db-connections", 8);

        // blocking (a plain or virtual thread); empty if not granted within 5 s, with nothing held
        Optional<DistributedPermit> granted = connections.acquireBlocking(2, Duration.ofSeconds(5));
        try (DistributedPermit permit = granted.orElseThrow()) {
            runReport(permit.fencingToken()); // close() releases, once
        }
        // asynchronous: released when the stage completes; the Lease reads as the permit does
        CompletableFuture<String> report = connections.withPermit(lease -> runReportAsync(lease.fencingToken()));
        // docs/redis.md example ends
        String result = report.join();
        assertEquals(8, connections.availablePermits().join());
        client.close();
        return result;
    }

    @Test
    void theDocsJavaExampleIsThisCodeVerbatimAndRuns() throws Exception {
        String doc = Files.readString(Path.of("../docs/redis.md"));
        String inDoc = doc.substring(doc.indexOf("## From Java"));
        inDoc = inDoc.substring(inDoc.indexOf("```java\n") + 8);
        inDoc = inDoc.substring(0, inDoc.indexOf("```"));
        String source = Files.readString(Path.of("src/test/java/dev/semaphore/redis/async/AsyncRedisSemaphoreTest.java"));
        String inCode = source.substring(source.indexOf("// docs/redis.md example begins\n") + "// docs/redis.md example begins\n".length(), source.indexOf("        // docs/redis.md example ends"));
        assertEquals(inDoc, inCode.lines().map(l -> l.startsWith("        ") ? l.substring(8) : l).reduce("", (x, l) -> x + l + "\n"));
        String result = docsExample(server.getUri());
        assertEquals(2, reports.size());
        assertTrue(reports.get(1) > reports.get(0));
        assertEquals("report " + reports.get(1), result);
    }

    @Test
    void badPermitCountsThrowAtTheCallAndChangeNothing() {
        AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(a, fresh("bad"), 2);
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> s.acquire(0));
        assertTrue(zero.getMessage().contains("was 0"), zero.getMessage());
        // More than the total: only the server knows its total (it may have been resized), so the future fails.
        CompletionException three = assertThrows(CompletionException.class, () -> s.acquire(3, Duration.ofSeconds(1)).join());
        assertInstanceOf(IllegalArgumentException.class, three.getCause());
        assertTrue(three.getCause().getMessage().contains("a request for 3 permits can never be granted: the total is 2"), three.getCause().getMessage());
        IllegalArgumentException minus = assertThrows(IllegalArgumentException.class, () -> s.tryAcquire(-1));
        assertTrue(minus.getMessage().contains("was -1"), minus.getMessage());
        IllegalArgumentException blocking = assertThrows(IllegalArgumentException.class, () -> s.acquireBlocking(0));
        assertTrue(blocking.getMessage().contains("was 0"), blocking.getMessage());
        IllegalArgumentException timed = assertThrows(IllegalArgumentException.class, () -> s.acquireBlocking(3, Duration.ofSeconds(1)));
        assertTrue(timed.getMessage().contains("3 permits can never be granted"), timed.getMessage());
        CompletionException with = assertThrows(CompletionException.class,
            () -> s.withPermit(5, lease -> CompletableFuture.completedFuture(1)).join());
        assertTrue(with.getCause().getMessage().contains("5 permits can never be granted"), with.getCause().getMessage());
        NullPointerException noTimeout = assertThrows(NullPointerException.class, () -> s.acquire(1, null));
        assertEquals("timeout", noTimeout.getMessage());
        assertEquals(2, s.availablePermits().join());
        assertEquals(0, s.queueLength().join());
    }
}
