package dev.semaphore.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.*;

/**
 * What ThreadsBenchmark, ThreadsLockBenchmark and ThreadsSuspendingBenchmark share (docs/benchmarking.md#many-threads): `threads` threads of a
 * fixed pool run `sections` critical sections, each with geometric work of mean WORK outside and inside. The park probe:
 * around every invocation, outside the measured time, the pool threads' JVM waited counts (one per LockSupport.park),
 * summed and reported per section as the secondary result "parksPerSection".
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MILLISECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public abstract class ManyThreads {
    public static final int WORK = ContendedShape.WORK;

    @Param({"4", "16", "64"}) public int threads;
    @Param({"20000"}) public int sections;

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private ExecutorService pool;
    private long[] poolThreadIds;
    private long parksBefore;
    private long parks;
    private long sectionsRun;

    /** The pool, all its threads started (so that the probe knows every one). */
    @Setup(Level.Trial)
    public void setUp() {
        Queue<Thread> made = new ConcurrentLinkedQueue<>();
        ThreadFactory daemons = daemons("bench-threads-");
        pool = Executors.newFixedThreadPool(threads, r -> { Thread t = daemons.newThread(r); made.add(t); return t; });
        ((ThreadPoolExecutor) pool).prestartAllCoreThreads();
        if (made.size() != threads) throw new IllegalStateException("the pool started " + made.size() + " threads, expected " + threads);
        poolThreadIds = made.stream().mapToLong(Thread::getId).toArray();
    }

    @TearDown(Level.Trial) public void tearDown() { pool.shutdownNow(); }
    @Setup(Level.Iteration) public void resetParks() { parks = 0; sectionsRun = 0; }
    @Setup(Level.Invocation) public void markParks() { parksBefore = poolWaits(); }
    @TearDown(Level.Invocation) public void countParks() { parks += poolWaits() - parksBefore; sectionsRun += sections; }

    private long poolWaits() { return waits(poolThreadIds); }

    /** The JVM's waited counts (one per LockSupport.park) of the threads {@code ids}, summed; they must all be alive. */
    static long waits(long[] ids) {
        long sum = 0;
        for (ThreadInfo i : MX.getThreadInfo(ids, 0)) {
            if (i == null) throw new IllegalStateException("a pool thread died");
            sum += i.getWaitedCount();
        }
        return sum;
    }

    /** The probe's secondary result; a benchmark method takes it as a parameter and calls of(this). */
    @State(Scope.Thread) @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Parks {
        private ManyThreads bench;

        public void of(ManyThreads bench) { this.bench = bench; }

        /** Parks per section in this iteration (NaN before the first invocation). */
        public double parksPerSection() { return bench == null || bench.sectionsRun == 0 ? Double.NaN : (double) bench.parks / bench.sectionsRun; }
    }

    /** One thread's share: `mine` sections as caller `caller`, each counted in `ran`; returns the work's digest. */
    public interface Share { Callable<Long> of(int caller, int mine, AtomicInteger ran); }

    long run(Share share) throws InterruptedException, ExecutionException {
        AtomicInteger ran = new AtomicInteger();
        List<Callable<Long>> shares = new ArrayList<>();
        for (int i = 0; i < threads; i++) shares.add(share.of(i, Workloads.share(sections, threads, i), ran));
        long digest = 0;
        for (Future<Long> f : pool.invokeAll(shares)) digest += f.get();
        if (ran.get() != sections) throw new IllegalStateException("ran " + ran.get() + " sections, expected " + sections);
        return digest;
    }

    /** A blocking critical section: takes its hold, works on x, gives the hold back. */
    public interface Section { long run(long x) throws InterruptedException; }

    /** {@link #run} with each thread running its share of sections through {@code section}, work of mean WORK before each. */
    long runSections(Section section) throws InterruptedException, ExecutionException {
        return run((caller, mine, ran) -> () -> {
            long x = Workloads.seed(caller);
            for (int k = 0; k < mine; k++) {
                x = section.run(Workloads.geometricWork(x, WORK));
                ran.incrementAndGet();
            }
            return x;
        });
    }

    /** Daemon threads named prefix + 1, 2, ... (a stuck trial never keeps the JVM alive). */
    public static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> { Thread t = new Thread(r, prefix + n.incrementAndGet()); t.setDaemon(true); return t; };
    }
}
