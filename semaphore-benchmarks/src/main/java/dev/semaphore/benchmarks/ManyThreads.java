/*
 * What ThreadsBenchmark and ThreadsSuspendingBenchmark share: the parameters, a fixed pool of `threads` daemon
 * threads made once per trial, the run that splits the sections over them and checks that all ran, and the park
 * probe.
 *
 * The park probe (issue 30: "count parks and unparks per section", in the benchmark, not in the library): the JVM
 * counts, per thread, how many times it entered a waiting state, and a LockSupport.park is one (ThreadInfo's
 * waitedCount). Around every invocation, outside the measured time (Level.Invocation fixtures; an invocation takes
 * milliseconds), the probe sums the pool threads' counts; Parks reports parks per section for each iteration as a
 * secondary result ("parksPerSection"). It counts every park of those threads: the engine lock's, a waiting
 * acquisition's, runBlocking's event loop's, and each idle thread's park on the pool's queue at the end of an
 * invocation (at most `threads` per invocation, so at most threads / sections per section: 0.0032 with 64 threads
 * and 20,000 sections). A park that is not timed ends only with an unpark (or a spurious wake-up), so unparks are
 * about as many; the JVM counts no unparks.
 */
package dev.semaphore.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.AuxCounters;
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

    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private ExecutorService pool;
    private long[] poolThreadIds;
    private long parksBefore;
    private long parks;
    private long sectionsRun;

    /** The pool of `threads` daemon threads, all started (so that the probe knows every one). */
    @Setup(Level.Trial)
    public void setUp() {
        List<Thread> made = new ArrayList<>();
        ThreadFactory daemons = daemons("bench-threads-");
        pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = daemons.newThread(r);
            synchronized (made) {
                made.add(t);
            }
            return t;
        });
        ((ThreadPoolExecutor) pool).prestartAllCoreThreads();
        synchronized (made) {
            if (made.size() != threads) throw new IllegalStateException("the pool started " + made.size() + " threads, expected " + threads);
            poolThreadIds = made.stream().mapToLong(Thread::getId).toArray();
        }
    }

    /** The probe: a new count for each iteration. */
    @Setup(Level.Iteration)
    public void resetParks() {
        parks = 0;
        sectionsRun = 0;
    }

    /** The probe: the pool threads' waits before an invocation. */
    @Setup(Level.Invocation)
    public void markParks() {
        parksBefore = poolWaits();
    }

    /** The probe: adds an invocation's parks and sections. */
    @TearDown(Level.Invocation)
    public void countParks() {
        parks += poolWaits() - parksBefore;
        sectionsRun += sections;
    }

    private long poolWaits() {
        long sum = 0;
        for (ThreadInfo i : MX.getThreadInfo(poolThreadIds, 0)) {
            if (i == null) throw new IllegalStateException("a pool thread died");
            sum += i.getWaitedCount();
        }
        return sum;
    }

    /**
     * The park probe's secondary result: the pool threads' parks per section in this iteration (see the file
     * comment). A benchmark method takes it as a parameter and calls [of] with its own state.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Parks {
        private ManyThreads bench;

        /** Reports the probe of [bench] (the benchmark's own state). */
        public void of(ManyThreads bench) {
            this.bench = bench;
        }

        /** Parks per section in this iteration (NaN before the first invocation). */
        public double parksPerSection() {
            return bench == null || bench.sectionsRun == 0 ? Double.NaN : (double) bench.parks / bench.sectionsRun;
        }
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
