package dev.semaphore.benchmarks;

import org.openjdk.jmh.annotations.*;

/** Our Semaphore vs kotlinx's under contention (ContendedShape), with the floor QueueFloor. */
public class ContendedBenchmark extends ContendedShape {
    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore, floor = QueueFloor. */
    @Param({"ours", "kotlinx", "floor"}) public String impl;

    @Param({"1", "2", "4", "8", "32"}) public int permits;

    @Benchmark public long semaphore() { return run(Primitives.semaphore(impl, permits)); }
}
