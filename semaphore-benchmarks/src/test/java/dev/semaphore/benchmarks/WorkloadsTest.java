package dev.semaphore.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.LockKt;
import dev.semaphore.SemaphoreKt;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlinx.coroutines.BuildersKt;
import kotlinx.coroutines.CoroutineDispatcher;
import kotlinx.coroutines.CoroutineScopeKt;
import kotlinx.coroutines.CoroutineStart;
import kotlinx.coroutines.Dispatchers;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.sync.MutexKt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The workloads the benchmarks time must do what they claim, for every implementation, and their own
 * checks must catch a primitive that does not behave (so a broken primitive cannot post a fast number).
 * Sizes are small: these are correctness checks, not measurements.
 */
class WorkloadsTest {

    @ParameterizedTest
    @ValueSource(strings = {"ours", "kotlinx", "floor"})
    void contendedRunsEverySectionOnceForSemaphoresAndLocks(String impl) {
        long a = Workloads.contended(Primitives.semaphore(impl, 2), Dispatchers.getDefault(), 50, 2_000, 5, 5);
        long b = Workloads.contended(Primitives.semaphore(impl, 2), Dispatchers.getDefault(), 50, 2_000, 5, 5);
        assertEquals(a, b, "the work is deterministic: same digest for the same sizes");
        if (!impl.equals("floor")) Workloads.contended(Primitives.lock(impl, false), Dispatchers.getDefault(), 7, 1_001, 5, 5);
    }

    @Test
    void queueFloorCountsSeveralPermits() {
        QueueFloor floor = new QueueFloor(3);
        for (int i = 0; i < 3; i++) {
            assertTrue(acquireIn(floor, Dispatchers.getUnconfined()).isCompleted(), "permit " + i + " of 3 was free");
        }
        assertEquals(0, floor.getAvailable());
        Job fourth = acquireIn(floor, Dispatchers.getUnconfined());
        assertFalse(fourth.isCompleted(), "a fourth acquirer must wait");
        assertEquals(1, floor.getQueued());
        floor.release(); // handed to the fourth, not freed
        assertTrue(fourth.isCompleted());
        assertEquals(0, floor.getQueued());
        assertEquals(0, floor.getAvailable());
        floor.release();
        floor.release();
        floor.release();
        assertEquals(3, floor.getAvailable());
        IllegalStateException e = assertThrows(IllegalStateException.class, floor::release, "over-release");
        assertTrue(e.getMessage().contains("3 permits"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "priority-1", "priority-4", "priority-64"})
    void contendedRunsOnThePrioritySemaphores(String impl) {
        Workloads.contended(Primitives.prioritized(impl, 1), Dispatchers.getDefault(), 100, 1_000, 5, 5);
    }

    @Test
    void badImplNamesAreRejectedWithTheName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Primitives.semaphore("ourz", 1));
        assertTrue(e.getMessage().contains("ourz"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Primitives.lock("nope", false));
        assertThrows(IllegalArgumentException.class, () -> Primitives.prioritized("priority-0", 1));
        assertThrows(IllegalArgumentException.class, () -> Primitives.prioritized("priority-x", 1));
        assertThrows(IllegalArgumentException.class, () -> Cycles.tryCycle("nope"));
        assertThrows(IllegalArgumentException.class, () -> Cycles.suspendCycle("nope"));
    }

    /** Starts a coroutine on [dispatcher] that runs at once until it suspends in floor.acquire (or returns). */
    private static Job acquireIn(SuspendPermits floor, CoroutineDispatcher dispatcher) {
        return BuildersKt.launch(CoroutineScopeKt.CoroutineScope(dispatcher), EmptyCoroutineContext.INSTANCE,
                CoroutineStart.UNDISPATCHED, (scope, cont) -> floor.acquire(0, cont));
    }

    @Test
    void queueFloorQueuesCancelsAndServesTheRest() {
        QueueFloor floor = new QueueFloor(1);
        assertTrue(acquireIn(floor, Dispatchers.getUnconfined()).isCompleted(), "the permit is held from now on");
        WaiterSet set = new WaiterSet(floor, 5_000).fill();
        assertEquals(5_000, floor.getQueued());
        set.cancelSpread(1_000);
        set.verifyCancelled(1_000);
        set.cancelAll();
        assertEquals(0, floor.getQueued());
        floor.release(); // nobody left: the permit becomes free
        assertEquals(1, floor.getAvailable());

        QueueFloor chain = new QueueFloor(1);
        acquireIn(chain, Dispatchers.getUnconfined());
        new WaiterSet(chain, 100).fill();
        chain.release(); // each grantee releases to the next (Unconfined): all 100 run, then the permit is free
        assertEquals(0, chain.getQueued());
        assertEquals(1, chain.getAvailable());
    }

