/*
 * What ThreadsBenchmark and ThreadsSuspendingBenchmark share: the parameters, a fixed pool of `threads` daemon
 * threads made once per trial, and the run that splits the sections over them and checks that all ran.
 */
package dev.semaphore.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** The base of the many-threads benchmarks (each declares its own `impl`). */
@State(Scope.Benchmark)
public abstract class ManyThreads {
    /** Mean geometric work outside and inside each section (as ContendedBenchmark). */
    public static final int WORK = 50;

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
        pool = Executors.newFixedThreadPool(threads, daemons("bench-threads-"));
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdownNow();
    }

    /** One thread's share: [mine] sections as caller [caller], counting them in [ran]. */
    public interface Share {
        Callable<Long> of(int caller, int mine, AtomicInteger ran);
    }

    /** Runs the shares of the sections on the pool's threads; checks that all ran; returns the work's digest. */
    long run(Share share) throws InterruptedException, ExecutionException {
        AtomicInteger ran = new AtomicInteger();
        List<Callable<Long>> shares = new ArrayList<>();
        for (int i = 0; i < threads; i++) shares.add(share.of(i, sections / threads + (i < sections % threads ? 1 : 0), ran));
        long digest = 0;
        for (Future<Long> f : pool.invokeAll(shares)) digest += f.get();
        if (ran.get() != sections) throw new IllegalStateException("ran " + ran.get() + " sections, expected " + sections);
        return digest;
    }

    /** Daemon threads named [prefix] + 1, 2, ... (the benchmarks' pools: a stuck trial never keeps the JVM alive). */
    public static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
