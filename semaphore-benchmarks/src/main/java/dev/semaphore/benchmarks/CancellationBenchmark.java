package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Cancellation cost vs line length: with `waiters` coroutines queued on a semaphore with no free permit, cancel 1,000
 * of them spread over the line (Job.cancel(); on Unconfined the coroutine completes in the cancelling thread). Score =
 * time per cancellation. Not measured: building the line, then a full GC (so that the previous invocation's garbage is
 * not collected inside the measurement), and the check that exactly those 1,000 are cancelled.
 */
@BenchmarkMode(Mode.SingleShotTime) @OutputTimeUnit(TimeUnit.MICROSECONDS) @State(Scope.Thread)
@Warmup(iterations = 5, batchSize = 1) @Measurement(iterations = 10, batchSize = 1) @Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class CancellationBenchmark {
    public static final int CANCELLED = 1000;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"}) public String impl;

    @Param({"1000", "100000", "1000000"}) public int waiters;

    private WaiterSet line;

    /** Compiles the queueing and cancellation paths first (a single shot of 1,000 cancellations cannot warm them up). */
    @Setup(Level.Trial)
    public void warmUp() {
        if (waiters < CANCELLED) throw new IllegalArgumentException("waiters must be >= " + CANCELLED + ", was " + waiters);
        for (int round = 0; round < 100; round++) {
            WaiterSet w = new WaiterSet(Primitives.semaphore(impl, 0), 5000).fill();
            w.cancelSpread(5000);
            w.verifyCancelled(5000);
        }
    }

    @Setup(Level.Invocation)
    public void queueWaiters() {
        line = null;
        line = new WaiterSet(Primitives.semaphore(impl, 0), waiters).fill();
        System.gc();
    }

    @TearDown(Level.Invocation) public void check() { line.verifyCancelled(CANCELLED); line = null; }

    @Benchmark @OperationsPerInvocation(CANCELLED) public void cancel() { line.cancelSpread(CANCELLED); }
}
