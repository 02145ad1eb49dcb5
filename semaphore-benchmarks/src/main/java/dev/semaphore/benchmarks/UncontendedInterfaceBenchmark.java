package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * UncontendedBenchmark's cycles through a one-method interface (CallShapes.kt), one implementation per fork (so
 * each call site is monomorphic). At the end of every iteration a cycle must still succeed and the permit be back.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Thread)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class UncontendedInterfaceBenchmark {
    public static final int LOOP = UncontendedBenchmark.LOOP;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore, floor = ExactCasFloor. */
    @Param({"ours", "kotlinx", "floor"}) public String impl;

    private TryCycle tryCycle;
    private SuspendCycle suspendCycle;

    @Setup(Level.Trial) public void setUp() { tryCycle = Cycles.tryCycle(impl); suspendCycle = Cycles.suspendCycle(impl); }

    @TearDown(Level.Iteration)
    public void check() {
        if (!tryCycle.cycle() || tryCycle.getAvailable() != 1) {
            throw new IllegalStateException(impl + ": the uncontended try cycle failed or did not give the permit back");
        }
        if (suspendCycle.getAvailable() != 1) throw new IllegalStateException(impl + ": the suspending cycle kept a permit");
    }

    @Benchmark public boolean tryAcquireRelease() { return tryCycle.cycle(); }

    /** LOOP cycles in one coroutine that must never suspend. */
    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingAcquireRelease() { Workloads.suspendCycleLoop(suspendCycle, LOOP); }
}
