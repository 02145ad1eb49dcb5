package dev.semaphore.async;

import static dev.semaphore.async.AsyncSemaphoreTest.assertMessage;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.PrioritySemaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** AsyncPrioritySemaphore: priority order, sharing with Kotlin coroutines, factories and misuse. */
class AsyncPrioritySemaphoreTest {

    @Test
    void higherPriorityIsServedFirstAndFifoAmongEquals() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1);
        Permit held = s.acquire().join();
        List<String> order = new ArrayList<>();
        List<CompletableFuture<Permit>> all = new ArrayList<>();
        String[] names = {"low-a", "high", "mid", "low-b"};
        int[] priorities = {0, 10, 5, 0};
        for (int i = 0; i < names.length; i++) {
            String name = names[i];
            CompletableFuture<Permit> f = s.acquire(priorities[i], 1);
            f.thenRun(() -> order.add(name));
            all.add(f);
        }
        assertEquals(4, s.queueLength());
        assertEquals(2, s.queueLength(0));
        assertEquals(1, s.queueLength(10));
        assertFalse(s.tryAcquire(10, 1), "a queued waiter of priority 10 goes first");
        held.close();
        for (int i = 0; i < 3; i++) {
            CompletableFuture<Permit> done = all.stream().filter(f -> f.isDone() && !f.join().isReleased()).findFirst().orElseThrow();
            done.join().close();
        }
        all.forEach(f -> f.join().close());
        assertEquals(List.of("high", "mid", "low-a", "low-b"), order);
        assertEquals(1, s.availablePermits());
    }

    @Test
    void kotlinCoroutinesAndJavaFuturesWaitInOnePriorityLine() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1);
        PrioritySemaphore kotlin = s.asKotlin();
        Permit held = s.acquire().join();
        List<String> order = new ArrayList<>();
        TestSupport.kotlinAcquire(kotlin, 3, 1).thenRun(() -> order.add("coroutine@3"));
        s.acquire(7, 1).thenRun(() -> order.add("future@7"));
        assertEquals(2, s.queueLength());
        held.close();
        assertEquals(List.of("future@7"), order);
        s.release();
        assertEquals(List.of("future@7", "coroutine@3"), order);
        kotlin.release(1);
        assertEquals(1, s.availablePermits());
    }

    @Test
    void timedAndBlockingForms() throws Exception {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1, Duration.ofSeconds(1));
        try (Permit p = s.acquireBlocking(2, 1)) {
            failsWith(TimeoutException.class, s.acquire(9, 1, Duration.ofMillis(5)));
            assertFalse(s.tryAcquire(9, 1, Duration.ofMillis(1)));
            assertTrue(s.acquireBlocking(1, 1, Duration.ZERO).isEmpty());
            assertEquals(1, p.permits());
        }
        assertTrue(s.tryAcquire(0, 1, Duration.ofSeconds(1)));
        s.release(1);
        assertEquals(1, s.availablePermits());
        assertEquals(0, s.queueLength());
    }

    @Test
    void factoriesAndMisuse() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(2);
        assertSame(s.asKotlin(), AsyncPrioritySemaphore.of(s.asKotlin()).asKotlin());
        assertMessage(IllegalArgumentException.class, "was -1", () -> AsyncPrioritySemaphore.create(-1));
        assertMessage(IllegalArgumentException.class, "was 0s", () -> AsyncPrioritySemaphore.create(1, Duration.ZERO));
        assertMessage(NullPointerException.class, "aging", () -> AsyncPrioritySemaphore.create(1, null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.acquire(5, 0));
        assertMessage(IllegalArgumentException.class, "3 permits", () -> s.acquire(5, 3));
        assertMessage(NullPointerException.class, "timeout", () -> s.acquire(5, 1, null));
        assertMessage(IllegalStateException.class, "cannot release", s::release);
        assertEquals(2, s.availablePermits());
        assertEquals(0, s.queueLength());
        PrioritySemaphore foreign = TestSupport.foreignImplementation(PrioritySemaphore.class, "RemotePool");
        AsyncPrioritySemaphore view = AsyncPrioritySemaphore.of(foreign);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> view.acquire(1, 1));
        assertTrue(e.getMessage().contains("RemotePool"), e.getMessage());
    }

    @Test
    void closeFailsWaitersOfEveryPriority() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1);
        Permit held = s.acquire().join();
        CompletableFuture<Permit> a = s.acquire(1, 1);
        CompletableFuture<Permit> b = s.acquire(-4, 1);
        s.close(null);
        assertTrue(s.isClosed());
        failsWith(dev.semaphore.SemaphoreClosedException.class, a);
        failsWith(dev.semaphore.SemaphoreClosedException.class, b);
        held.close();
        assertEquals(1, s.availablePermits());
    }
}
