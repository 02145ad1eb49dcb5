package dev.semaphore.benchmarks;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import kotlinx.coroutines.ExecutorsKt;
import org.openjdk.jmh.annotations.*;

/**
 * ReadWriteBenchmark's row on a pool of 2 threads, with what its two threads do counted per section (a probe, not in
 * the report: docs/profiles.md reads it). Around every invocation, outside the measured time: the pool threads' JVM
 * waited counts (one per LockSupport.park: a thread that ran out of work and went to sleep, to be woken by the next
 * dispatch), and the dispatches (HandoffShapes.CountingDispatcher: every resumption of a coroutine that waited, plus
 * the launches). Score: time per invocation of `sections` sections, as ReadWriteBenchmark's.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class ReadWriteParksBenchmark {
    /** As ReadWriteBenchmark's (ReadWritePrimitives). */
    @Param({"ours", "oursWritersLine", "kotlinxMutex", "kotlinxSemaphore-16"}) public String impl;

    @Param({"90"}) public int readPercent;
    @Param({"1000"}) public int coroutines;
    @Param({"50"}) public int workInside;
    @Param({"50"}) public int workOutside;
    @Param({"50000"}) public int sections;

    private ExecutorService pool;
    private long[] poolThreadIds;
    private HandoffShapes.CountingDispatcher dispatcher;
    private SectionKinds kinds;
    private long parksBefore;
    private long dispatchesBefore;
    private long parks;
    private long dispatches;
    private long sectionsRun;

    @Setup(Level.Trial)
    public void setUp() {
        ReadWriteBenchmark.checkWork(workInside, workOutside);
        ReadWritePrimitives.of(impl, coroutines); // an unknown impl fails here, before any measurement
        Queue<Thread> made = new ConcurrentLinkedQueue<>();
        ThreadFactory daemons = ManyThreads.daemons("bench-pool2-");
        pool = Executors.newFixedThreadPool(2, r -> { Thread t = daemons.newThread(r); made.add(t); return t; });
        ((ThreadPoolExecutor) pool).prestartAllCoreThreads();
        if (made.size() != 2) throw new IllegalStateException("the pool started " + made.size() + " threads, expected 2");
        poolThreadIds = made.stream().mapToLong(Thread::getId).toArray();
        dispatcher = new HandoffShapes.CountingDispatcher(ExecutorsKt.from(pool));
        kinds = new SectionKinds(sections, readPercent);
    }

    @TearDown(Level.Trial) public void tearDown() { pool.shutdownNow(); }
    @Setup(Level.Iteration) public void reset() { parks = 0; dispatches = 0; sectionsRun = 0; }
    @Setup(Level.Invocation) public void mark() { parksBefore = poolWaits(); dispatchesBefore = dispatcher.getDispatches(); }

    @TearDown(Level.Invocation) public void count() {
        parks += poolWaits() - parksBefore;
        dispatches += dispatcher.getDispatches() - dispatchesBefore;
        sectionsRun += sections;
    }

    private long poolWaits() { return ManyThreads.waits(poolThreadIds); }

    /** Per iteration: parks and dispatches per section (NaN before the first invocation). */
    @State(Scope.Thread) @AuxCounters(AuxCounters.Type.EVENTS)
    public static class PerSection {
        private ReadWriteParksBenchmark bench;

        public double parksPerSection() { return bench == null || bench.sectionsRun == 0 ? Double.NaN : (double) bench.parks / bench.sectionsRun; }
        public double dispatchesPerSection() { return bench == null || bench.sectionsRun == 0 ? Double.NaN : (double) bench.dispatches / bench.sectionsRun; }
    }

    @Benchmark
    public long readWrite(PerSection perSection) {
        perSection.bench = this;
        return ReadWriteWorkloads.readWrite(ReadWritePrimitives.of(impl, coroutines), dispatcher, coroutines, kinds, workInside, workOutside);
    }
}
