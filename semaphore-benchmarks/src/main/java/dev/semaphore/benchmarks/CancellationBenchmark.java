/*
 * Cancellation cost vs line length: with N waiters queued (coroutines suspended in acquire on a semaphore
 * with no free permit), cancel 1,000 of them spread evenly over the line. Score = time per cancellation
 * (SingleShotTime over the 1,000, lower is better); it should not grow with N.
 *
 * Not measured: building the line (@Setup(Level.Invocation), followed by a full GC so that garbage of the
 * previous invocation does not trigger a collection inside the measurement) and the checks in
 * @TearDown(Level.Invocation) (the 1,000 are cancelled and completed; for ours, N - 1,000 still queued).
 * Each cancellation is the whole user-visible operation: Job.cancel() runs the primitive's cancellation
 * handler and, on the Unconfined dispatcher, completes the coroutine in the cancelling thread.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** Cancelling 1,000 of N queued waiters: ours vs kotlinx Semaphore. */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, batchSize = 1)
@Measurement(iterations = 10, batchSize = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
@State(Scope.Thread)
public class CancellationBenchmark {
    /** Waiters cancelled per invocation. */
    public static final int CANCELLED = 1000;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"})
    public String impl;

    /** Waiters queued before the cancellations. */
    @Param({"1000", "100000", "1000000"})
    public int waiters;

    private WaiterSet line;

    /**
     * Runs the queueing and cancellation paths half a million times so that they are compiled before the
     * first measurement (a single-shot measurement of 1,000 cancellations cannot warm them up itself).
     */
    @Setup(Level.Trial)
    public void warmUp() {
        if (waiters < CANCELLED) throw new IllegalArgumentException("waiters must be >= " + CANCELLED + ", was " + waiters);
        for (int round = 0; round < 100; round++) {
            WaiterSet w = new WaiterSet(Primitives.semaphore(impl, 0), 5000).fill();
            w.cancelSpread(5000);
            w.verifyCancelled(5000);
        }
    }

    /** Queues the waiters (not measured), then collects the garbage of the previous invocation. */
    @Setup(Level.Invocation)
    public void queueWaiters() {
        line = null;
        line = new WaiterSet(Primitives.semaphore(impl, 0), waiters).fill();
        System.gc();
    }

    /** Checks the cancellations took effect, then drops the line. */
    @TearDown(Level.Invocation)
    public void check() {
        line.verifyCancelled(CANCELLED);
        line = null;
    }

    /** Cancels 1,000 waiters spread over the line. */
    @Benchmark
    @OperationsPerInvocation(CANCELLED)
    public void cancel() {
        line.cancelSpread(CANCELLED);
    }
}
