/*
 * The uncontended rows of UncontendedBenchmark in the shape of the independent harness of issue 11: the same
 * tryAcquire()+release() and suspending acquire()+release() cycles on a semaphore of one permit, but called
 * through a one-method Kotlin interface (TryCycle.cycle(): Boolean, SuspendCycle.cycle(); InterfaceShapes.kt)
 * whose implementation is chosen per fork by @Param impl, the try's result handed to JMH's Blackhole.
 *
 * Why a second shape: UncontendedBenchmark calls each primitive directly from its own @Benchmark method, void,
 * throwing on failure, the shape most favourable to a fast path with a long chain before its CAS (load, unpack,
 * check, pack). Before the engine's word was reshaped (issue 11) ours had such a chain, and behind the interface it
 * cost ours about 0.6-1 ns more per cycle and kotlinx nothing measurable, so a report that showed only the direct
 * shape understated the gap another harness saw. Both shapes are kept, and the report prints their ratios one after
 * the other (docs/benchmarking.md says the same for readers of the report).
 *
 * Invariants:
 * - One implementation per fork (JMH forks each @Param value), so every call site is monomorphic, as in the
 *   harness; "floor" is ExactCasFloor (one exact CAS of a 64-bit word on each side) behind the same interface.
 * - The try's result is returned to JMH, and at the end of every iteration a cycle must still succeed and the
 *   permit be back (a fast path that fails or leaks cannot post a number).
 * - The suspending loop runs LOOP cycles in one coroutine that must never suspend (checked), as the direct rows.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
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

/** Uncontended acquire/release on one thread through a one-method interface: ours vs kotlinx, with the CAS floor. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class UncontendedInterfaceBenchmark {
    /** Operations per invocation of the suspending loop (as UncontendedBenchmark). */
    public static final int LOOP = UncontendedBenchmark.LOOP;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore, floor = ExactCasFloor. */
    @Param({"ours", "kotlinx", "floor"})
    public String impl;

    private TryCycle tryCycle;
    private SuspendCycle suspendCycle;

    /** One semaphore of one permit behind each interface. */
    @Setup(Level.Trial)
    public void setUp() {
        tryCycle = Cycles.tryCycle(impl);
        suspendCycle = Cycles.suspendCycle(impl);
    }

    /** A cycle still succeeds and every permit is back. */
    @TearDown(Level.Iteration)
    public void check() {
        if (!tryCycle.cycle() || tryCycle.getAvailable() != 1) {
            throw new IllegalStateException(impl + ": the uncontended try cycle failed or did not give the permit back");
        }
        if (suspendCycle.getAvailable() != 1) throw new IllegalStateException(impl + ": the suspending cycle kept a permit");
    }

    /** tryAcquire() + release() through TryCycle.cycle(); the result goes to JMH's Blackhole. */
    @Benchmark
    public boolean tryAcquireRelease() {
        return tryCycle.cycle();
    }

    /** LOOP x (acquire() + release()) through SuspendCycle.cycle(), in one coroutine that never suspends. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingAcquireRelease() {
        Workloads.suspendCycleLoop(suspendCycle, LOOP);
    }
}
