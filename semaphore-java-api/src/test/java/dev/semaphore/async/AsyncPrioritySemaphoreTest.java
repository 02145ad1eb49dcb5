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
            CompletableFuture<Permit> f = s.atPriority(priorities[i]).acquire();
            f.thenRun(() -> order.add(name));
            all.add(f);
        }
        assertEquals(4, s.queueLength());
        assertEquals(2, s.queueLength(0));
        assertEquals(1, s.queueLength(10));
        assertFalse(s.atPriority(10).tryAcquire(), "a queued waiter of priority 10 goes first");
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
        TestSupport.kotlinAcquireAtPriority(kotlin, 3).thenRun(() -> order.add("coroutine@3"));
        CompletableFuture<Permit> future = s.atPriority(7).acquire();
        future.thenRun(() -> order.add("future@7"));
        assertEquals(2, s.queueLength());
        assertEquals(1, s.queueLength(3));
        assertEquals(1, s.queueLength(7));
        held.close();
        assertEquals(List.of("future@7"), order);
        future.join().close();
        assertEquals(List.of("future@7", "coroutine@3"), order);
        kotlin.release(1);
        assertEquals(1, s.availablePermits());
        assertEquals(0, s.queueLength());
    }

    @Test
    void timedAndBlockingForms() throws Exception {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1, Duration.ofSeconds(1));
        try (Permit p = s.atPriority(2).acquireBlocking()) {
            failsWith(TimeoutException.class, s.atPriority(9).acquire(1, Duration.ofMillis(5)));
            failsWith(TimeoutException.class, s.atPriority(9).acquire(Duration.ofMillis(5)));
            assertFalse(s.atPriority(9).tryAcquire(1, Duration.ofMillis(1)));
            assertFalse(s.atPriority(9).tryAcquire(Duration.ofMillis(1)));
            assertTrue(s.atPriority(1).acquireBlocking(1, Duration.ZERO).isEmpty());
            assertTrue(s.atPriority(1).acquireBlocking(Duration.ofMillis(1)).isEmpty());
            assertEquals(1, p.permits());
            assertEquals(0, s.queueLength(), "every timed request left the line");
        }
        assertTrue(s.tryAcquire(1, Duration.ofSeconds(1)));
        s.release(1);
        assertEquals(1, s.availablePermits());
        assertEquals(0, s.queueLength());
    }

    @Test
    void atPriorityIsAViewOfTheSameSemaphore() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(3);
        assertEquals(0, s.priority(), "create gives priority 0");
        assertEquals(0, AsyncPrioritySemaphore.of(s.asKotlin()).priority(), "of gives priority 0");
        AsyncPrioritySemaphore high = s.atPriority(10);
        assertEquals(10, high.priority());
        assertSame(s.asKotlin(), high.asKotlin(), "the same Kotlin semaphore");
        assertSame(s, s.atPriority(0), "a view at its own priority is itself");
        assertEquals(-3, high.atPriority(-3).priority());
        assertEquals(0, high.atPriority(0).priority());
        Permit two = high.acquire(2).join();
        assertEquals(1, s.availablePermits(), "one count of permits for every view");
        assertEquals(1, high.atPriority(-3).availablePermits());
        assertEquals(3, high.totalPermits());
        assertTrue(high.toString().contains("priority 10"), high.toString());
        two.close();
        assertEquals(3, s.availablePermits());
        assertEquals(0, s.queueLength());
    }

    @Test
    void factoriesAndMisuse() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(2);
        assertSame(s.asKotlin(), AsyncPrioritySemaphore.of(s.asKotlin()).asKotlin());
        assertMessage(IllegalArgumentException.class, "was -1", () -> AsyncPrioritySemaphore.create(-1));
        assertMessage(IllegalArgumentException.class, "was 0s", () -> AsyncPrioritySemaphore.create(1, Duration.ZERO));
        assertMessage(NullPointerException.class, "aging", () -> AsyncPrioritySemaphore.create(1, null));
        assertMessage(NullPointerException.class, "shared", () -> AsyncPrioritySemaphore.of(null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.atPriority(5).acquire(0));
        assertMessage(IllegalArgumentException.class, "3 permits", () -> s.atPriority(5).acquire(3));
        assertMessage(NullPointerException.class, "timeout", () -> s.atPriority(5).acquire(1, null));
        assertMessage(IllegalArgumentException.class, "was 0", () -> s.atPriority(5).tryAcquire(0));
        assertMessage(IllegalArgumentException.class, "3 permits", () -> s.atPriority(-5).withPermit(3, () -> CompletableFuture.completedFuture(1)));
        assertMessage(IllegalStateException.class, "cannot release", s::release);
        assertEquals(2, s.availablePermits());
        assertEquals(0, s.queueLength());
        PrioritySemaphore foreign = TestSupport.foreignImplementation(PrioritySemaphore.class, "RemotePool");
        AsyncPrioritySemaphore view = AsyncPrioritySemaphore.of(foreign);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> view.atPriority(1).acquire());
        assertTrue(e.getMessage().contains("RemotePool"), e.getMessage());
    }

    @Test
    void closeFailsWaitersOfEveryPriority() {
        AsyncPrioritySemaphore s = AsyncPrioritySemaphore.create(1);
        Permit held = s.acquire().join();
        CompletableFuture<Permit> a = s.atPriority(1).acquire();
        CompletableFuture<Permit> b = s.atPriority(-4).acquire();
        AsyncPrioritySemaphore view = s.atPriority(3);
        view.close(null); // a view closes the one semaphore it views
        assertTrue(s.isClosed());
        assertTrue(s.atPriority(-4).isClosed());
        failsWith(dev.semaphore.SemaphoreClosedException.class, a);
        failsWith(dev.semaphore.SemaphoreClosedException.class, b);
        held.close();
        assertEquals(1, s.availablePermits());
    }
}
