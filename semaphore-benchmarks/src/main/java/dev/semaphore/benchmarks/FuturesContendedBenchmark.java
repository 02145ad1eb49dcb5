/*
 * Java futures under contention: `tasks` tasks share `sections` critical sections; each section does
 * geometric work of mean 50 outside, acquires, works (mean 50) inside, releases.
 *
 * - ours (AsyncSemaphore) and ibm (FairAsyncSemaphore): the tasks are asynchronous loops on a fixed pool of
 *   2 threads. A permit granted at once is used inline; otherwise the loop continues on the pool when the
 *   future completes (thenAcceptAsync), so no thread ever blocks and the stack stays flat.
 * - juc (java.util.concurrent.Semaphore, fair): the classic blocking model, one platform thread per task.
 *
 * Score = time for all sections (lower is better). Invariants checked: every section runs exactly once and
 * every permit is back at the end.
 */
package dev.semaphore.benchmarks;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** Futures under contention: ours vs IBM async-util vs java.util.concurrent with blocking threads. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class FuturesContendedBenchmark {
    /** ours = dev.semaphore.async.AsyncSemaphore, ibm = FairAsyncSemaphore, juc = fair java.util.concurrent.Semaphore. */
    @Param({"ours", "ibm", "juc"})
    public String impl;

    /** Concurrent tasks (asynchronous loops, or threads for juc). */
    @Param({"16", "1000"})
    public int tasks;

    /** Permits of the semaphore. */
    @Param({"1", "8"})
    public int permits;

    /**
     * Critical sections per invocation, split over the tasks. Fewer than the coroutine benchmarks: with one
     * permit every section of the asynchronous implementations is a hand-over through the pool's queue and a
     * thread wake-up (tens of microseconds).
     */
    @Param({"20000"})
    public int sections;

    private ExecutorService pool;

    /** A fixed pool of 2 threads for the futures, or a cached pool (one thread per task) for juc. */
    @Setup(Level.Trial)
    public void setUp() {
        if (impl.equals("juc")) {
            pool = Executors.newCachedThreadPool(ManyThreads.daemons("bench-juc-"));
        } else if (impl.equals("ours") || impl.equals("ibm")) {
            pool = Executors.newFixedThreadPool(2, ManyThreads.daemons("bench-futures-"));
        } else {
            throw new IllegalArgumentException("unknown impl '" + impl + "' (expected ours, ibm or juc)");
        }
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdownNow();
    }

    /** All sections on a fresh semaphore. */
    @Benchmark
    public long contended() throws InterruptedException, ExecutionException {
        return switch (impl) {
            case "ours" -> runAsync(new OursPermits(AsyncSemaphore.create(permits)));
            case "ibm" -> runAsync(new IbmPermits(new FairAsyncSemaphore(permits)));
            default -> runBlocking(new Semaphore(permits, true));
        };
    }

    /** An asynchronous permit source: acquire gives a future of a token that release takes back. */
    interface AsyncPermits {
        CompletableFuture<?> acquire();

        void release(Object token);

        int available();
    }

    static final class OursPermits implements AsyncPermits {
        final AsyncSemaphore s;

        OursPermits(AsyncSemaphore s) {
            this.s = s;
        }

        @Override
        public CompletableFuture<?> acquire() {
            return s.acquire();
        }

        @Override
        public void release(Object token) {
            ((Permit) token).close();
        }

        @Override
        public int available() {
            return s.availablePermits();
        }
    }

    static final class IbmPermits implements AsyncPermits {
        final FairAsyncSemaphore s;

        IbmPermits(FairAsyncSemaphore s) {
            this.s = s;
        }

        @Override
        public CompletableFuture<?> acquire() {
            return s.acquire().toCompletableFuture();
        }

        @Override
        public void release(Object token) {
            s.release();
        }

        @Override
        public int available() {
            return (int) s.getAvailablePermits();
        }
    }

    /** Runs every section as asynchronous loops on the pool (package-private for FuturesContendedBenchmarkTest). */
    long runAsync(AsyncPermits sem) throws InterruptedException, ExecutionException {
        List<AsyncLoop> loops = new ArrayList<>(tasks);
        for (int i = 0; i < tasks; i++) {
            int mine = sections / tasks + (i < sections % tasks ? 1 : 0);
            AsyncLoop loop = new AsyncLoop(sem, pool, mine, Workloads.seed(i));
            loops.add(loop);
            pool.execute(loop::run);
        }
        long digest = 0;
        int done = 0;
        for (AsyncLoop loop : loops) {
            digest += loop.done.get();
            done += loop.completed;
        }
        check(done, sem.available());
        return digest;
    }

    private long runBlocking(Semaphore sem) throws InterruptedException, ExecutionException {
        List<Future<long[]>> futures = new ArrayList<>(tasks);
        for (int i = 0; i < tasks; i++) {
            int mine = sections / tasks + (i < sections % tasks ? 1 : 0);
            long seed = Workloads.seed(i);
            futures.add(pool.submit(() -> {
                long x = seed;
                for (int k = 0; k < mine; k++) {
                    x = Workloads.geometricWork(x, ContendedBenchmark.WORK);
                    sem.acquire();
                    try {
                        x = Workloads.geometricWork(x, ContendedBenchmark.WORK);
                    } finally {
                        sem.release();
                    }
                }
                return new long[] {x, mine};
            }));
        }
        long digest = 0;
        int done = 0;
        for (Future<long[]> f : futures) {
            long[] r = f.get();
            digest += r[0];
            done += (int) r[1];
        }
        check(done, sem.availablePermits());
        return digest;
    }

    private void check(int done, int available) {
        if (done != sections) throw new IllegalStateException("ran " + done + " sections, expected " + sections);
        if (available != permits) throw new IllegalStateException(available + " permits free at the end, expected " + permits);
    }

    /**
     * One task: a loop of sections that never blocks. Its fields are touched by one thread at a time: the
     * pool hands the loop from thread to thread through execute()/thenAcceptAsync, which order the accesses.
     */
    static final class AsyncLoop {
        final AsyncPermits sem;
        final ExecutorService pool;
        final CompletableFuture<Long> done = new CompletableFuture<>();
        int remaining;
        int completed;
        long x;

        AsyncLoop(AsyncPermits sem, ExecutorService pool, int sections, long seed) {
            this.sem = sem;
            this.pool = pool;
            this.remaining = sections;
            this.x = seed;
        }

        void run() {
            try {
                while (remaining > 0) {
                    x = Workloads.geometricWork(x, ContendedBenchmark.WORK);
                    CompletableFuture<?> f = sem.acquire();
                    if (f.isDone()) {
                        section(f.join());
                        continue;
                    }
                    f.thenAcceptAsync(token -> {
                        section(token);
                        run();
                    }, pool).exceptionally(e -> {
                        done.completeExceptionally(e);
                        return null;
                    });
                    return;
                }
                done.complete(x);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        }

        private void section(Object token) {
            try {
                x = Workloads.geometricWork(x, ContendedBenchmark.WORK);
            } finally {
                sem.release(token);
            }
            remaining--;
            completed++;
        }
    }
}
