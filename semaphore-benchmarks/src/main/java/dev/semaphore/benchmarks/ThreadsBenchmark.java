package dev.semaphore.benchmarks;

import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import org.openjdk.jmh.annotations.*;

/** ManyThreads, each thread blocking: our AsyncSemaphore.acquireBlocking() vs the JDK's fair Semaphore. */
public class ThreadsBenchmark extends ManyThreads {
    /** ours = AsyncSemaphore (acquireBlocking, Permit.close), juc = java.util.concurrent.Semaphore(permits, true). */
    @Param({"ours", "juc"}) public String impl;

    @Param({"1", "8"}) public int permits;

    @Benchmark
    public long blocking(Parks parks) throws InterruptedException, ExecutionException {
        parks.of(this);
        Section section = switch (impl) {
            case "ours" -> {
                AsyncSemaphore s = AsyncSemaphore.create(permits);
                yield x -> {
                    try (Permit p = s.acquireBlocking()) {
                        return Workloads.geometricWork(x, WORK);
                    }
                };
            }
            case "juc" -> {
                Semaphore s = new Semaphore(permits, true);
                yield x -> {
                    s.acquireUninterruptibly();
                    try {
                        return Workloads.geometricWork(x, WORK);
                    } finally {
                        s.release();
                    }
                };
            }
            default -> throw new IllegalArgumentException("unknown impl '" + impl + "' (expected ours or juc)");
        };
        return runSections(section);
    }
}
