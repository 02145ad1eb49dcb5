package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.assertState;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.SemaphoreKt;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** AsyncSemaphore as a Java caller uses it: futures, try-with-resources, metrics and misuse. */
class AsyncSemaphoreTest {

    @Test
    void freePermitsAreGrantedAtOnceAndGivenBackByClose() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(3);
        CompletableFuture<Permit> f = s.acquire(2);
        assertTrue(f.isDone(), "free permits complete the future before acquire returns");
        try (Permit p = f.get()) {
            assertEquals(2, p.permits());
            assertFalse(p.isReleased());
            assertState(s, 1, 0);
        }
        assertState(s, 3, 0);
    }

    @Test
    void waitersAreServedFirstComeFirstServed() {
        AsyncSemaphore s = drained(5);
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Permit>> futures = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            CompletableFuture<Permit> f = s.acquire();
            f.thenRun(() -> order.add(id));
            futures.add(f);
        }
        assertState(s, 0, 5);
        for (int i = 0; i < 5; i++) {
            s.release();
            assertEquals(i + 1, order.size(), "one release grants exactly one waiter");
        }
        assertEquals(List.of(0, 1, 2, 3, 4), order);
        futures.forEach(f -> f.join().close());
        assertState(s, 5, 0);
    }

    @Test
    void noBargingWhileSomeoneWaitsAndLargeRequestsBlockTheLine() {
        AsyncSemaphore s = AsyncSemaphore.create(2);
        Permit one = s.acquire().join();
        CompletableFuture<Permit> two = s.acquire(2);
        CompletableFuture<Permit> small = s.acquire(1);
        assertFalse(two.isDone());
        assertFalse(small.isDone(), "head-of-line: the 1-permit request waits behind the 2-permit one");
        assertFalse(s.tryAcquire(), "no barging: a permit is free but someone waits");
        assertState(s, 1, 2);
        one.close();
        assertTrue(two.isDone());
        assertFalse(small.isDone());
        two.join().close();
        assertTrue(small.isDone());
        small.join().close();
        assertState(s, 2, 0);
    }

    @Test
    void tryAcquireAndReleaseWorkLikeJavaUtilConcurrent() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(2);
        assertTrue(s.tryAcquire());
        assertTrue(s.tryAcquire(1));
        assertFalse(s.tryAcquire());
        assertFalse(s.tryAcquire(1, Duration.ofMillis(1)), "blocking tryAcquire times out with nothing held");
        assertState(s, 0, 0);
        s.release(2);
        assertTrue(s.tryAcquire(2, Duration.ofSeconds(5)));
        s.release();
        s.release();
        assertState(s, 2, 0);
    }

    @Test
    void timedAcquisitionFailsWithTimeoutExceptionAndHoldsNothing() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> f = s.acquire(1, Duration.ofMillis(20));
        failsWith(TimeoutException.class, f); // CompletableFuture.orTimeout's exception
        assertState(s, 0, 0);
        s.release();
        assertState(s, 1, 0); // the timed-out request did not take it
    }

    @Test
    void timedAcquisitionSucceedsWhenGrantedInTime() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> f = s.acquire(1, Duration.ofMinutes(5));
        assertFalse(f.isDone());
        s.release();
        Permit p = f.join();
        assertState(s, 0, 0);
        p.close();
        assertState(s, 1, 0);
    }

    @Test
    void zeroOrNegativeTimeoutOnlyTriesNow() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        CompletableFuture<Permit> now = s.acquire(1, Duration.ZERO);
        assertTrue(now.isDone());
        CompletableFuture<Permit> none = s.acquire(1, Duration.ofMillis(-5));
        assertTrue(none.isDone(), "a negative timeout never queues");
        failsWith(TimeoutException.class, none);
        assertState(s, 0, 0);
        now.join().close();
        assertState(s, 1, 0);
    }

    @Test
    void cancellingAPendingFutureRemovesTheWaiter() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> first = s.acquire();
        CompletableFuture<Permit> second = s.acquire();
        assertTrue(first.cancel(false));
        assertState(s, 0, 1);
        s.release();
        assertTrue(second.isDone(), "the permit goes to the next waiter, not to the cancelled one");
        second.join().close();
        assertState(s, 1, 0);
    }

    @Test
    void completingAPendingFutureYourselfRemovesTheWaiter() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> a = s.acquire();
        CompletableFuture<Permit> b = s.acquire();
        assertTrue(a.completeExceptionally(new IllegalStateException("gave up")));
        assertTrue(b.complete(null));
        assertState(s, 0, 0);
        s.release();
        assertState(s, 1, 0);
    }

    @Test
    void cancelAfterTheGrantReturnsFalseAndTheFutureHoldsThePermit() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> f = s.acquire();
        s.release();
        assertFalse(f.cancel(true), "already granted");
        Permit p = f.join();
        assertState(s, 0, 0);
        p.close();
        assertState(s, 1, 0);
    }

    @Test
    void obtrudingCouldLoseAPermitAndIsRefusedByAQueuedRequestsFuture() {
        // The library's own future is the one of a request that queued; a request granted at once gets
        // the JDK's completed future (aRequestGrantedAtOnceGetsTheJdksCompletedFuture).
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquire().join();
        CompletableFuture<Permit> f = s.acquire();
        assertFalse(f.isDone());
        assertThrows(UnsupportedOperationException.class, () -> f.obtrudeValue(null));
        assertThrows(UnsupportedOperationException.class, () -> f.obtrudeException(new RuntimeException()));
        assertFalse(f.isDone(), "refused: the request is still pending");
        assertState(s, 0, 1);
        held.close();
        assertTrue(f.isDone());
        assertThrows(UnsupportedOperationException.class, () -> f.obtrudeValue(null), "granted: the future holds a Permit");
        assertThrows(UnsupportedOperationException.class, () -> f.obtrudeException(new RuntimeException()));
        Permit p = f.join();
        assertFalse(p.isReleased());
        assertState(s, 0, 0);
        p.close();
        assertState(s, 1, 0);
    }

    @Test
    void permitCloseReleasesOnlyOnce() {
        AsyncSemaphore s = AsyncSemaphore.create(3);
        Permit p = s.acquire(2).join();
        p.close();
        p.close();
        assertTrue(p.isReleased());
        assertEquals(2, p.permits());
        assertState(s, 3, 0);
        Permit q = s.acquire(1).join();
        q.close();
        q.close();
        assertState(s, 3, 0);
    }

    @Test
    void racingClosesFromTwoThreadsReleaseOnce() throws Exception {
        // Two threads close the same Permit at the same moment, many times. The helper thread spins (no
        // parking) waiting for the next round, so both closes start within nanoseconds of each other.
        AsyncSemaphore s = AsyncSemaphore.create(2);
        int rounds = 5_000 * TestSupport.SCALE;
        java.util.concurrent.atomic.AtomicReference<Permit> current = new java.util.concurrent.atomic.AtomicReference<>();
        AtomicInteger round = new AtomicInteger(-1);
        AtomicInteger helperDone = new AtomicInteger(-1);
        java.util.concurrent.atomic.AtomicReference<RuntimeException> helperError = new java.util.concurrent.atomic.AtomicReference<>();
        Thread helper = new Thread(() -> {
            for (int i = 0; i < rounds; i++) {
                while (round.get() != i) Thread.onSpinWait();
                try {
                    current.get().close();
                } catch (RuntimeException e) {
                    helperError.compareAndSet(null, e); // e.g. over-release if both closes released
                }
                helperDone.set(i);
            }
        });
        helper.start();
        for (int i = 0; i < rounds; i++) {
            current.set(s.acquire().join());
            round.set(i);
            RuntimeException mine = null;
            try {
                current.get().close();
            } catch (RuntimeException e) {
                mine = e;
            }
            int r = i;
            TestSupport.await("helper closed round " + r, () -> helperDone.get() == r);
            assertNull(mine, "round " + i + ": the second close must do nothing");
            assertNull(helperError.get(), "round " + i + ": the second close must do nothing");
            assertEquals(2, s.availablePermits(), "round " + i + ": released exactly once");
        }
        helper.join();
        assertState(s, 2, 0);
    }

    @Test
    void closeFailsQueuedAndLaterAcquisitionsButReleaseStillWorks() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquire().join();
        CompletableFuture<Permit> waiting = s.acquire();
        IllegalStateException why = new IllegalStateException("shutting down");
        s.close(why);
        assertTrue(s.isClosed());
        assertSame(why, failsWith(SemaphoreClosedException.class, waiting).getCause());
        failsWith(SemaphoreClosedException.class, s.acquire());
        failsWith(SemaphoreClosedException.class, s.acquire(1, Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, s::tryAcquire);
        assertThrows(SemaphoreClosedException.class, s::acquireBlocking);
        held.close();
        assertState(s, 1, 0);
        s.close(null); // a second close does nothing
        assertTrue(s.isClosed());
    }

    @Test
    void resizingGrantsAndFailsWaiters() {
        AsyncSemaphore s = AsyncSemaphore.create(2);
        Permit one = s.acquire(1).join();
        CompletableFuture<Permit> two = s.acquire(2, Duration.ofMinutes(1));
        assertFalse(two.isDone());
        assertThrows(IllegalArgumentException.class, () -> s.acquire(3), "more than the total of 2");
        s.addPermits(1); // total 3, available 2: the 2-permit request fits
        assertTrue(two.isDone());
        two.join().close();
        assertEquals(2, s.drainPermits());
        assertState(s, 0, 0);
        CompletableFuture<Permit> big = s.acquire(3);
        assertState(s, 0, 1);
        s.reducePermits(1); // total 2: a request for 3 can never be granted
        IllegalStateException e = failsWith(IllegalStateException.class, big);
        assertTrue(e.getMessage().contains("3 permits"), e.getMessage());
        assertState(s, -1, 0);
        one.close();
        s.release(2);
        assertState(s, 2, 0);
    }

    @Test
    void badInputThrowsAtTheCallNamesTheValueAndChangesNothing() {
        AsyncSemaphore s = AsyncSemaphore.create(2);
        Permit held = s.acquire().join();
        CompletableFuture<Permit> queued = s.acquire(2);
        assertState(s, 1, 1);

        assertMessage(IllegalArgumentException.class, "was 0", () -> s.acquire(0));
        assertMessage(IllegalArgumentException.class, "was -3", () -> s.acquire(-3, Duration.ofSeconds(1)));
        assertMessage(IllegalArgumentException.class, "3 permits", () -> s.acquire(3));
        assertMessage(NullPointerException.class, "timeout", () -> s.acquire(1, null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.tryAcquire(0));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.tryAcquire(0, Duration.ofSeconds(1)));
        assertMessage(NullPointerException.class, "timeout", () -> s.tryAcquire(1, null));
        assertMessage(NullPointerException.class, "timeout", () -> s.acquire((Duration) null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.release(0));
        assertMessage(IllegalArgumentException.class, "was -1", () -> s.acquireBlocking(-1));
        assertMessage(NullPointerException.class, "timeout", () -> s.acquireBlocking(1, null));
        assertMessage(NullPointerException.class, "action", () -> s.withPermit(null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.withPermit(0, () -> CompletableFuture.completedFuture(1)));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.addPermits(0));
        assertMessage(IllegalArgumentException.class, "was -2", () -> s.reducePermits(-2));
        assertMessage(IllegalArgumentException.class, "was -1", () -> AsyncSemaphore.create(-1));
        assertMessage(NullPointerException.class, "shared", () -> AsyncSemaphore.of(null));
        assertMessage(IllegalStateException.class, "cannot release 2 permits", () -> s.release(2));
        assertState(s, 1, 1);

        held.close();
        assertTrue(queued.isDone());
        queued.join().close();
        assertState(s, 2, 0);
        assertMessage(IllegalStateException.class, "cannot release 1 permits", s::release);
        assertState(s, 2, 0);
    }

    @Test
    void aSemaphoreIsSharedWithItsKotlinTwin() {
        Semaphore kotlin = SemaphoreKt.Semaphore(2);
        AsyncSemaphore a = AsyncSemaphore.of(kotlin);
        AsyncSemaphore b = AsyncSemaphore.of(kotlin);
        assertSame(kotlin, a.asKotlin());
        assertTrue(kotlin.tryAcquire(1));
        assertEquals(1, a.availablePermits());
        Permit p = b.acquire().join();
        assertEquals(0, kotlin.getAvailablePermits());
        CompletableFuture<Permit> waiting = a.acquire();
        assertEquals(1, kotlin.getQueueLength());
        kotlin.release(1); // the Kotlin side's release serves the Java waiter
        assertTrue(waiting.isDone());
        waiting.join().close();
        p.close();
        assertEquals(2, kotlin.getAvailablePermits());
        kotlin.close(null);
        assertTrue(a.isClosed());
    }

    @Test
    void waitingOnASemaphoreNotBackedByTheEngineIsRejectedByName() {
        Semaphore foreign = TestSupport.foreignImplementation(Semaphore.class, "DistributedSemaphore");
        AsyncSemaphore view = AsyncSemaphore.of(foreign);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, view::acquire);
        assertTrue(e.getMessage().contains("DistributedSemaphore"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, view::acquireBlocking);
        assertTrue(e.getMessage().contains("DistributedSemaphore"), e.getMessage());
    }

    @Test
    void createWithZeroPermitsIsAGateOpenedByAddPermits() {
        AsyncSemaphore s = AsyncSemaphore.create(0);
        assertEquals(0, s.asKotlin().getAvailablePermits());
        // A request larger than the total (0) can never be granted, so it is refused (Semaphore.kt KDoc).
        assertThrows(IllegalArgumentException.class, s::tryAcquire);
        s.addPermits(1);
        assertTrue(s.tryAcquire());
        assertTrue(s.toString().startsWith("AsyncSemaphore("), s.toString());
    }

    @Test
    void waitersSeeCancellationExceptionWhenCancelled() {
        AsyncSemaphore s = drained(5);
        CompletableFuture<Permit> f = s.acquire();
        f.cancel(true);
        assertThrows(CancellationException.class, f::join);
        assertTrue(f.isCancelled());
        assertState(s, 0, 0);
    }

    /** A semaphore with [total] permits, all taken: every acquisition waits until release(). */
    static AsyncSemaphore drained(int total) {
        AsyncSemaphore s = AsyncSemaphore.create(total);
        assertEquals(total, s.drainPermits());
        return s;
    }

    static <X extends Throwable> void assertMessage(Class<X> type, String fragment, org.junit.jupiter.api.function.Executable call) {
        X e = assertThrows(type, call);
        assertTrue(String.valueOf(e.getMessage()).contains(fragment),
                "expected the message to name '" + fragment + "', was: " + e.getMessage());
    }

    @Test
    void everyWayOfCompletingAPendingFutureWithdrawsItsRequest() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquire().join();
        List<CompletableFuture<Permit>> pending = new ArrayList<>();
        for (int i = 0; i < 5; i++) pending.add(s.acquire());
        assertEquals(5, s.queueLength());
        assertTrue(pending.get(0).cancel(false));
        assertTrue(pending.get(1).completeExceptionally(new IllegalStateException("given up")));
        pending.get(2).completeAsync(() -> { throw new IllegalStateException("given up"); });
        pending.get(3).completeOnTimeout(null, 1, java.util.concurrent.TimeUnit.MILLISECONDS);
        pending.get(4).orTimeout(1, java.util.concurrent.TimeUnit.MILLISECONDS);
        for (CompletableFuture<Permit> f : pending) {
            assertThrows(Exception.class, () -> {
                if (f.get(5, java.util.concurrent.TimeUnit.SECONDS) == null) throw new IllegalStateException("no permit");
            });
        }
        assertEquals(0, s.queueLength(), "every request left the line at once");
        held.close();
        assertEquals(1, s.availablePermits());
    }

    @Test
    void aRequestGrantedAtOnceGetsTheJdksCompletedFuture() throws Exception {
        // Permit was a CompletableFuture of itself; now it is a plain handle, and a request granted at once
        // gets CompletableFuture.completedFuture(permit): completing or cancelling it does nothing, and the
        // Permit it holds must be closed. (Unobserved: an observed request is watched for a leak, through a future of ours.)
        AsyncSemaphore s = Unobserved.create(() -> AsyncSemaphore.create(2));
        CompletableFuture<Permit> f = s.acquire();
        assertSame(CompletableFuture.class, f.getClass(), "the JDK's own future, not a subclass");
        assertTrue(f.isDone());
        Permit p = f.getNow(null);
        assertFalse(f.cancel(true), "done from the start: cancelling does nothing");
        assertFalse(f.isCancelled());
        assertFalse(f.complete(null));
        assertFalse(f.completeExceptionally(new IllegalStateException("too late")));
        assertSame(p, f.completeAsync(() -> null).join());
        assertSame(p, f.join());
        assertFalse(p.isReleased());
        assertState(s, 1, 0);
        assertEquals(1, f.thenApply(Permit::permits).join());
        p.close();
        p.close();
        assertTrue(p.isReleased());
        assertState(s, 2, 0);
        try (Permit blocking = s.acquireBlocking(2)) {
            Object handle = blocking;
            assertFalse(handle instanceof java.util.concurrent.Future, "a Permit is a plain handle, not a future");
            assertEquals(2, blocking.permits());
            assertState(s, 0, 0);
        }
        assertState(s, 2, 0);
        assertFalse(java.util.concurrent.Future.class.isAssignableFrom(Permit.class));
        assertTrue(AutoCloseable.class.isAssignableFrom(Permit.class));
    }

    /**
     * The uncontended path, measured: acquire().join().close() allocates the JDK's completed future and
     * the Permit handle, nothing else (no waiter, no function, no second future). Both sizes are measured
     * here, on this JVM, rather than assumed (24 B each with compressed oops).
     */
    @Test
    void anUncontendedAcquisitionAllocatesAJdkFutureAndAPermitOnly() throws InterruptedException {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        AsyncSemaphore s = Unobserved.create(() -> AsyncSemaphore.create(2)); // what an unobserved request allocates
        Permit held = s.acquireBlocking(); // one permit stays held: its hold is the one each Permit below wraps
        int n = 100_000;
        Object[] kept = new Object[n]; // every object escapes: the JIT cannot remove an allocation
        long bare = Long.MAX_VALUE;
        long handle = Long.MAX_VALUE;
        long ours = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) { // the least of 5 rounds: the first ones load and compile
            long t0 = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) kept[i] = CompletableFuture.completedFuture(kept);
            long t1 = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) kept[i] = Permit.OF_HOLD.invoke(held.hold); // a Permit alone
            long t2 = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                CompletableFuture<Permit> f = s.acquire();
                kept[i] = f;
                f.join().close();
            }
            long t3 = threads.getCurrentThreadAllocatedBytes();
            bare = Math.min(bare, (t1 - t0) / n);
            handle = Math.min(handle, (t2 - t1) / n);
            ours = Math.min(ours, (t3 - t2) / n);
        }
        assertTrue(bare > 0 && handle > 0, "measured nothing: future " + bare + " B, Permit " + handle + " B");
        assertTrue(ours <= bare + handle,
                "acquire().join().close() allocated " + ours + " B; a completed CompletableFuture is " + bare + " B, a Permit " + handle + " B");
        held.close();
        assertState(s, 2, 0);
    }
}
