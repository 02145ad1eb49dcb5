package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import kotlinx.coroutines.Dispatchers;
import kotlinx.coroutines.ExecutorsKt;
import org.openjdk.jmh.annotations.*;

/**
 * The cross-thread cells of HandoffShapesBenchmark again, with the waiter's dispatcher counting its dispatches
 * (HandoffShapes.CountingDispatcher): a step whose release finds the waiter queued dispatches it once (the waiter's
 * thread is woken for the grant); a step whose release comes before the waiter is back in line dispatches nothing
 * (the waiter's next acquire takes the free permit). Score: time per hand-off; the counters: dispatches and steps
 * (their quotient is the share of steps that woke the waiter's thread). Not in the report: docs/profiles.md reads it.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
@OperationsPerInvocation(HandoffModesBenchmark.STEPS)
public class HandoffModesBenchmark {
    static final int STEPS = 100_000;

    /** ours = dev.semaphore.Semaphore / Lock, kotlinx = kotlinx.coroutines.sync.Semaphore / Mutex. */
    @Param({"ours", "kotlinx"}) public String impl;

    /** Where the waiter runs: default (Dispatchers.Default) or singleThread (a thread of its own). */
    @Param({"default", "singleThread"}) public String waiter;

    /** direct: the primitive's own class; interface: behind SuspendPermits. */
    @Param({"direct", "interface"}) public String call;

    private ExecutorService thread;
    private HandoffShapes.CountingDispatcher counting;

    /** Per iteration: the waiter's dispatches and the steps, summed by JMH over the measured iterations. */
    @State(Scope.Thread) @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Counts {
        public long dispatches;
        public long steps;
    }

    @Setup(Level.Trial) public void setUp() {
        thread = Executors.newSingleThreadExecutor(ManyThreads.daemons("handoff-waiter-"));
        counting = new HandoffShapes.CountingDispatcher(
            "default".equals(waiter) ? Dispatchers.getDefault() : ExecutorsKt.from(thread));
    }

    @TearDown(Level.Trial) public void tearDown() {
        thread.shutdownNow();
    }

    private int counted(boolean lock, Counts counts) {
        long before = counting.getDispatches();
        int steps = HandoffShapes.run(impl, lock, call, counting, STEPS);
        counts.dispatches += counting.getDispatches() - before;
        counts.steps += steps;
        return steps;
    }

    @Benchmark public int semaphore(Counts counts) { return counted(false, counts); }
    @Benchmark public int lock(Counts counts) { return counted(true, counts); }
}
