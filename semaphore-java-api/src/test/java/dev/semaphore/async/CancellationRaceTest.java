package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Cancellation, caller completion, timeouts and interrupts racing with grants, on several threads at
 * once, many times. Checked throughout: never more holders than permits; checked at the end: every
 * permit is back and the line is empty (nothing lost, nothing counted twice).
 */
class CancellationRaceTest {
    private static final int THREADS = 4;
    private static final int ROUNDS = 4_000 * TestSupport.SCALE;

    private final AtomicInteger holders = new AtomicInteger();
    private final AtomicInteger maxHolders = new AtomicInteger();
    private final LongAdder grantedAndUsed = new LongAdder();
    private final LongAdder withdrawn = new LongAdder();
    private final LongAdder cancelLost = new LongAdder();

    /** Uses a permit that the caller received: counts holders, then gives it back. */
    private void use(Permit p, int limit) {
        int h = holders.incrementAndGet();
        maxHolders.accumulateAndGet(h, Math::max);
        assertTrue(h <= limit, "more holders than permits: " + h);
        if (ThreadLocalRandom.current().nextInt(8) == 0) Thread.yield();
        holders.decrementAndGet();
        grantedAndUsed.increment();
        p.close();
    }

    /** One request, withdrawn in one of several ways at a random moment; settles whatever it got. */
    private void oneRequest(AsyncSemaphore s, int limit) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        int permits = 1 + r.nextInt(2);
        CompletableFuture<Permit> f;
        switch (r.nextInt(6)) {
            case 0:
                f = s.acquire(permits, Duration.ofNanos(r.nextInt(200_000)));
                break;
            default:
                f = s.acquire(permits);
        }
        if (r.nextBoolean()) Thread.yield();
        boolean won;
        int how = r.nextInt(5);
        switch (how) {
            case 0:
                won = f.cancel(true);
                break;
            case 1:
                won = f.completeExceptionally(new TimeoutException("caller gave up"));
                break;
            case 2:
                won = f.complete(null);
                break;
            default:
                won = false; // just wait for it (or its timeout)
        }
        if (won) {
            withdrawn.increment();
            return;
        }
        Permit p = settle(f, s);
        if (p != null) {
            if (how <= 2) cancelLost.increment(); // the caller tried to withdraw, the grant had won
            use(p, limit);
        } else {
            withdrawn.increment(); // timed out
        }
    }

    /**
     * The permit the future delivered, or null if it failed. Waits at most 20 s: a request that is
     * never served means permits were lost, and the test should fail saying so instead of hanging.
     */
    private static Permit settle(CompletableFuture<Permit> f, Object state) {
        try {
            return f.handle((permit, error) -> permit).get(20, java.util.concurrent.TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("a request was never served (permits lost?): " + state);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Joins [threads]; if one is still blocked after 30 s (permits lost), interrupts them all and fails. */
    private static void joinOrFail(List<Thread> threads, AtomicBoolean stop, Object state) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (Thread t : threads) {
            t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                stop.set(true);
                threads.forEach(Thread::interrupt);
                throw new AssertionError("a worker never got its permits (permits lost?): " + state);
            }
        }
    }

    @Test
    void futuresWithdrawnInEveryWayWhileOthersReleaseLoseNoPermit() throws Exception {
        int limit = 3;
        AsyncSemaphore s = AsyncSemaphore.create(limit);
        runConcurrently(() -> oneRequest(s, limit));
        assertEquals(limit, s.availablePermits(), "every permit is back");
        assertEquals(0, s.queueLength());
        assertTrue(maxHolders.get() <= limit);
        System.out.printf("future races: %d used, %d withdrawn, %d withdrawals lost to the grant (permit used instead); max holders %d of %d%n",
                grantedAndUsed.sum(), withdrawn.sum(), cancelLost.sum(), maxHolders.get(), limit);
        assertEquals((long) THREADS * ROUNDS, grantedAndUsed.sum() + withdrawn.sum());
    }

    @Test
    void blockingWaitersInterruptedAndTimedOutAtRandomLoseNoPermit() throws Exception {
        int limit = 2;
        AsyncSemaphore s = AsyncSemaphore.create(limit);
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        LongAdder interrupts = new LongAdder();
        int perThread = ROUNDS / 4;
        for (int t = 0; t < THREADS; t++) {
            Thread w = new Thread(() -> {
                ThreadLocalRandom r = ThreadLocalRandom.current();
                for (int i = 0; i < perThread && !stop.get(); i++) {
                    try {
                        if (r.nextBoolean()) {
                            use(s.acquireBlocking(), limit);
                        } else {
                            s.acquireBlocking(1, Duration.ofNanos(r.nextInt(100_000))).ifPresent(p -> use(p, limit));
                        }
                    } catch (InterruptedException e) {
                        interrupts.increment();
                    }
                }
            });
            workers.add(w);
        }
        Thread chaos = new Thread(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            while (!stop.get()) {
                workers.get(r.nextInt(workers.size())).interrupt();
                Thread.yield();
            }
        });
        workers.forEach(Thread::start);
        chaos.start();
        try {
            joinOrFail(workers, stop, s);
        } finally {
            stop.set(true);
            chaos.join();
        }
        assertEquals(limit, s.availablePermits(), "every permit is back");
        assertEquals(0, s.queueLength());
        System.out.printf("blocking races: %d used, %d InterruptedExceptions, max holders %d of %d%n",
                grantedAndUsed.sum(), interrupts.sum(), maxHolders.get(), limit);
    }

    @Test
    void lockRequestsCancelledAndTimedOutKeepMutualExclusionAndFreeTheLock() throws Exception {
        AsyncLock lock = AsyncLock.create();
        runConcurrently(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            CompletableFuture<Permit> f = r.nextInt(3) == 0
                    ? lock.lock(Duration.ofNanos(r.nextInt(100_000)))
                    : lock.lock();
            if (r.nextBoolean()) Thread.yield();
            if (r.nextInt(3) == 0 && f.cancel(false)) {
                withdrawn.increment();
                return;
            }
            Permit p = settle(f, lock);
            if (p == null) {
                withdrawn.increment();
                return;
            }
            use(p, 1);
        });
        assertFalse(lock.isLocked(), "the lock is free at the end");
        assertEquals(0, lock.queueLength());
        assertEquals(1, maxHolders.get());
        assertEquals((long) THREADS * ROUNDS, grantedAndUsed.sum() + withdrawn.sum());
    }

    @Test
    void mixedFrontEndsOnOneSemaphoreConservePermits() throws Exception {
        int limit = 3;
        AsyncSemaphore s = AsyncSemaphore.create(limit);
        dev.semaphore.Semaphore kotlin = s.asKotlin();
        runConcurrently(() -> {
            ThreadLocalRandom r = ThreadLocalRandom.current();
            switch (r.nextInt(3)) {
                case 0:
                    oneRequest(s, limit);
                    break;
                case 1:
                    if (kotlin.tryAcquire(1)) {
                        holders.incrementAndGet();
                        holders.decrementAndGet();
                        grantedAndUsed.increment();
                        kotlin.release(1);
                    } else {
                        withdrawn.increment();
                    }
                    break;
                default:
                    try {
                        s.acquireBlocking(1, Duration.ofNanos(r.nextInt(50_000)))
                                .ifPresentOrElse(p -> use(p, limit), withdrawn::increment);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
            }
        });
        assertEquals(limit, s.availablePermits());
        assertEquals(0, s.queueLength());
    }

    private static void runConcurrently(Runnable oneRound) throws Exception {
        List<Thread> threads = new ArrayList<>();
        AtomicReferenceError error = new AtomicReferenceError();
        for (int t = 0; t < THREADS; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (int i = 0; i < ROUNDS; i++) oneRound.run();
                } catch (Throwable e) {
                    error.set(e);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) th.join();
        error.rethrow();
    }

    private static final class AtomicReferenceError {
        private final java.util.concurrent.atomic.AtomicReference<Throwable> first = new java.util.concurrent.atomic.AtomicReference<>();

        void set(Throwable t) {
            first.compareAndSet(null, t);
        }

        void rethrow() throws Exception {
            Throwable t = first.get();
            if (t instanceof Exception) throw (Exception) t;
            if (t instanceof Error) throw (Error) t;
        }
    }
}
