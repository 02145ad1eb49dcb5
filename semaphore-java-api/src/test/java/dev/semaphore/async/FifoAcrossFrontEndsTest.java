package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.semaphore.Lock;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Coroutines (Kotlin API), futures and blocked threads (Java API) stand in ONE first-come, first-served
 * line of one shared primitive. Each waiter records its name when granted and keeps its permits, so one
 * release grants exactly one waiter and the recorded order is the service order.
 */
class FifoAcrossFrontEndsTest {

    @Test
    void oneLineForCoroutinesFuturesAndBlockedThreads() throws Exception {
        Semaphore kotlin = SemaphoreKt.Semaphore(2);
        AsyncSemaphore java = AsyncSemaphore.of(kotlin);
        assertEquals(2, java.drainPermits());
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        List<Permit> blockingPermits = Collections.synchronizedList(new ArrayList<>());

        TestSupport.kotlinAcquire(kotlin, 1).thenRun(() -> order.add("coroutine-1"));
        await("coroutine-1 queued", () -> java.queueLength() == 1);
        java.acquire(2).thenRun(() -> order.add("future-2 (2 permits)"));
        await("future-2 queued", () -> java.queueLength() == 2);
        threads.add(blocked(java, "blocking-3", order, blockingPermits));
        await("blocking-3 queued", () -> java.queueLength() == 3);
        TestSupport.kotlinAcquire(kotlin, 1).thenRun(() -> order.add("coroutine-4"));
        await("coroutine-4 queued", () -> java.queueLength() == 4);
        java.acquire().thenRun(() -> order.add("future-5"));
        await("future-5 queued", () -> java.queueLength() == 5);
        threads.add(blocked(java, "blocking-6", order, blockingPermits));
        await("blocking-6 queued", () -> java.queueLength() == 6);

        List<String> expected = List.of(
                "coroutine-1", "future-2 (2 permits)", "blocking-3", "coroutine-4", "future-5", "blocking-6");
        int served = 0;
        int released = 0;
        while (served < expected.size()) {
            kotlin.release(1); // alternate the releasing side: Kotlin, then Java
            released++;
            if (released == 2) {
                // the 2-permit future is at the head: one permit does not fit and nobody behind may pass
                assertEquals(1, order.size(), "head-of-line blocking across front-ends: " + order);
                java.release();
                released++;
            }
            int want = ++served;
            await("waiter " + want + " served", () -> order.size() >= want);
            assertEquals(expected.subList(0, want), List.copyOf(order));
        }
        for (Thread t : threads) t.join();
        assertEquals(0, java.queueLength());
        assertEquals(0, java.availablePermits());
        assertEquals(2, blockingPermits.size());
        blockingPermits.forEach(Permit::close);
        assertEquals(2, java.availablePermits());
    }

    @Test
    void oneLineForKotlinAndJavaLockWaiters() throws Exception {
        AsyncLock lock = AsyncLock.create();
        Lock kotlin = lock.asKotlin();
        Permit first = lock.lockBlocking();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<?> c = TestSupport.kotlinLock(kotlin, "coroutine").thenRun(() -> order.add("coroutine"));
        CompletableFuture<Permit> f = lock.lock();
        f.thenRun(() -> order.add("future"));
        Thread t = new Thread(() -> {
            try {
                Permit p = lock.lockBlocking();
                order.add("thread");
                p.close();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        await("three lock waiters", () -> lock.queueLength() == 3);
        first.close();
        assertEquals(List.of("coroutine"), order);
        kotlin.unlock("coroutine");
        assertEquals(List.of("coroutine", "future"), order);
        f.join().close();
        t.join();
        assertEquals(List.of("coroutine", "future", "thread"), order);
        assertFalse(lock.isLocked());
        c.join();
    }

    private static Thread blocked(AsyncSemaphore s, String name, List<String> order, List<Permit> keep) {
        Thread t = new Thread(() -> {
            try {
                Permit p = s.acquireBlocking();
                order.add(name);
                keep.add(p);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, name);
        t.start();
        return t;
    }
}
