package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A lock Permit stands for one hold: closing one whose hold someone else already ended throws and
 * changes nothing, however the lock was taken again since (the bug: it used to free the new holder).
 */
class StalePermitTest {

    /** Closing [stale] must throw, leave [current]'s hold in place and the queue as it was. */
    private static void assertStaleCloseChangesNothing(AsyncLock lock, Permit stale, Permit current) {
        CompletableFuture<Permit> waiter = lock.lock();
        assertEquals(1, lock.queueLength());
        IllegalStateException e = assertThrows(IllegalStateException.class, stale::close);
        assertTrue(e.getMessage().contains("already ended"), e.getMessage());
        assertTrue(lock.isLocked(), "the current hold was not freed");
        assertFalse(waiter.isDone(), "nobody was granted the lock");
        assertEquals(1, lock.queueLength());
        assertTrue(stale.isReleased());
        stale.close(); // a second close does nothing
        current.close(); // the real holder unlocks: the waiter gets the lock
        assertTrue(waiter.isDone());
        waiter.join().close();
        assertFalse(lock.isLocked());
    }

    @Test
    void futureFormWithoutOwner() {
        AsyncLock lock = AsyncLock.create();
        Permit p1 = lock.lock().join();
        lock.unlock();
        Permit p2 = lock.lock().join();
        assertStaleCloseChangesNothing(lock, p1, p2);
    }

    @Test
    void blockingFormWithoutOwner() throws InterruptedException {
        AsyncLock lock = AsyncLock.create();
        Permit p1 = lock.lockBlocking();
        lock.unlock();
        Permit p2 = lock.lockBlocking();
        assertStaleCloseChangesNothing(lock, p1, p2);
    }

    @Test
    void timedBlockingFormWithoutOwner() throws InterruptedException {
        AsyncLock lock = AsyncLock.create();
        Permit p1 = lock.lockBlocking(Duration.ofSeconds(1)).orElseThrow();
        lock.unlock();
        Permit p2 = lock.lockBlocking(Duration.ofSeconds(1)).orElseThrow();
        assertStaleCloseChangesNothing(lock, p1, p2);
    }

    @Test
    void sameOwnerReacquiringDoesNotRevivePreviousPermit() throws InterruptedException {
        AsyncLock lock = AsyncLock.create();
        Object owner = "worker-1";
        Permit p1 = lock.lock(owner).join();
        lock.unlock(owner);
        Permit p2 = lock.lockBlocking(owner);
        assertStaleCloseChangesNothing(lock, p1, p2);
        assertFalse(lock.holdsLock(owner));
    }

    @Test
    void aPermitGrantedFromTheQueueIsStaleAfterKotlinUnlocksIt() {
        AsyncLock lock = AsyncLock.create();
        Permit first = lock.lock().join();
        CompletableFuture<Permit> queued = lock.lock(); // granted from the queue, with its own hold
        first.close();
        Permit p1 = queued.join();
        lock.asKotlin().unlock(null); // Kotlin code ends that hold (no owner: no check)
        assertTrue(lock.tryLock()); // the lock is taken again, on the fast path, without owner
        IllegalStateException e = assertThrows(IllegalStateException.class, p1::close);
        assertTrue(e.getMessage().contains("already ended"), e.getMessage());
        assertTrue(lock.isLocked());
        lock.unlock();
        assertFalse(lock.isLocked());
    }

    @Test
    void closingTheCurrentHoldStillUnlocksOnce() {
        AsyncLock lock = AsyncLock.create();
        Permit p = lock.lock().join();
        p.close();
        p.close();
        assertFalse(lock.isLocked());
        assertThrows(IllegalStateException.class, lock::unlock); // not held: the permit did not unlock twice
    }
}
