package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutionException;
import org.openjdk.jmh.annotations.*;

/** ManyThreads, each thread in its own runBlocking (its event loop parks the thread): our Semaphore vs kotlinx's. */
public class ThreadsSuspendingBenchmark extends ManyThreads {
    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"}) public String impl;

    @Param({"1", "8"}) public int permits;

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