    @Test
    void withPermitLoopsNeverSuspendAndGiveThePermitBack() {
        dev.semaphore.Semaphore ours = SemaphoreKt.Semaphore(1);
        kotlinx.coroutines.sync.Semaphore kx = kotlinx.coroutines.sync.SemaphoreKt.Semaphore(1, 0);
        Workloads.oursWithPermitLoop(ours, 100);
        Workloads.kotlinxWithPermitLoop(kx, 100);
        assertEquals(1, ours.getAvailablePermits());
        assertEquals(1, kx.getAvailablePermits());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours", "kotlinx", "floor"})
    void interfaceShapedCyclesSucceedAndGiveThePermitBack(String impl) {
        UncontendedInterfaceBenchmark b = new UncontendedInterfaceBenchmark();
        b.impl = impl;
        b.setUp();
        for (int i = 0; i < 100; i++) assertTrue(b.tryAcquireRelease());
        b.suspendingAcquireRelease();
        b.check();
        TryCycle held = Cycles.tryCycle(impl);
        assertTrue(held.cycle());
        assertEquals(1, held.getAvailable());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours", "kotlinx"})
    void handoffAlternatesStrictly(String impl) {
        assertEquals(2_000, Workloads.handoff(Primitives.semaphore(impl, 1), 2_000));
        assertEquals(2_000, Workloads.handoff(Primitives.lock(impl, false), 2_000));
    }

    @Test
    void countingDispatcherCountsTheLaunchAndAtMostOneWakePerStep() {
        java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            for (String impl : List.of("ours", "kotlinx")) {
                HandoffShapes.CountingDispatcher counting =
                        new HandoffShapes.CountingDispatcher(kotlinx.coroutines.ExecutorsKt.from(thread));
                assertEquals(2_000, HandoffShapes.run(impl, false, "direct", counting, 2_000), impl);
                // The launch is one dispatch, and each step adds one at most (a wake of a queued waiter).
                long n = counting.getDispatches();
                assertTrue(n >= 1 && n <= 2_001, impl + ": " + n + " dispatches for 2,000 steps");
            }
        } finally {
            thread.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unconfined", "eventLoop", "default", "singleThread"})
    void handoffShapesHandEveryGrantToTheWaiterInEachShape(String waiter) {
        java.util.concurrent.ExecutorService thread = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            kotlin.coroutines.CoroutineContext context =
                    HandoffShapes.waiterContext(waiter, kotlinx.coroutines.ExecutorsKt.from(thread));
            for (String impl : List.of("ours", "kotlinx")) {
                for (String call : List.of("direct", "interface")) {
                    for (boolean lock : List.of(false, true)) {
                        // Any release beyond one permit would throw (kotlinx's Semaphore; our Lock and Mutex when not
                        // held), and the waiter checks that it took every grant.
                        assertEquals(2_000, HandoffShapes.run(impl, lock, call, context, 2_000), impl + " " + call + " " + lock);
                    }
                }
            }
        } finally {
            thread.shutdownNow();
        }
        assertThrows(IllegalArgumentException.class, () -> HandoffShapes.waiterContext("elsewhere", kotlinx.coroutines.Dispatchers.getDefault()));
    }

    @Test
    void handoffDetectsAPrimitiveThatDoesNotMakeThemAlternate() {
        // Two permits: nobody ever waits after the first hand-over, so one coroutine runs twice in a row.
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Workloads.handoff(Primitives.semaphore("ours", 2), 2_000));
        assertTrue(e.getMessage().contains("strict alternation"), e.getMessage());
    }

    @Test
    void uncontendedLoopsCompleteWithoutSuspendingAndLeaveThePermitFree() {
        dev.semaphore.Semaphore ours = SemaphoreKt.Semaphore(1);
        Workloads.oursSemaphoreLoop(ours, 100);
        assertEquals(1, ours.getAvailablePermits());
        kotlinx.coroutines.sync.Semaphore kx = kotlinx.coroutines.sync.SemaphoreKt.Semaphore(1, 0);
        Workloads.kotlinxSemaphoreLoop(kx, 100);
        assertEquals(1, kx.getAvailablePermits());
        dev.semaphore.Lock lock = LockKt.Lock(false);
        Workloads.oursLockLoop(lock, 100);
        assertFalse(lock.isLocked());
        kotlinx.coroutines.sync.Mutex mutex = MutexKt.Mutex(false);
        Workloads.kotlinxMutexLoop(mutex, 100);
        assertFalse(mutex.isLocked());
    }

    @Test
    void exactCasFloorCountsExactlyAndRefusesAnOverReleaseBeforeAnythingChanges() {
        ExactCasFloor floor = new ExactCasFloor(2);
        Workloads.kotlinxSemaphoreLoop(floor, 100); // the suspending loop of the benchmark, never suspending
        assertEquals(2, floor.getAvailablePermits());
        IllegalStateException over = assertThrows(IllegalStateException.class, floor::release);
        assertEquals("cannot release: all 2 permits are free", over.getMessage());
        assertEquals(2, floor.getAvailablePermits());
        assertTrue(floor.tryAcquire());
        assertTrue(floor.tryAcquire());
        assertFalse(floor.tryAcquire());
        assertEquals(0, floor.getAvailablePermits());
        // Its acquire never waits: a loop that would have to is reported, not timed.
        assertThrows(IllegalStateException.class, () -> Workloads.kotlinxSemaphoreLoop(floor, 1));
        floor.release();
        assertEquals(1, floor.getAvailablePermits());
    }

    @Test
    void permitContractFloorReleasesOncePerHandle() {
        PermitContractFloor floor = new PermitContractFloor(1);
        CompletableFuture<PermitContractFloor.Handle> f = floor.acquire();
        assertTrue(f.isDone(), "granted at once: a completed future");
        PermitContractFloor.Handle p = f.join();
        assertFalse(f.cancel(false), "a completed future holds its handle");
        assertThrows(IllegalStateException.class, floor::acquire, "the only permit is held");
        p.close();
        p.close(); // a second close does nothing: no over-release
        PermitContractFloor.Handle q = floor.acquire().join();
        assertThrows(IllegalStateException.class, floor::acquire);
        q.close();
        floor.acquire().join().close(); // the permit is back exactly once
    }

    @Test
    void javaUncontendedRowsGiveEveryPermitBack() throws InterruptedException {
        JavaUncontendedBenchmark b = new JavaUncontendedBenchmark();
        for (int i = 0; i < 100; i++) {
            b.acquireRelease_ours();
            b.acquireBlockingRelease_ours();
            b.tryAcquireRelease_ours();
            b.acquireRelease_floor();
            b.acquireRelease_ibm();
            b.tryAcquireRelease_ibm();
            b.acquireRelease_juc();
            b.acquireBlockingRelease_juc();
            b.acquireBlockingRelease_floor();
            b.tryAcquireTimedRelease_ours();
            b.tryAcquireTimedRelease_juc();
            b.tryAcquireRelease_juc();
        }
        assertEquals(1, b.ours.availablePermits());
        assertEquals(1, b.juc.availablePermits());
        assertTrue(b.ibm.tryAcquire(), "IBM's permit is back");
        b.floor.acquireNow().close(); // the floor's permit is back (its acquire throws otherwise)
        // The blocking row never waits: with the permit held, the row would block; its form gives up at once instead.
        try (dev.semaphore.async.Permit held = b.ours.acquireBlocking()) {
            assertTrue(b.ours.acquireBlocking(java.time.Duration.ZERO).isEmpty(), "the only permit is held");
        }
        assertEquals(1, b.ours.availablePermits());
    }

    @Test
    void anUncontendedLoopThatWouldSuspendIsReported() {
        dev.semaphore.Semaphore held = SemaphoreKt.Semaphore(1);
        assertTrue(held.tryAcquire(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Workloads.oursSemaphoreLoop(held, 1));
        assertTrue(e.getMessage().contains("suspended"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours", "kotlinx"})
    void waiterSetCancelsExactlyTheChosenWaiters(String impl) {
        SuspendPermits p = Primitives.semaphore(impl, 0);
        WaiterSet set = new WaiterSet(p, 5_000).fill();
        if (impl.equals("ours")) assertEquals(5_000, p.getQueued());
        set.cancelSpread(1_000);
        set.verifyCancelled(1_000);
        if (impl.equals("ours")) assertEquals(4_000, p.getQueued());
        set.cancelAll();
        if (impl.equals("ours")) assertEquals(0, p.getQueued());
    }

    @Test
    void waiterSetVerifyFailsWhenNothingWasCancelled() {
        WaiterSet set = new WaiterSet(Primitives.semaphore("ours", 0), 2_000).fill();
        assertThrows(IllegalStateException.class, () -> set.verifyCancelled(1_000));
        set.cancelAll();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours", "ibm", "juc"})
    void futuresWorkloadRunsEverySectionAndReturnsEveryPermit(String impl) throws Exception {
        FuturesContendedBenchmark b = new FuturesContendedBenchmark();
        b.impl = impl;
        b.tasks = 40;
        b.permits = 3;
        b.sections = 2_000;
        b.setUp();
        try {
            b.contended(); // throws if a section is missing or a permit is not back
            b.contended();
        } finally {
            b.tearDown();
        }
    }

    @Test
    void memoryProbeSeesTheWaitersItQueued() {
        // A sanity check of the method, not a measurement: 20,000 queued coroutines cost far more than 0.
        List<MemoryCase> r = MemoryPerWaiter.measure(MemoryPerWaiter.coroutineCases().subList(0, 2), 20_000, 1);
        assertEquals(2, r.size());
        assertTrue(r.get(0).getBytesPerWaiter() > 50, "a suspended coroutine retains well over 50 bytes: " + r);
        // Ours may retain less than the bare baseline (its waiter suspends without a CancellableContinuation),
        // so the second case is checked for seeing its waiters too, and for its net being the difference.
        assertTrue(r.get(1).getBytesPerWaiter() > 50, "a queued semaphore waiter retains well over 50 bytes: " + r);
        assertEquals(r.get(1).getBytesPerWaiter() - r.get(0).getBytesPerWaiter(), r.get(1).getNetOfBaseline(), 1e-6, "net of baseline: " + r);
    }
}
