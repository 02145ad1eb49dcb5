package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * The price of priorities: ContendedBenchmark's workload (1,000 coroutines on Dispatchers.Default) on our plain
 * Semaphore and on our PrioritySemaphore with coroutine i at priority i % L. Score = time for all sections.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class PriorityBenchmark {
    /** plain = our Semaphore; priority-L = our PrioritySemaphore with L priority levels in use. */
    @Param({"plain", "priority-1", "priority-4", "priority-64"}) public String impl;

    @Param({"1", "8"}) public int permits;
    @Param({"1000"}) public int coroutines;
    @Param({"100000"}) public int sections;

    private final BenchDispatchers dispatchers = BenchDispatchers.of("default");

    @Benchmark
    public long contended() {
        return Workloads.contended(Primitives.prioritized(impl, permits), dispatchers.dispatcher, coroutines, sections,
                ContendedShape.WORK, ContendedShape.WORK);
    }
}
