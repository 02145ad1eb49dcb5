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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** Many platform threads on one semaphore, blocking: our Java facade vs the JDK's fair Semaphore. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ThreadsBenchmark {
    static final int WORK = 50;

    /** ours = AsyncSemaphore, juc = java.util.concurrent.Semaphore(permits, true). */
    @Param({"ours", "juc"})
    public String impl;

    /** Platform threads (the machine this was written on has 2 cores). */
    @Param({"4", "16", "64"})
    public int threads;

    /** Permits of the semaphore. */
    @Param({"1", "8"})
    public int permits;

    /** Critical sections per invocation, split over the threads. */
    @Param({"20000"})
    public int sections;

    private ExecutorService pool;

    /** The pool of `threads` daemon threads. */
    @Setup(Level.Trial)
    public void setUp() {
        pool = pool(threads);
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdownNow();
    }

    /** All sections on a fresh semaphore, each thread blocking; returns the work's digest. */
    @Benchmark
    public long blocking() throws InterruptedException, ExecutionException {
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
        return run(pool, threads, sections, (caller, mine, ran) -> () -> {
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

    /** One thread's share: [mine] sections as caller [caller], counting them in [ran]. */
    interface Share {
        Callable<Long> of(int caller, int mine, AtomicInteger ran);
    }

    static ExecutorService pool(int threads) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "bench-threads-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs the shares of [sections] on the pool's [threads] threads; checks that all ran; returns the digest. */
    static long run(ExecutorService pool, int threads, int sections, Share share) throws InterruptedException, ExecutionException {
        AtomicInteger ran = new AtomicInteger();
        List<Callable<Long>> shares = new ArrayList<>();
        for (int i = 0; i < threads; i++) shares.add(share.of(i, sections / threads + (i < sections % threads ? 1 : 0), ran));
        long digest = 0;
        for (Future<Long> f : pool.invokeAll(shares)) digest += f.get();
        if (ran.get() != sections) throw new IllegalStateException("ran " + ran.get() + " sections, expected " + sections);
        return digest;
    }
}
