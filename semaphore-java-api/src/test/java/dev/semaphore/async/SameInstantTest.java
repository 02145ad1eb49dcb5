package dev.semaphore.async;

import static dev.semaphore.async.AsyncSemaphoreTest.drained;
import static dev.semaphore.async.TestSupport.assertState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The "granted in the same instant" interleavings of a future's withdrawal and its grant (JvmWaiters.kt;
 * WaiterQueue.kt, W1-W3), produced deterministically on one thread instead of hoped for in a race:
 *  - interleaving 4 (C, then G, then the hook): a dependent registered by the caller runs BEFORE the
 *    library's completion hook (CompletableFuture runs dependents last-registered first), so a release
 *    inside it grants the waiter whose future was just cancelled, while it is still queued;
 *  - interleaving 3 (G, then C, then onGranted): inside another waiter's continuation the engine's
 *    trampoline defers delivery, so a release there grants the waiter, and a cancel right after wins the
 *    future before onGranted runs.
 * In both, the permits must end up with the next waiter or back in the semaphore.
 */
class SameInstantTest {

    @Test
    void cancelThenGrantBeforeTheHookHandsThePermitOn() {
        AsyncSemaphore s = drained(1);
        CompletableFuture<Permit> f = s.acquire();
        CompletableFuture<Permit> next = s.acquire();
        f.whenComplete((p, e) -> s.release()); // runs before the library's hook
        assertTrue(f.cancel(false));
        assertTrue(next.isDone(), "the permit granted to the cancelled waiter was handed on to the next one");
        assertState(s, 0, 0);
        next.join().close();
        assertState(s, 1, 0);
    }

    @Test
    void cancelThenGrantWithNobodyBehindReturnsThePermitToTheSemaphore() {
        AsyncSemaphore s = drained(2);
        CompletableFuture<Permit> f = s.acquire(2);
        f.whenComplete((p, e) -> s.release(2));
        assertTrue(f.completeExceptionally(new IllegalStateException("caller gave up")));
        assertState(s, 2, 0);
    }

    @Test
    void grantThenCancelBeforeDeliveryHandsThePermitOn() {
        AsyncSemaphore s = drained(1);
        CompletableFuture<Permit> a = s.acquire();
        CompletableFuture<Permit> victim = s.acquire();
        CompletableFuture<Permit> last = s.acquire();
        AtomicBoolean cancelWon = new AtomicBoolean();
        a.thenAccept(p -> {
            p.close(); // grants `victim`; its delivery waits for this continuation to return
            cancelWon.set(victim.cancel(false));
            assertFalse(last.isDone());
        });
        s.release();
        assertTrue(cancelWon.get(), "the cancel completed the future before the grant was delivered");
        assertTrue(victim.isCancelled());
        assertTrue(last.isDone(), "the victim's permit was handed on to the next waiter");
        assertState(s, 0, 0);
        last.join().close();
        assertState(s, 1, 0);
    }

    @Test
    void aLockGrantedToACancelledRequestIsPassedOnWithTheRightHolder() {
        // Java holds have no owner to look at: the holder is checked through the holds themselves (closing
        // a Permit whose hold is not the current one throws) and through a Kotlin owner queued last.
        AsyncLock lock = AsyncLock.create();
        Permit first = lock.lock().join();
        CompletableFuture<Permit> a = lock.lock();
        CompletableFuture<Permit> victim = lock.lock();
        CompletableFuture<Permit> next = lock.lock();
        CompletableFuture<kotlin.Unit> kotlinOwner = TestSupport.kotlinLock(lock.asKotlin(), "kotlin");
        AtomicBoolean cancelWon = new AtomicBoolean();
        AtomicBoolean victimHeldInside = new AtomicBoolean();
        AtomicInteger queuedInside = new AtomicInteger(-1);
        a.thenAccept(p -> {
            p.close(); // grants `victim` (its hold recorded at once), delivery deferred
            victimHeldInside.set(lock.isLocked());
            queuedInside.set(lock.queueLength());
            cancelWon.set(victim.cancel(true));
        });
        first.close();
        assertTrue(victimHeldInside.get(), "the hold is recorded under the engine lock at the grant");
        assertEquals(2, queuedInside.get(), "the victim left the line when granted; next and the Kotlin owner wait");
        assertTrue(cancelWon.get());
        assertTrue(victim.isCancelled());
        assertTrue(next.isDone(), "handed on to the next request");
        assertFalse(kotlinOwner.isDone(), "only one holder: the Kotlin owner still waits");
        assertEquals(1, lock.queueLength());
        next.join().close(); // throws if the lock's current hold were not next's (e.g. the victim's)
        assertTrue(kotlinOwner.isDone(), "next's close passed the lock on: its hold was the current one");
        assertTrue(lock.asKotlin().holdsLock("kotlin"));
        lock.asKotlin().unlock("kotlin");
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }
}
