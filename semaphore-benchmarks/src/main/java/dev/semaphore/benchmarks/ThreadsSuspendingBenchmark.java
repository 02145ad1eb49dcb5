/*
 * ThreadsBenchmark's workload (more platform threads than cores on one semaphore) with each thread in its own
 * runBlocking: our Semaphore vs kotlinx's. See ThreadsBenchmark for the method.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Many platform threads on one semaphore, each in its own runBlocking: our Semaphore vs kotlinx's. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ThreadsSuspendingBenchmark extends ManyThreads {
    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"})
    public String impl;

    /** All sections on a fresh semaphore; returns the work's digest. */
    @Benchmark
    public long suspending(Parks parks) throws InterruptedException, ExecutionException {
        parks.of(this);
        SuspendPermits s = Primitives.semaphore(impl, permits);
        return run((caller, mine, ran) -> () -> {
            long x = Workloads.sectionsInRunBlocking(s, caller, mine, WORK, WORK);
            ran.addAndGet(mine);
            return x;
        });
    }
}
