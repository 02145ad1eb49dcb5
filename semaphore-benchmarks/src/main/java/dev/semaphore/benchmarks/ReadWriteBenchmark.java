/*
 * Read-write lock under contention, coroutines: `sections` critical sections split over `coroutines`
 * coroutines (1,000), each section a read or a write as SectionKinds fixed it in advance (exactly
 * `readPercent` % reads: 90 = read-mostly, 50 = write-heavy; the same sequence for every contender).
 * Each section does geometric work of mean `workOutside` (50, as ContendedBenchmark) outside, takes the
 * hold, works inside (mean `workInside`: 50 = short sections, as ContendedBenchmark; 1000 = long sections),
 * ends the hold. Score = time for all sections (lower is better).
 *
 * The work outside stays at 50 for both lengths: with as much work outside as inside, on 2 cores even one
 * mutex keeps both cores busy (one caller inside, one outside), so the lock is no longer the bottleneck and
 * read sharing cannot show; with little work outside, callers are nearly always waiting for the lock.
 *
 * The lock is created fresh in every invocation. The workload checks that every section ran once with
 * its kind, and that no writer overlapped a reader or another writer (ExclusionCheck, the same atomic
 * counter for every contender). ReentrantReadWriteLock, on blocking threads, is ReadWriteThreadsBenchmark.
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

/** Our ReadWriteLock vs kotlinx Mutex and a kotlinx Semaphore reader-writer lock, with coroutines. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class ReadWriteBenchmark {
    /**
     * ours = dev.semaphore.ReadWriteLock (strict FIFO, the default); oursPhaseFair = the same with
     * ReadWritePolicy.PHASE_FAIR; kotlinxMutex = one kotlinx Mutex for reads and writes;
     * kotlinxSemaphore = a kotlinx Semaphore of K = `coroutines` permits (read = 1 permit; write = a kotlinx
     * Mutex, then the K permits one at a time), so no reader ever waits for readers, as with ours;
     * kotlinxSemaphore-16 = the same with K = 16, a bound (at most 16 readers at once) that makes a write
     * 16 acquisitions instead of 1,000. See ReadWritePrimitives.
     */
    @Param({"ours", "oursPhaseFair", "kotlinxMutex", "kotlinxSemaphore", "kotlinxSemaphore-16"})
    public String impl;

    /** Where the coroutines run: Dispatchers.Default, or a fixed pool of 2 threads. */
    @Param({"default", "pool2"})
    public String dispatcher;

    /** Percentage of the sections that are reads: 90 = read-mostly, 50 = write-heavy. */
    @Param({"90", "50"})
    public int readPercent;

    /** Coroutines, each a caller that takes holds. */
    @Param({"1000"})
    public int coroutines;

    /**
     * Mean geometric work (xorshift steps) inside each section: 50 = short sections (as ContendedBenchmark),
     * 1000 = long sections.
     */
    @Param({"50", "1000"})
    public int workInside;

    /** Mean geometric work before each section, outside the lock (the same for both lengths; see above). */
    @Param({"50"})
    public int workOutside;

    /**
     * Critical sections per invocation, split over the coroutines: 50,000 for both lengths (with 100,000, one
     * invocation of ReentrantReadWriteLock on threads with long sections took about 2.6 s on 2 cores).
     */
    @Param({"50000"})
    public int sections;

    private BenchDispatchers dispatchers;
    private SectionKinds kinds;

    /** Creates the dispatcher and fixes the kind of every section. */
    @Setup(Level.Trial)
    public void setUp() {
        if (workInside < 1 || workOutside < 1) {
            throw new IllegalArgumentException("workInside and workOutside must be >= 1, were " + workInside + " and " + workOutside);
        }
        dispatchers = BenchDispatchers.of(dispatcher);
        kinds = new SectionKinds(sections, readPercent);
        ReadWritePrimitives.of(impl, coroutines); // an unknown impl fails here, before any measurement
    }

    /** Shuts the pool down. */
    @TearDown(Level.Trial)
    public void tearDown() {
        dispatchers.close();
    }

    /** All sections on a fresh lock. */
    @Benchmark
    public long readWrite() {
        return ReadWriteWorkloads.readWrite(ReadWritePrimitives.of(impl, coroutines), dispatchers.dispatcher, coroutines,
                kinds, workInside, workOutside);
    }
}
