/*
 * The engine's own part of one hand-off step, without coroutines: what HandoffBenchmark's ours row pays
 * on top of the kotlinx machinery that every row pays (the continuation, its parent-job handle, the
 * dispatch). White-box on purpose: it drives semaphore-core's internal engine (WaiterQueue) from Java,
 * which the Kotlin `internal` modifier does not stop, to put a figure on our engine alone.
 *
 * One step = one waiter offered behind the held permit (it is queued), then one release that grants it
 * (and, as in the hand-off, leaves the permit held by the grantee). The waiter is a bare engine waiter:
 * it always claims and its wake does nothing, so the step is the engine's two lock round trips, its line
 * and its waiter object, nothing else.
 *
 * floor = the same step on HandoffFloor's design: one slot, a CAS that parks the waiter in it and a CAS
 * that takes it out. It parks an object that already exists (the floor parks the continuation, which the
 * suspension made anyway), where ours allocates its waiter node, as the real path does.
 */
package dev.semaphore.benchmarks;

import dev.semaphore.internal.Grantee;
import dev.semaphore.internal.PermitWaiter;
import dev.semaphore.internal.WaiterQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** The engine's part of a hand-off step (ours) against the hand-off floor's slot (floor). */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class EngineStepBenchmark {
    /** A bare engine waiter: it always claims, and its wake does nothing. */
    static final class BareWaiter extends PermitWaiter {
        BareWaiter(Grantee grantee) {
            super(1, grantee);
        }

        @Override
        public boolean tryClaim() {
            return true;
        }

        @Override
        public void onGranted() {
        }

        @Override
        public void onFailed(Throwable cause) {
            throw new IllegalStateException("the engine step's waiter failed", cause);
        }

        @Override
        public boolean getWakesWithoutCallbacks() {
            return true;
        }
    }

    private WaiterQueue queue;
    private Grantee grantee;
    private final AtomicReference<Object> slot = new AtomicReference<>();
    private final Object parked = new Object();

    /** A semaphore of one permit, held: every waiter queues behind it. */
    @Setup(Level.Trial)
    public void setUp() {
        dev.semaphore.Semaphore s = dev.semaphore.SemaphoreKt.Semaphore(1);
        if (!s.tryAcquire(1)) throw new IllegalStateException("the permit is free at the start");
        queue = (WaiterQueue) s;
        grantee = (Grantee) s;
    }

    /** Every step left the permit held and nobody queued. */
    @TearDown(Level.Iteration)
    public void check() {
        if (queue.getAvailablePermits() != 0 || queue.getQueueLength() != 0) throw new IllegalStateException("after the steps: " + queue);
        if (slot.get() != null) throw new IllegalStateException("the floor's slot is not empty");
    }

    /** Ours: a waiter queued behind the held permit, then a release that grants it. */
    @Benchmark
    public Object step_ours() {
        BareWaiter w = new BareWaiter(grantee);
        if (queue.enqueue(w, 0)) throw new IllegalStateException("granted at once: the permit was free");
        queue.release(1);
        if (w.getStatus() != PermitWaiter.GRANTED) throw new IllegalStateException("the release did not grant the waiter");
        return w;
    }

    /** The floor: one CAS parks the waiter in the slot, one takes it out. */
    @Benchmark
    public Object step_floor() {
        if (!slot.compareAndSet(null, parked)) throw new IllegalStateException("the slot was taken");
        if (!slot.compareAndSet(parked, null)) throw new IllegalStateException("the waiter left the slot");
        return parked;
    }
}
