package dev.semaphore.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * The uncontended cycle and the hand-off in users' call shapes (CallShapes.kt), ours and kotlinx's Semaphore behind
 * the same code, new semaphores every iteration; after each, every permit must be back.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Thread)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class CallShapesBenchmark {
    public static final int LOOP = 10_000;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"}) public String impl;

    /** Permits of the uncontended rows' semaphore. */
    @Param({"8"}) public int permits;

    private Sem sem, empty;
    private OursHolder oursHolder;
    private KotlinxHolder kotlinxHolder;

    /** The hand-off's semaphore starts with no permit free. */
    @Setup(Level.Iteration)
    public void setUp() {
        sem = CallShapes.sem(impl, permits);
        empty = CallShapes.sem(impl, 1);
        if (!empty.tryAcquire()) throw new IllegalStateException("could not empty the hand-off semaphore");
        oursHolder = impl.equals("ours") ? new OursHolder(permits) : null;
        kotlinxHolder = impl.equals("kotlinx") ? new KotlinxHolder(permits) : null;
    }

    @TearDown(Level.Iteration)
    public void check() {
        if (sem.getAvailable() != permits || empty.getAvailable() != 0) {
            throw new IllegalStateException(impl + ": a permit was lost or gained: " + sem.getAvailable() + ", " + empty.getAvailable());
        }
    }

    @Benchmark public boolean interfaceTry() { boolean ok = sem.tryAcquire(); sem.release(); return ok; }
    @Benchmark @OperationsPerInvocation(LOOP) public void interfaceRunBlocking() { CallShapes.runBlockingLoop(sem, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void interfaceLaunch() { CallShapes.launchLoop(sem, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void interfaceLambda() { CallShapes.lambdaLoop(sem, LOOP); }
    @Benchmark public boolean fieldTry() { return oursHolder != null ? oursHolder.cycle() : kotlinxHolder.cycle(); }

    @Benchmark @OperationsPerInvocation(LOOP)
    public void fieldRunBlocking() {
        if (oursHolder != null) oursHolder.runBlockingLoop(LOOP); else kotlinxHolder.runBlockingLoop(LOOP);
    }

    @Benchmark @OperationsPerInvocation(LOOP) public void interfaceHandoff() { CallShapes.handoff(empty, LOOP); }
}
