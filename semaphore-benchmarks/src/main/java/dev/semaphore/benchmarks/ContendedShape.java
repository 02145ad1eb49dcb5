package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * What ContendedBenchmark and ContendedLockBenchmark share (kotlinx.coroutines' SemaphoreBenchmark): `sections` critical
 * sections over `coroutines` coroutines on `dispatcher`, each with geometric work of mean WORK outside and inside, on a
 * primitive made fresh in every invocation. Score = time for all sections.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public abstract class ContendedShape {
    /** Mean of the geometric work inside and outside the critical section. */
    public static final int WORK = 50;

    /** Dispatchers.Default or a fixed pool of 2 threads (run.sh adds pool64 and io); see BenchDispatchers. */
    @Param({"default", "pool2"}) public String dispatcher;

    /** As many as the dispatcher's threads, or 1,000. */
    @Param({"parallelism", "1000"}) public String coroutines;

    @Param({"100000"}) public int sections;

    private BenchDispatchers dispatchers;
    private int coroutineCount;

    @Setup(Level.Trial) public void setUp() { dispatchers = BenchDispatchers.of(dispatcher); coroutineCount = dispatchers.coroutines(coroutines); }

    @TearDown(Level.Trial) public void tearDown() { dispatchers.close(); }

    long run(SuspendPermits permits) {
        return Workloads.contended(permits, dispatchers.dispatcher, coroutineCount, sections, WORK, WORK);
    }
}
