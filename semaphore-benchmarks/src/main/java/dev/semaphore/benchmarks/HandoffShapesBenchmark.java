package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import kotlin.coroutines.CoroutineContext;
import kotlinx.coroutines.ExecutorsKt;
import org.openjdk.jmh.annotations.*;

/**
 * The hand-off in each dispatcher shape (HandoffShapes.kt): a releaser hands a one-permit semaphore or lock to a
 * waiter on Dispatchers.Unconfined, on runBlocking's event loop, on Dispatchers.Default or on a thread of its own,
 * calling the primitive directly or behind an interface. Score: time per hand-off. Run with -prof gc for the
 * allocation per hand-off.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
@OperationsPerInvocation(HandoffShapesBenchmark.STEPS)
public class HandoffShapesBenchmark {
    static final int STEPS = 100_000;

    /** ours = dev.semaphore.Semaphore / Lock, kotlinx = kotlinx.coroutines.sync.Semaphore / Mutex. */
    @Param({"ours", "kotlinx"}) public String impl;

    /** Where the waiter runs: unconfined, eventLoop, default or singleThread. */
    @Param({"unconfined", "eventLoop", "default", "singleThread"}) public String waiter;

    /** direct: the primitive's own class; interface: behind SuspendPermits (one implementation per primitive). */
    @Param({"direct", "interface"}) public String call;

    private ExecutorService thread;
    private CoroutineContext context;

    @Setup(Level.Trial) public void setUp() {
        thread = Executors.newSingleThreadExecutor(ManyThreads.daemons("handoff-waiter-"));
        context = HandoffShapes.waiterContext(waiter, ExecutorsKt.from(thread));
    }

    @TearDown(Level.Trial) public void tearDown() {
        thread.shutdownNow();
    }

    @Benchmark public int semaphore() { return HandoffShapes.run(impl, false, call, context, STEPS); }
    @Benchmark public int lock() { return HandoffShapes.run(impl, true, call, context, STEPS); }
}
