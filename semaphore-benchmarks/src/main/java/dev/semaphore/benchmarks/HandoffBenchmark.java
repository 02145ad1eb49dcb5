/*
 * Hand-over latency, the shape of kotlinx.coroutines' SequentialSemaphoreAsMutexBenchmark: two coroutines
 * on runBlocking's one thread strictly alternate acquire/release on a one-permit primitive, so every step
 * is a suspension, a grant on release and a resumption. Score = time for `iterations` steps (lower is
 * better). The workload checks the strict alternation.
 *
 * impl=floor is the public-API floor of the same step (PublicApiFloor.kt, HandoffFloor): one
 * suspendCancellableCoroutine with invokeOnCancellation, and a tryResume with an onCancellation hook +
 * completeResume, around a single shared slot; no queue, no lock, no permit counting. It is the least any
 * primitive built on kotlinx.coroutines' public API can do per step while keeping prompt cancellation and
 * the hand-back of permits, so ours/floor is what our engine adds and floor/kotlinx what the public API
 * costs against kotlinx's internal reusable continuation. The same floor serves the lock row.
 */
package dev.semaphore.benchmarks;

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

/** Strict hand-over between two coroutines: ours vs kotlinx and the public-API floor, for a semaphore of 1 and for the locks. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class HandoffBenchmark {
    /**
     * ours = dev.semaphore.Semaphore / Lock, kotlinx = kotlinx.coroutines.sync.Semaphore / Mutex, floor = the
     * public-API floor (HandoffFloor, the same for both rows).
     */
    @Param({"ours", "kotlinx", "floor"})
    public String impl;

    /** Acquire/release steps per invocation (both coroutines together). */
    @Param({"1000000"})
    public int iterations;

    /** Semaphore of one permit. */
    @Benchmark
    public int semaphore() {
        return Workloads.handoff(Primitives.semaphore(impl, 1), iterations);
    }

    /** Lock / Mutex. */
    @Benchmark
    public int lock() {
        return Workloads.handoff(Primitives.lock(impl, false), iterations);
    }
}
