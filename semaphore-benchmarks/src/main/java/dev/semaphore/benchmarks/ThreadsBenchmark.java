/*
 * More platform threads than cores on one semaphore (issue 30: the engine's lock with many threads). `threads`
 * threads of a fixed pool (created once per trial) run `sections` critical sections between them, each with
 * geometric work of mean 50 outside and inside (as ContendedBenchmark), in two shapes:
 * - blocking: ours = AsyncSemaphore.acquireBlocking() and Permit.close() (the Java facade's blocking call),
 *   juc = java.util.concurrent.Semaphore(permits, true), acquireUninterruptibly() and release();
 * - suspending: ours = our Semaphore, kotlinx = kotlinx's, each thread in its own runBlocking (whose event loop
 *   parks the thread while it waits).
 * Score = time for all sections (lower is better); every run checks that all sections ran. The shapes are two
 * benchmark classes (this one and ThreadsSuspendingBenchmark) because their peers differ.
 */
package dev.semaphore.benchmarks;

import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
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

/** Many platform threads on one semaphore, blocking: our Java facade vs the JDK's fair Semaphore. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ThreadsBenchmark extends ManyThreads {
    /** ours = AsyncSemaphore, juc = java.util.concurrent.Semaphore(permits, true). */
    @Param({"ours", "juc"})
    public String impl;

    /** All sections on a fresh semaphore, each thread blocking; returns the work's digest. */
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
        return run((caller, mine, ran) -> () -> {
            long x = Workloads.seed(caller);
            for (int k = 0; k < mine; k++) {
                x = section.run(Workloads.geometricWork(x, WORK));
                ran.incrementAndGet();
            }
            return x;
        });
    }

    /** The critical section of the blocking shape: takes the permit, works on [x], gives it back. */
    private interface Section {
        long run(long x) throws InterruptedException;
    }
}
