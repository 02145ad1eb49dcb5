package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * 100,000 queued waiters whose continuations release synchronously: each release grants the next waiter
 * while the previous continuation is still on the stack. Without the engine's trampoline this is a
 * 100,000-deep recursion (several frames per link); with it the stack stays flat. The chain runs on a
 * thread with a deliberately SMALL stack (256 KiB, a quarter to a half of the usual default), and the
 * stack depth is sampled inside the continuations.
 */
class StackSafetyTest {
    private static final int WAITERS = 100_000;
    private static final long SMALL_STACK = 256 * 1024;

    @Test
    void aChainOfSynchronousReleasesDoesNotGrowTheStack() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit first = s.acquire().join();
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger maxDepth = new AtomicInteger();
        AtomicInteger firstDepth = new AtomicInteger();
        List<CompletableFuture<Void>> ends = new ArrayList<>(WAITERS);
        for (int i = 0; i < WAITERS; i++) {
            ends.add(s.acquire().thenAccept(p -> {
                int n = completed.incrementAndGet();
                if (n == 1 || n % 97 == 0 || n == WAITERS) {
                    int depth = StackWalker.getInstance().walk(frames -> (int) frames.count());
                    if (n == 1) firstDepth.set(depth);
                    maxDepth.accumulateAndGet(depth, Math::max);
                }
                p.close(); // synchronous release: grants the next waiter right here
            }));
        }
        assertEquals(WAITERS, s.queueLength());

        Throwable failure = runOnSmallStack(first::close);
        assertNull(failure, () -> "the chain failed: " + failure);
        assertEquals(WAITERS, completed.get(), "every waiter was served");
        assertTrue(ends.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()));
        assertEquals(1, s.availablePermits());
        assertEquals(0, s.queueLength());
        assertEquals(firstDepth.get(), maxDepth.get(), "the depth of the last link equals that of the first");
        System.out.printf("stack safety: %,d chained waiters on a %d KiB stack; stack depth in the continuation: first %d frames, max %d frames%n",
                WAITERS, SMALL_STACK / 1024, firstDepth.get(), maxDepth.get());
    }

    @Test
    void aChainOfLockHandOversDoesNotGrowTheStack() throws Exception {
        AsyncLock lock = AsyncLock.create();
        Permit first = lock.lock().join();
        AtomicInteger completed = new AtomicInteger();
        for (int i = 0; i < WAITERS; i++) {
            lock.lock().thenAccept(p -> {
                completed.incrementAndGet();
                p.close();
            });
        }
        Throwable failure = runOnSmallStack(first::close);
        assertNull(failure, () -> "the chain failed: " + failure);
        assertEquals(WAITERS, completed.get());
        assertEquals(false, lock.isLocked());
    }

    @Test
    void aChainOfWithPermitActionsDoesNotGrowTheStack() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit first = s.acquire().join();
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> results = new ArrayList<>(WAITERS);
        for (int i = 0; i < WAITERS; i++) {
            results.add(s.withPermit(() -> CompletableFuture.completedFuture(ran.incrementAndGet())));
        }
        Throwable failure = runOnSmallStack(first::close);
        assertNull(failure, () -> "the chain failed: " + failure);
        assertEquals(WAITERS, ran.get());
        assertEquals(WAITERS, results.get(WAITERS - 1).join());
        assertEquals(1, s.availablePermits());
    }

    @Test
    void aGrantMadeInsideAContinuationIsDeliveredAfterItReturns() {
        // The price of the trampoline (WaiterQueue.kt, I7): inside a continuation, a release grants the next
        // waiter at once (its permits are taken) but its future completes only after the continuation
        // returns. So a continuation must never block waiting for what the next waiter would do.
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit first = s.acquire().join();
        CompletableFuture<Permit> a = s.acquire();
        CompletableFuture<Permit> b = s.acquire();
        AtomicReference<String> seenInside = new AtomicReference<>();
        a.thenAccept(p -> {
            p.close();
            seenInside.set("b done=" + b.isDone() + ", queued=" + s.queueLength() + ", free=" + s.availablePermits());
        });
        first.close();
        assertEquals("b done=false, queued=0, free=0", seenInside.get());
        assertTrue(b.isDone(), "delivered once the continuation returned, before close() returned");
        b.join().close();
        assertEquals(1, s.availablePermits());
    }

    @Test
    void controlANaiveRecursiveHandOffOverflowsTheSameStack() throws Exception {
        // The same 100,000-link chain WITHOUT a trampoline: each continuation completes the next future
        // directly, so each link nests inside the previous one. This shows that the stack used above is
        // small enough to catch a recursive hand-off, i.e. the tests above are not passing by luck.
        List<CompletableFuture<Integer>> links = new ArrayList<>(WAITERS + 1);
        for (int i = 0; i <= WAITERS; i++) links.add(new CompletableFuture<>());
        for (int i = 0; i < WAITERS; i++) {
            CompletableFuture<Integer> next = links.get(i + 1);
            links.get(i).thenAccept(v -> next.complete(v + 1));
        }
        Throwable failure = runOnSmallStack(() -> links.get(0).complete(0));
        // CompletableFuture catches the StackOverflowError in a dependent and fails that dependent with it.
        boolean overflowed = failure instanceof StackOverflowError
                || links.stream().anyMatch(f -> f.isCompletedExceptionally() || !f.isDone());
        assertTrue(overflowed, "a 100,000-deep recursive hand-off should not fit in " + SMALL_STACK / 1024 + " KiB");
    }

    /** Runs [body] on a new thread with a 256 KiB stack; returns what it threw (null if nothing). */
    private static Throwable runOnSmallStack(Runnable body) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(null, () -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, "small-stack", SMALL_STACK);
        t.start();
        t.join();
        return thrown.get();
    }
}
