package dev.semaphore.benchmarks;

import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.Permit;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.*;

/** ManyThreads on a lock, each thread blocking: our AsyncLock.lockBlocking() vs the JDK's fair ReentrantLock. */
public class ThreadsLockBenchmark extends ManyThreads {
    /** ours = AsyncLock (lockBlocking, Permit.close), juc = java.util.concurrent.locks.ReentrantLock(true). */
    @Param({"ours", "juc"}) public String impl;

    @Benchmark
    public long lock(Parks parks) throws InterruptedException, ExecutionException {
        parks.of(this);
        Section section = switch (impl) {
            case "ours" -> {
                AsyncLock l = AsyncLock.create();
                yield x -> {
                    try (Permit held = l.lockBlocking()) {
                        return Workloads.geometricWork(x, WORK);
                    }
                };
            }
            case "juc" -> {
                ReentrantLock l = new ReentrantLock(true);
                yield x -> {
                    l.lock();
                    try {
                        return Workloads.geometricWork(x, WORK);
                    } finally {
                        l.unlock();
                    }
                };
            }
            default -> throw new IllegalArgumentException("unknown impl '" + impl + "' (expected ours or juc)");
        };
        return runSections(section);
    }
}
