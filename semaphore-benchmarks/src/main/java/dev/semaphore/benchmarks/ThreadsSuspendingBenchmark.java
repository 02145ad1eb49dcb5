/*
 * ThreadsBenchmark's workload (more platform threads than cores on one semaphore) with each thread in its own
 * runBlocking: our Semaphore vs kotlinx's. See ThreadsBenchmark for the method.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
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

/** Many platform threads on one semaphore, each in its own runBlocking: our Semaphore vs kotlinx's. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ThreadsSuspendingBenchmark {
    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"})
    public String impl;

    /** As ThreadsBenchmark's. */
    @Param({"4", "16", "64"})
    public int threads;

    /** As ThreadsBenchmark's. */
    @Param({"1", "8"})
    public int permits;

    /** As ThreadsBenchmark's. */
    @Param({"20000"})
    public int sections;

    private ExecutorService pool;

    /** The pool of `threads` daemon threads. */
    @Setup(Level.Trial)
    public void setUp() {
        pool = ThreadsBenchmark.pool(threads);
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdownNow();
    }

    /** All sections on a fresh semaphore; returns the work's digest. */
    @Benchmark
    public long suspending() throws InterruptedException, ExecutionException {
        SuspendPermits s = Primitives.semaphore(impl, permits);
        return ThreadsBenchmark.run(pool, threads, sections, (caller, mine, ran) -> () -> {
            long x = Workloads.sectionsInRunBlocking(s, caller, mine, ThreadsBenchmark.WORK, ThreadsBenchmark.WORK);
            ran.addAndGet(mine);
            return x;
        });
    }
}
