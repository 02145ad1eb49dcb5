package dev.semaphore.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.async.AsyncSemaphore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the report says of FuturesContendedBenchmark's rows: with 8 permits no acquisition ever waits (the two pool
 * threads hold at most two permits at once, since a loop runs its granted section inline and releases before it
 * asks again), so those rows time the granted-at-once acquire under two threads.
 */
class FuturesContendedBenchmarkTest {
    /** Counts the acquisitions whose future was not done when acquire() returned. */
    static final class CountingPermits implements FuturesContendedBenchmark.AsyncPermits {
        final FuturesContendedBenchmark.AsyncPermits inner;
        final AtomicInteger acquired = new AtomicInteger();
        final AtomicInteger waited = new AtomicInteger();

        CountingPermits(FuturesContendedBenchmark.AsyncPermits inner) {
            this.inner = inner;
        }

        @Override
        public CompletableFuture<?> acquire() {
            CompletableFuture<?> f = inner.acquire();
            acquired.incrementAndGet();
            if (!f.isDone()) waited.incrementAndGet();
            return f;
        }

        @Override
        public void release(Object token) {
            inner.release(token);
        }

        @Override
        public int available() {
            return inner.available();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {16, 1000})
    void withEightPermitsNoAcquisitionWaits(int tasks) throws Exception {
        FuturesContendedBenchmark b = new FuturesContendedBenchmark();
        b.impl = "ours";
        b.permits = 8;
        b.tasks = tasks;
        b.sections = 20_000;
        b.setUp();
        try {
            CountingPermits counting = new CountingPermits(new FuturesContendedBenchmark.OursPermits(AsyncSemaphore.create(8)));
            b.runAsync(counting); // checks every section ran once and every permit is back
            assertEquals(20_000, counting.acquired.get());
            assertEquals(0, counting.waited.get(), "with 8 permits and 2 pool threads no acquisition waits");
        } finally {
            b.tearDown();
        }
    }

    @Test
    void theCountSeesAnAcquisitionThatWaits() {
        CountingPermits counting = new CountingPermits(new FuturesContendedBenchmark.OursPermits(AsyncSemaphore.create(1)));
        CompletableFuture<?> first = counting.acquire();
        CompletableFuture<?> second = counting.acquire();
        assertEquals(1, counting.waited.get(), "the second waits behind the first");
        counting.release(first.join());
        assertTrue(second.isDone());
        counting.release(second.join());
        assertEquals(1, counting.available());
    }
}
