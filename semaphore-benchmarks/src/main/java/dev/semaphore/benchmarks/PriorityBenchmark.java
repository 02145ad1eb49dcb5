/*
 * The price of priorities: the ContendedBenchmark workload (1,000 coroutines, so the line is long) on our
 * plain FIFO Semaphore and on our PrioritySemaphore where coroutine i asks at priority i % L, with L = 1, 4
 * or 64 levels in use. Score = time for all sections (lower is better); the report divides each
 * priority-L row by the plain row.
 */
package dev.semaphore.benchmarks;

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

/** PrioritySemaphore with 1, 4 and 64 levels in use vs plain Semaphore, contended. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PriorityBenchmark {
    /** plain = our Semaphore; priority-L = our PrioritySemaphore with L priority levels in use. */
    @Param({"plain", "priority-1", "priority-4", "priority-64"})
    public String impl;

    /** Permits of the semaphore. */
    @Param({"1", "8"})
    public int permits;

    /** Coroutines (each at priority index % L). */
    @Param({"1000"})
    public int coroutines;

    /** Critical sections per invocation, split over the coroutines. */
    @Param({"100000"})
    public int sections;

    private BenchDispatchers dispatchers;

    /** Uses Dispatchers.Default. */
    @Setup(Level.Trial)
    public void setUp() {
        dispatchers = BenchDispatchers.of("default");
    }

    /** Nothing to shut down for Dispatchers.Default; kept symmetric with the other benchmarks. */
    @TearDown(Level.Trial)
    public void tearDown() {
        dispatchers.close();
    }

    /** All sections on a fresh semaphore. */
    @Benchmark
    public long contended() {
        return Workloads.contended(Primitives.prioritized(impl, permits), dispatchers.dispatcher, coroutines, sections,
                ContendedBenchmark.WORK, ContendedBenchmark.WORK);
    }
}
