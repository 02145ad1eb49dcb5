/*
 * Uncontended cost, one thread: every acquisition succeeds at once and nothing ever waits.
 *
 * Method names are <operation>_<impl>; the report pairs rows of the same operation and divides ours by
 * each peer. "floor" is ExactCasFloor (ExactCasFloor.kt): a semaphore with our contract (exact over-release check,
 * resizable total) reduced to one 64-bit word and one CAS on each side, called through kotlinx's Semaphore interface
 * exactly as kotlinx's rows are.
 * Each benchmark checks its acquisition succeeded, so a broken fast path fails instead of looking fast.
 * Run with -prof gc to see the allocation per operation (gc.alloc.rate.norm): the fast paths should allocate
 * nothing; the suspending loops allocate one coroutine per 1,000 operations.
 */
package dev.semaphore.benchmarks;

import dev.semaphore.Lock;
import dev.semaphore.LockKt;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import java.util.concurrent.TimeUnit;
import kotlinx.coroutines.sync.Mutex;
import kotlinx.coroutines.sync.MutexKt;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Uncontended acquire/release on one thread: ours vs kotlinx.coroutines, with the exact-CAS floor. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class UncontendedBenchmark {
    /** Operations per invocation of the suspending loops. */
    public static final int LOOP = 1000;

    private Semaphore ours;
    private kotlinx.coroutines.sync.Semaphore kx;
    private Lock oursLock;
    private Mutex kotlinxMutex;
    private kotlinx.coroutines.sync.Semaphore floor;

    /** Creates one of each primitive with one permit. */
    @Setup
    public void setUp() {
        ours = SemaphoreKt.Semaphore(1);
        kx = kotlinx.coroutines.sync.SemaphoreKt.Semaphore(1, 0);
        oursLock = LockKt.Lock(false);
        kotlinxMutex = MutexKt.Mutex(false);
        floor = new ExactCasFloor(1);
    }

    /** Our Semaphore: tryAcquire(1) then release(1). */
    @Benchmark
    public void tryAcquireRelease_ours() {
        if (!ours.tryAcquire(1)) throw new IllegalStateException("uncontended tryAcquire failed");
        ours.release(1);
    }

    /** kotlinx Semaphore: tryAcquire() then release(). */
    @Benchmark
    public void tryAcquireRelease_kotlinx() {
        if (!kx.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        kx.release();
    }

    /** The floor (ExactCasFloor): tryAcquire() then release(), as kotlinx's row calls them. */
    @Benchmark
    public void tryAcquireRelease_floor() {
        if (!floor.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        floor.release();
    }

    /** Our Lock: tryLock() then unlock(). */
    @Benchmark
    public void tryLockUnlock_ours() {
        if (!oursLock.tryLock(null)) throw new IllegalStateException("uncontended tryLock failed");
        oursLock.unlock(null);
    }

    /** kotlinx Mutex: tryLock() then unlock(). */
    @Benchmark
    public void tryLockUnlock_kotlinx() {
        if (!kotlinxMutex.tryLock(null)) throw new IllegalStateException("uncontended tryLock failed");
        kotlinxMutex.unlock(null);
    }

    /** Our Semaphore: suspending acquire() + release() that never suspends, 1,000 per coroutine. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingAcquireRelease_ours() {
        Workloads.oursSemaphoreLoop(ours, LOOP);
    }

    /** kotlinx Semaphore: suspending acquire() + release() that never suspends, 1,000 per coroutine. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingAcquireRelease_kotlinx() {
        Workloads.kotlinxSemaphoreLoop(kx, LOOP);
    }

    /** The floor (ExactCasFloor): suspending acquire() + release() that never suspends, in kotlinx's row's loop. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingAcquireRelease_floor() {
        Workloads.kotlinxSemaphoreLoop(floor, LOOP);
    }

    /** Our Lock: suspending lock() + unlock() that never suspends, 1,000 per coroutine. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingLockUnlock_ours() {
        Workloads.oursLockLoop(oursLock, LOOP);
    }

    /** kotlinx Mutex: suspending lock() + unlock() that never suspends, 1,000 per coroutine. */
    @Benchmark
    @OperationsPerInvocation(LOOP)
    public void suspendingLockUnlock_kotlinx() {
        Workloads.kotlinxMutexLoop(kotlinxMutex, LOOP);
    }
}
