/*
 * The uncontended cycle and the hand-off in the call shapes of CallShapes.kt (issue 30), ours and kotlinx's
 * Semaphore behind the same code, a new semaphore per iteration (as the independent harness of issue 30).
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

/** Call shapes: an interface wrapper, a field of another class, runBlocking, launch, a suspend lambda. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class CallShapesBenchmark {
    /** Operations per invocation of the loops. */
    public static final int LOOP = 10_000;

    /** ours = dev.semaphore.Semaphore, kotlinx = kotlinx.coroutines.sync.Semaphore. */
    @Param({"ours", "kotlinx"})
    public String impl;

    /** Permits of the semaphore of the uncontended rows. */
    @Param({"8"})
    public int permits;

    private Sem sem;
    private Sem empty;
    private OursHolder oursHolder;
    private KotlinxHolder kotlinxHolder;

    /** New semaphores each iteration; the hand-off's starts with no permit free. */
    @Setup(Level.Iteration)
    public void setUp() throws InterruptedException {
        sem = CallShapes.sem(impl, permits);
        empty = CallShapes.sem(impl, 1);
        if (!empty.tryAcquire()) throw new IllegalStateException("could not empty the hand-off semaphore");
        oursHolder = impl.equals("ours") ? new OursHolder(permits) : null;
        kotlinxHolder = impl.equals("kotlinx") ? new KotlinxHolder(permits) : null;
    }

    /** Every permit is back after the iteration. */
    @TearDown(Level.Iteration)
    public void check() {
        if (sem.getAvailable() != permits || empty.getAvailable() != 0) {
            throw new IllegalStateException(impl + ": a permit was lost or gained: " + sem.getAvailable() + ", " + empty.getAvailable());
        }
    }

    /** tryAcquire() + release() through the interface, the result to the Blackhole. */
    @Benchmark
    public boolean interfaceTry() {
        boolean ok = sem.tryAcquire();
        sem.release();
        return ok;
    }

    /** runBlocking { repeat(LOOP) { acquire(); release() } } through the interface. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void interfaceRunBlocking() {
        CallShapes.runBlockingLoop(sem, LOOP);
    }

    /** The loop in a coroutine launched from runBlocking. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void interfaceLaunch() {
        CallShapes.launchLoop(sem, LOOP);
    }

    /** The loop calling a suspend lambda. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void interfaceLambda() {
        CallShapes.lambdaLoop(sem, LOOP);
    }

    /** tryAcquire() + release() on a field of another class. */
    @Benchmark
    public boolean fieldTry() {
        return oursHolder != null ? oursHolder.cycle() : kotlinxHolder.cycle();
    }

    /** runBlocking loop on a field of another class. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void fieldRunBlocking() {
        if (oursHolder != null) oursHolder.runBlockingLoop(LOOP); else kotlinxHolder.runBlockingLoop(LOOP);
    }

    /** Hand-off of one permit between two coroutines through the interface, LOOP times. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void interfaceHandoff() {
        CallShapes.handoff(empty, LOOP);
    }
}
