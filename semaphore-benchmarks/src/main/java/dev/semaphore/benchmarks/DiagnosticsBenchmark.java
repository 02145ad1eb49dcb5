/*
 * What diagnostics cost (issue 29): our Semaphore with each level of diagnostics, in the same run, so the
 * report can divide each level by "off". off: the default; named: Diagnostics(name) (registered, no cost per
 * call by design); listener: one empty SemaphoreListener added (observed: every call takes the engine's
 * lock); tracking: Tracking.HOLDERS (observed, and a record per hold and per wait). The uncontended rows are
 * those of UncontendedBenchmark; the contended row is ContendedBenchmark's shape on Dispatchers.Default.
 */
package dev.semaphore.benchmarks;

import dev.semaphore.Diagnostics;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.Tracking;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** Our Semaphore with diagnostics off, named, with a listener, and with tracking. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Benchmark)
public class DiagnosticsBenchmark {
    /** Operations per invocation of the suspending loop. */
    public static final int LOOP = 1000;

    private static final AtomicInteger NAMES = new AtomicInteger();

    /** The level of diagnostics. */
    @Param({"off", "named", "listener", "tracking"})
    public String diagnostics;

    /** Critical sections per invocation of the contended row. */
    @Param({"100000"})
    public int sections;

    private Semaphore single;
    private BenchDispatchers dispatchers;
    private int coroutineCount;

    /** The dispatcher of the contended row. */
    @Setup(Level.Trial)
    public void setUp() {
        dispatchers = BenchDispatchers.of("default");
        coroutineCount = dispatchers.coroutines("1000");
        single = semaphore(1);
    }

    /** Shuts the pool down. */
    @TearDown(Level.Trial)
    public void tearDown() {
        dispatchers.close();
    }

    private Semaphore semaphore(int permits) {
        String name = "bench-" + NAMES.incrementAndGet();
        Semaphore s = switch (diagnostics) {
            case "off" -> SemaphoreKt.Semaphore(permits);
            case "named" -> SemaphoreKt.Semaphore(permits, Diagnostics.named(name));
            case "listener" -> SemaphoreKt.Semaphore(permits, Diagnostics.named(name));
            case "tracking" -> SemaphoreKt.Semaphore(permits, Diagnostics.named(name).withTracking(Tracking.HOLDERS));
            default -> throw new IllegalArgumentException("unknown diagnostics '" + diagnostics + "'");
        };
        if (diagnostics.equals("listener")) s.addListener(new SemaphoreListener() {});
        return s;
    }

    /** tryAcquire(1) then release(1), as UncontendedBenchmark's row. */
    @Benchmark
    public void tryAcquireRelease() {
        if (!single.tryAcquire(1)) throw new IllegalStateException("uncontended tryAcquire failed");
        single.release(1);
    }

    /** Suspending acquire() + release() that never suspends, 1,000 per coroutine. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingAcquireRelease() {
        Workloads.oursSemaphoreLoop(single, LOOP);
    }

    /** ContendedBenchmark's row on Dispatchers.Default, 1,000 coroutines, 8 permits, on a fresh semaphore. */
    @Benchmark
    public long contended8() {
        return Workloads.contended(Primitives.of(semaphore(8)), dispatchers.dispatcher, coroutineCount, sections, 50, 50);
    }
}
