package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.assertState;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.SemaphoreClosedException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** withPermit / withLock release the permits however the action ends. */
class WithPermitTest {

    @Test
    void releasesWhenTheStageCompletesNormally() {
        AsyncSemaphore s = AsyncSemaphore.create(2);
        CompletableFuture<String> work = new CompletableFuture<>();
        CompletableFuture<String> result = s.withPermit(2, () -> work);
        assertState(s, 0, 0);
        assertFalse(result.isDone());
        work.complete("done");
        assertEquals("done", result.join());
        assertState(s, 2, 0);
    }

    @Test
    void releasesWhenTheStageFails() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        IOException boom = new IOException("disk full");
        CompletableFuture<String> result = s.withPermit(() -> CompletableFuture.<String>supplyAsync(() -> {
            throw new IllegalStateException("wrapped");
        }).exceptionallyCompose(e -> CompletableFuture.failedFuture(boom)));
        assertSame(boom, failsWith(IOException.class, result));
        assertState(s, 1, 0);
    }

    @Test
    void releasesWhenTheActionThrows() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        IllegalStateException boom = new IllegalStateException("bad request");
        CompletableFuture<Integer> result = s.withPermit(() -> {
            throw boom;
        });
        assertSame(boom, failsWith(IllegalStateException.class, result));
        assertState(s, 1, 0);
    }

    @Test
    void releasesAndFailsWithNullPointerExceptionWhenTheActionReturnsNull() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        CompletableFuture<Integer> result = s.withPermit(() -> null);
        NullPointerException e = failsWith(NullPointerException.class, result);
        assertTrue(e.getMessage().contains("null"), e.getMessage());
        assertState(s, 1, 0);
    }

    @Test
    void theActionRunsOnlyOnceThePermitsAreGrantedAndInOrder() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquire().join();
        AtomicInteger started = new AtomicInteger();
        CompletableFuture<Integer> a = s.withPermit(() -> CompletableFuture.completedFuture(started.incrementAndGet()));
        CompletableFuture<Integer> b = s.withPermit(() -> CompletableFuture.completedFuture(started.incrementAndGet()));
        assertEquals(0, started.get());
        assertState(s, 0, 2);
        held.close();
        assertEquals(1, a.join());
        assertEquals(2, b.join());
        assertState(s, 1, 0);
    }

    @Test
    void cancellingTheResultBeforeTheGrantWithdrawsTheRequest() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquire().join();
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Integer> result = s.withPermit(() -> CompletableFuture.completedFuture(runs.incrementAndGet()));
        assertState(s, 0, 1);
        assertTrue(result.cancel(false));
        assertState(s, 0, 0);
        held.close();
        assertEquals(0, runs.get(), "the action never ran");
        assertState(s, 1, 0);
    }

    @Test
    void aClosedSemaphoreFailsTheResultWithoutRunningTheAction() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        s.close(null);
        AtomicInteger runs = new AtomicInteger();
        CompletableFuture<Integer> result = s.withPermit(() -> CompletableFuture.completedFuture(runs.incrementAndGet()));
        failsWith(SemaphoreClosedException.class, result);
        assertEquals(0, runs.get());
    }

    @Test
    void withLockUnlocksOnSuccessFailureThrowAndNull() {
        AsyncLock lock = AsyncLock.create();
        CompletableFuture<String> pending = new CompletableFuture<>();
        CompletableFuture<String> ok = lock.withLock(() -> {
            assertTrue(lock.isLocked(), "the lock is held while the action runs");
            return pending;
        });
        assertTrue(lock.isLocked());
        assertFalse(lock.tryLock(), "held until the action's stage completes");
        CompletableFuture<String> second = lock.withLock(() -> CompletableFuture.completedFuture("second"));
        assertFalse(second.isDone(), "a second withLock waits for the first stage");
        assertEquals(1, lock.queueLength());
        pending.complete("ok");
        assertEquals("second", second.join());
        assertEquals("ok", ok.join());
        assertFalse(lock.isLocked());

        failsWith(IOException.class, lock.withLock(() -> CompletableFuture.failedFuture(new IOException("x"))));
        assertFalse(lock.isLocked());
        failsWith(ArithmeticException.class, lock.<Integer>withLock(() -> {
            throw new ArithmeticException("/ by zero");
        }));
        assertFalse(lock.isLocked());
        failsWith(NullPointerException.class, lock.withLock(() -> (CompletionStage<Integer>) null));
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void prioritySemaphoreWithPermitReleases() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(2);
        Permit held = s.acquire(2).join();
        java.util.List<String> order = new java.util.ArrayList<>();
        CompletableFuture<Integer> low = s.withPermit(() -> {
            order.add("low");
            return CompletableFuture.completedFuture(1);
        });
        CompletableFuture<Integer> high = s.atPriority(5).withPermit(2, () -> {
            order.add("high, " + s.availablePermits() + " free");
            return CompletableFuture.completedFuture(7);
        });
        assertEquals(1, s.queueLength(0));
        assertEquals(1, s.queueLength(5));
        held.close(); // the priority-5 request, queued later, is served first, with both permits
        assertEquals(7, high.join());
        assertEquals(1, low.join());
        assertEquals(java.util.List.of("high, 0 free", "low"), order);
        failsWith(IllegalStateException.class, s.withPermit(() -> {
            throw new IllegalStateException();
        }));
        assertEquals(2, s.availablePermits());
        assertEquals(0, s.queueLength());
    }
}
