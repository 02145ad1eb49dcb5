/*
 * Contended throughput, the shape of kotlinx.coroutines' own SemaphoreBenchmark: `sections` critical
 * sections split over `coroutines` coroutines; each does geometric work of mean WORK outside, acquires,
 * does geometric work of mean WORK inside, releases. Score = time for all sections (lower is better).
 * The primitive is created fresh in every invocation; the workload checks every section ran once.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
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

/** Our Semaphore vs kotlinx Semaphore under contention. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ContendedBenchmark {
    /** Mean of the geometric work inside and outside the critical section. */
    public static final int WORK = 50;

    /**
     * ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore, floor = the public-API floor of a
     * queue of waiters (PublicApiFloor.kt, QueueFloor).
     */
    @Param({"ours", "kotlinx", "floor"})
    public String impl;

    /** Where the coroutines run: Dispatchers.Default, or a fixed pool of 2 threads. */
    @Param({"default", "pool2"})
    public String dispatcher;

    /** Coroutines: as many as the dispatcher's threads, or 1,000. */
    @Param({"parallelism", "1000"})
    public String coroutines;

    /** Permits of the semaphore. */
    @Param({"1", "2", "4", "8", "32"})
    public int permits;

    /** Critical sections per invocation, split over the coroutines. */
    @Param({"100000"})
    public int sections;

    private BenchDispatchers dispatchers;
    private int coroutineCount;

    /** Creates the dispatcher. */
    @Setup(Level.Trial)
    public void setUp() {
        dispatchers = BenchDispatchers.of(dispatcher);
        coroutineCount = dispatchers.coroutines(coroutines);
    }

    /** Shuts the pool down. */
    @TearDown(Level.Trial)
    public void tearDown() {
        dispatchers.close();
    }

    /** All sections on a fresh semaphore. */
    @Benchmark
    public long semaphore() {
        return Workloads.contended(Primitives.contendedSemaphore(impl, permits), dispatchers.dispatcher, coroutineCount, sections, WORK, WORK);
    }
}
