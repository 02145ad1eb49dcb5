package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.openjdk.jmh.annotations.*;

/**
 * ReadWriteBenchmark's workload on blocking threads with the JDK's fair ReentrantReadWriteLock: `threads` platform
 * threads (1,000, one per caller, as the coroutines), in a pool made once per trial. Score = time for all sections.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class ReadWriteThreadsBenchmark {
    /** juc = java.util.concurrent.locks.ReentrantReadWriteLock(true), the only implementation here. */
    @Param({"juc"}) public String impl;

    @Param({"90", "50"}) public int readPercent;
    @Param({"1000"}) public int threads;
    @Param({"50", "1000"}) public int workInside;
    @Param({"50"}) public int workOutside;
    @Param({"50000"}) public int sections;

    private ExecutorService pool;
    private SectionKinds kinds;

    @Setup(Level.Trial)
    public void setUp() {
        if (!impl.equals("juc")) throw new IllegalArgumentException("unknown impl '" + impl + "' (expected juc)");
        ReadWriteBenchmark.checkWork(workInside, workOutside);
        pool = Executors.newFixedThreadPool(threads, ManyThreads.daemons("bench-rw-"));
        kinds = new SectionKinds(sections, readPercent);
    }

    @TearDown(Level.Trial) public void tearDown() { pool.shutdownNow(); }

    @Benchmark
    public long readWrite() {
        return ReadWriteWorkloads.readWriteBlocking(new ReentrantReadWriteLock(true), pool, threads, kinds, workInside, workOutside);
    }
}
