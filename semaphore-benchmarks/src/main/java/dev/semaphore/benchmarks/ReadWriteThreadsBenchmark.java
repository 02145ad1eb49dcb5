/*
 * The workload of ReadWriteBenchmark on blocking threads: java.util.concurrent.locks.ReentrantReadWriteLock
 * in fair mode, what a Java service uses today. `threads` platform threads (1,000, one per caller, as the
 * 1,000 coroutines of ReadWriteBenchmark; the blocking model has no other way to have 1,000 callers
 * waiting) in a fixed pool created once per trial; thread i runs sections i, i + threads, ... with the
 * same kinds, work (`workInside` 50 or 1000, `workOutside` 50) and checks as the coroutines. Score = time
 * for all sections (lower is better).
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
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

/** ReentrantReadWriteLock(true) with blocking threads, the Java peer of ReadWriteBenchmark. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ReadWriteThreadsBenchmark {
    /** juc = java.util.concurrent.locks.ReentrantReadWriteLock(true) (the only implementation here). */
    @Param({"juc"})
    public String impl;

    /** Percentage of the sections that are reads: 90 = read-mostly, 50 = write-heavy. */
    @Param({"90", "50"})
    public int readPercent;

    /** Platform threads, each a caller that takes holds. */
    @Param({"1000"})
    public int threads;

    /** Mean geometric work inside each section: 50 = short sections, 1000 = long (as ReadWriteBenchmark). */
    @Param({"50", "1000"})
    public int workInside;

    /** Mean geometric work before each section, outside the lock (as ReadWriteBenchmark). */
    @Param({"50"})
    public int workOutside;

    /**
     * Critical sections per invocation, split over the threads: 50,000 for both lengths (with 100,000, one
     * invocation of ReentrantReadWriteLock on threads with long sections took about 2.6 s on 2 cores).
     */
    @Param({"50000"})
    public int sections;

    private ExecutorService pool;
    private SectionKinds kinds;

    /** A fixed pool of `threads` daemon threads; fixes the kind of every section. */
    @Setup(Level.Trial)
    public void setUp() {
        if (!impl.equals("juc")) throw new IllegalArgumentException("unknown impl '" + impl + "' (expected juc)");
        if (workInside < 1 || workOutside < 1) {
            throw new IllegalArgumentException("workInside and workOutside must be >= 1, were " + workInside + " and " + workOutside);
        }
        pool = Executors.newFixedThreadPool(threads, ManyThreads.daemons("bench-rw-"));
        kinds = new SectionKinds(sections, readPercent);
    }

    /** Stops the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        pool.shutdownNow();
    }

    /** All sections on a fresh fair ReentrantReadWriteLock. */
    @Benchmark
    public long readWrite() {
        return ReadWriteWorkloads.readWriteBlocking(new ReentrantReadWriteLock(true), pool, threads, kinds, workInside, workOutside);
    }
}
