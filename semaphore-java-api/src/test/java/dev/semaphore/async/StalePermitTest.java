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
    void theSameCallerReacquiringDoesNotRevivePreviousPermit() throws InterruptedException {
        // The Java API has no owners any more: a caller's second hold is a new hold, and its first
        // Permit stays stale, whatever form took each (here a future, then a blocking call).
        AsyncLock lock = AsyncLock.create();
        Permit p1 = lock.lock().join();
        lock.unlock();
        Permit p2 = lock.lockBlocking();
        assertStaleCloseChangesNothing(lock, p1, p2);
    }

    @Test
    void aStalePermitNeverUnlocksAKotlinOwnersHold() {
        // What owners gave the old Java API, Kotlin code still has on the same lock; a stale Java Permit
        // must not end a Kotlin owner's hold either.
        AsyncLock lock = AsyncLock.create();
        dev.semaphore.Lock kotlin = lock.asKotlin();
        Object owner = "worker-1";
        Permit p1 = lock.lock().join();
        lock.unlock();
        assertTrue(kotlin.tryLock(owner));
        CompletableFuture<Permit> waiter = lock.lock();
        IllegalStateException e = assertThrows(IllegalStateException.class, p1::close);
        assertTrue(e.getMessage().contains("already ended"), e.getMessage());
        assertTrue(e.getMessage().contains("worker-1"), "names the current holder: " + e.getMessage());
        assertTrue(kotlin.holdsLock(owner), "the Kotlin owner's hold was not freed");
        assertFalse(waiter.isDone());
        kotlin.unlock(owner);
        assertTrue(waiter.isDone());
        waiter.join().close();
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
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
