package dev.semaphore.benchmarks;

import dev.semaphore.Lock;
import dev.semaphore.LockKt;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import java.util.concurrent.TimeUnit;
import kotlinx.coroutines.sync.Mutex;
import kotlinx.coroutines.sync.MutexKt;
import org.openjdk.jmh.annotations.*;

/**
 * Uncontended acquire + release on one thread, ours vs kotlinx.coroutines, with the floor ExactCasFloor called as
 * kotlinx's rows call kotlinx. Methods are named {@code <operation>_<impl>}; each checks that its acquisition
 * succeeded (the suspending loops, that they never suspend), so a broken fast path fails instead of looking fast.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Thread)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class UncontendedBenchmark {
    /** Operations per invocation of the suspending loops. */
    public static final int LOOP = 1000;

    private Semaphore ours = SemaphoreKt.Semaphore(1);
    private kotlinx.coroutines.sync.Semaphore kx = kotlinx.coroutines.sync.SemaphoreKt.Semaphore(1, 0);
    private kotlinx.coroutines.sync.Semaphore floor = new ExactCasFloor(1);
    private Lock oursLock = LockKt.Lock(false);
    private Mutex kotlinxMutex = MutexKt.Mutex(false);

    @Benchmark public void tryAcquireRelease_ours() {
        if (!ours.tryAcquire(1)) throw new IllegalStateException("uncontended tryAcquire failed");
        ours.release(1);
    }

    @Benchmark public void tryAcquireRelease_kotlinx() {
        if (!kx.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        kx.release();
    }

    @Benchmark public void tryAcquireRelease_floor() {
        if (!floor.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        floor.release();
    }

    @Benchmark public void tryLockUnlock_ours() {
        if (!oursLock.tryLock(null)) throw new IllegalStateException("uncontended tryLock failed");
        oursLock.unlock(null);
    }

    @Benchmark public void tryLockUnlock_kotlinx() {
        if (!kotlinxMutex.tryLock(null)) throw new IllegalStateException("uncontended tryLock failed");
        kotlinxMutex.unlock(null);
    }

    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingAcquireRelease_ours() { Workloads.oursSemaphoreLoop(ours, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingAcquireRelease_kotlinx() { Workloads.kotlinxSemaphoreLoop(kx, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingAcquireRelease_floor() { Workloads.kotlinxSemaphoreLoop(floor, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingLockUnlock_ours() { Workloads.oursLockLoop(oursLock, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void suspendingLockUnlock_kotlinx() { Workloads.kotlinxMutexLoop(kotlinxMutex, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void withPermit_ours() { Workloads.oursWithPermitLoop(ours, LOOP); }
    @Benchmark @OperationsPerInvocation(LOOP) public void withPermit_kotlinx() { Workloads.kotlinxWithPermitLoop(kx, LOOP); }
}
