package dev.semaphore.benchmarks;

import org.openjdk.jmh.annotations.*;

/** Our Lock vs kotlinx's Mutex under contention (ContendedShape). */
public class ContendedLockBenchmark extends ContendedShape {
    /** ours = dev.semaphore.Lock, kotlinx = kotlinx.coroutines.sync.Mutex. */
    @Param({"ours", "kotlinx"}) public String impl;

    @Benchmark public long lock() { return run(Primitives.lock(impl, false)); }
}
