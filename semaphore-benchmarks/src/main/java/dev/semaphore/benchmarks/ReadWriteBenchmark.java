package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Read-write locks under contention, coroutines (docs/benchmarking.md#readwritelock): `sections` sections over
 * `coroutines` coroutines, `readPercent` % of them reads, with geometric work of mean `workOutside` before taking the
 * hold and `workInside` while holding it, on a fresh lock per invocation. The threads' peer: ReadWriteThreadsBenchmark.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class ReadWriteBenchmark {
    /**
     * ours = dev.semaphore.ReadWriteLock, oursPhaseFair and oursWritersLine = the same with ReadWritePolicy.PHASE_FAIR and
     * WRITERS_LINE, kotlinxMutex = one
     * kotlinx Mutex, kotlinxSemaphore(-16) = a kotlinx Semaphore of `coroutines` (16) permits: see ReadWritePrimitives.
     */
    @Param({"ours", "oursPhaseFair", "oursWritersLine", "kotlinxMutex", "kotlinxSemaphore", "kotlinxSemaphore-16"}) public String impl;

    @Param({"default", "pool2"}) public String dispatcher;

    /** 90 = read-mostly, 50 = write-heavy. */
    @Param({"90", "50"}) public int readPercent;

    @Param({"1000"}) public int coroutines;

    /** 50 = short sections (as ContendedBenchmark), 1000 = long ones. */
    @Param({"50", "1000"}) public int workInside;

    @Param({"50"}) public int workOutside;

    /** 50,000: with 100,000, one invocation of ReentrantReadWriteLock with long sections took 2.6 s on 2 cores. */
    @Param({"50000"}) public int sections;

    private BenchDispatchers dispatchers;
    private SectionKinds kinds;

    @Setup(Level.Trial)
    public void setUp() {
        checkWork(workInside, workOutside);
        ReadWritePrimitives.of(impl, coroutines); // an unknown impl fails here, before any measurement
        dispatchers = BenchDispatchers.of(dispatcher);
        kinds = new SectionKinds(sections, readPercent);
    }

    @TearDown(Level.Trial) public void tearDown() { dispatchers.close(); }

    @Benchmark
    public long readWrite() {
        return ReadWriteWorkloads.readWrite(ReadWritePrimitives.of(impl, coroutines), dispatchers.dispatcher, coroutines, kinds, workInside, workOutside);
    }

    static void checkWork(int workInside, int workOutside) { // a geometric mean of 0 would divide by zero in every section
        if (workInside < 1 || workOutside < 1) {
            throw new IllegalArgumentException("workInside and workOutside must be >= 1, were " + workInside + " and " + workOutside);
        }
    }
}
