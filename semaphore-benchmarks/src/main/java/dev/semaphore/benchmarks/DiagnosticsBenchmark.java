package dev.semaphore.benchmarks;

import dev.semaphore.Diagnostics;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.Tracking;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.*;

/**
 * What diagnostics cost (docs/benchmarking.md#diagnostics): our Semaphore with each level, divided by "off" in the
 * report, on UncontendedBenchmark's rows and ContendedBenchmark's (Dispatchers.Default, 1,000 coroutines, 8 permits).
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class DiagnosticsBenchmark {
    public static final int LOOP = 1000;

    private static final AtomicInteger NAMES = new AtomicInteger();

    @Param({"off", "named", "listener", "tracking"}) public String diagnostics;

    /** Critical sections per invocation of the contended row. */
    @Param({"100000"}) public int sections;

    private Semaphore single;
    private final BenchDispatchers dispatchers = BenchDispatchers.of("default");

    @Setup(Level.Trial) public void setUp() { single = semaphore(1); }

    private Semaphore semaphore(int permits) {
        String name = "bench-" + NAMES.incrementAndGet();
        Semaphore s = switch (diagnostics) {
            case "off" -> SemaphoreKt.Semaphore(permits);
            case "named", "listener" -> SemaphoreKt.Semaphore(permits, Diagnostics.named(name));
            case "tracking" -> SemaphoreKt.Semaphore(permits, Diagnostics.named(name).withTracking(Tracking.HOLDERS));
            default -> throw new IllegalArgumentException("unknown diagnostics '" + diagnostics + "'");
        };
        if (diagnostics.equals("listener")) s.addListener(new SemaphoreListener() {});
        return s;
    }

    @Benchmark
    public void tryAcquireRelease() {
        if (!single.tryAcquire(1)) throw new IllegalStateException("uncontended tryAcquire failed");
        single.release(1);
    }

    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingAcquireRelease() { Workloads.oursSemaphoreLoop(single, LOOP); }

    @Benchmark
    public long contended8() {
        return Workloads.contended(Primitives.of(semaphore(8)), dispatchers.dispatcher, 1000, sections, ContendedShape.WORK, ContendedShape.WORK);
    }
}
