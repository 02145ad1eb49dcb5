package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Hand-over latency (kotlinx.coroutines' SequentialSemaphoreAsMutexBenchmark): two coroutines on one thread strictly
 * alternate on a one-permit primitive, so every step suspends, grants and resumes. Score = time for `iterations` steps.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class HandoffBenchmark {
    /** ours = dev.semaphore.Semaphore / Lock, kotlinx = kotlinx.coroutines.sync.Semaphore / Mutex. */
    @Param({"ours", "kotlinx"}) public String impl;

    /** Steps per invocation (both coroutines together). */
    @Param({"1000000"}) public int iterations;

    @Benchmark public int semaphore() { return Workloads.handoff(Primitives.semaphore(impl, 1), iterations); }
    @Benchmark public int lock() { return Workloads.handoff(Primitives.lock(impl, false), iterations); }
}
