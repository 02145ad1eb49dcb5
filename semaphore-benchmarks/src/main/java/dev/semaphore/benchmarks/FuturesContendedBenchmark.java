package dev.semaphore.benchmarks;

import static dev.semaphore.benchmarks.ContendedShape.WORK;

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
import org.openjdk.jmh.annotations.*;

/**
 * Java futures under contention (docs/benchmarking.md#java-futures-contended): `tasks` tasks share `sections` critical
 * sections, each with geometric work of mean WORK outside and inside. ours and ibm: asynchronous loops on a fixed pool of
 * 2 threads that never block; juc: one blocking platform thread per task. Every run checks every section and permit.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class FuturesContendedBenchmark {
    /** ours = dev.semaphore.async.AsyncSemaphore, ibm = FairAsyncSemaphore, juc = fair java.util.concurrent.Semaphore. */
    @Param({"ours", "ibm", "juc"}) public String impl;

    @Param({"16", "1000"}) public int tasks;
    @Param({"1", "8"}) public int permits;

    /** Fewer than the coroutine benchmarks: with one permit, every section of ours and ibm is a thread wake-up. */
    @Param({"20000"}) public int sections;

    private ExecutorService pool;

    @Setup(Level.Trial)
    public void setUp() {
        pool = switch (impl) {
            case "juc" -> Executors.newCachedThreadPool(ManyThreads.daemons("bench-juc-"));
            case "ours", "ibm" -> Executors.newFixedThreadPool(2, ManyThreads.daemons("bench-futures-"));
            default -> throw new IllegalArgumentException("unknown impl '" + impl + "' (expected ours, ibm or juc)");
        };
    }

    @TearDown(Level.Trial) public void tearDown() { pool.shutdownNow(); }

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

    record OursPermits(AsyncSemaphore s) implements AsyncPermits {
        public CompletableFuture<?> acquire() { return s.acquire(); }
        public void release(Object token) { ((Permit) token).close(); }
        public int available() { return s.availablePermits(); }
    }

    record IbmPermits(FairAsyncSemaphore s) implements AsyncPermits {
        public CompletableFuture<?> acquire() { return s.acquire().toCompletableFuture(); }
        public void release(Object token) { s.release(); }
        public int available() { return (int) s.getAvailablePermits(); }
    }

    /** Runs every section as asynchronous loops on the pool (package-private for FuturesContendedBenchmarkTest). */
    long runAsync(AsyncPermits sem) throws InterruptedException, ExecutionException {
        List<AsyncLoop> loops = new ArrayList<>(tasks);
        for (int i = 0; i < tasks; i++) {
            AsyncLoop loop = new AsyncLoop(sem, pool, Workloads.share(sections, tasks, i), Workloads.seed(i));
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
        List<Future<Long>> futures = new ArrayList<>(tasks);
        for (int i = 0; i < tasks; i++) {
            int mine = Workloads.share(sections, tasks, i);
            long seed = Workloads.seed(i);
            futures.add(pool.submit(() -> {
                long x = seed;
                for (int k = 0; k < mine; k++) {
                    x = Workloads.geometricWork(x, WORK);
                    sem.acquire();
                    try {
                        x = Workloads.geometricWork(x, WORK);
                    } finally {
                        sem.release();
                    }
                }
                return x;
            }));
        }
        long digest = 0;
        for (Future<Long> f : futures) digest += f.get();
        check(sections, sem.availablePermits()); // a task that did not run all its sections threw above
        return digest;
    }

    private void check(int done, int available) {
        if (done != sections) throw new IllegalStateException("ran " + done + " sections, expected " + sections);
        if (available != permits) throw new IllegalStateException(available + " permits free at the end, expected " + permits);
    }

    /** One task: a loop of sections that never blocks, handed from thread to thread by the pool (which orders its accesses). */
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
                    x = Workloads.geometricWork(x, WORK);
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
                x = Workloads.geometricWork(x, WORK);
            } finally {
                sem.release(token);
            }
            remaining--;
            completed++;
        }
    }
}
