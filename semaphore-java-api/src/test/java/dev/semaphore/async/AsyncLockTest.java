package dev.semaphore.async;

import static dev.semaphore.async.AsyncSemaphoreTest.assertMessage;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Lock;
import dev.semaphore.LockKt;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** AsyncLock: futures, holds without owners, blocking, timeouts and sharing with the Kotlin Lock (and its owners). */
class AsyncLockTest {

    @Test
    void lockIsHeldUntilThePermitIsClosed() {
        AsyncLock lock = AsyncLock.create();
        Permit held = lock.lock().join();
        assertEquals(1, held.permits());
        assertTrue(lock.isLocked());
        CompletableFuture<Permit> next = lock.lock();
        assertFalse(next.isDone());
        assertFalse(lock.tryLock(), "no barging while someone waits");
        held.close();
        assertTrue(next.isDone());
        next.join().close();
        assertFalse(lock.isLocked());
    }

    @Test
    void javaHoldsHaveNoOwnerWhileKotlinOwnersStillWorkOnTheSameLock() throws Exception {
        // The Java API takes no owner (an Object parameter would accept tryLock(5000)); each Permit is one
        // hold of its own. Kotlin code keeps its owner checks on the same lock, through asKotlin().
        AsyncLock lock = AsyncLock.create();
        Lock kotlin = lock.asKotlin();
        Object alice = "alice";
        assertTrue(kotlin.tryLock(alice));
        assertTrue(kotlin.holdsLock(alice));
        CompletableFuture<Permit> java = lock.lock();
        assertFalse(java.isDone());
        assertEquals(1, lock.queueLength());
        kotlin.unlock(alice);
        assertTrue(java.isDone(), "Kotlin's unlock grants the Java waiter");
        assertTrue(lock.isLocked());
        assertFalse(kotlin.holdsLock(alice), "the Java hold has no owner");
        assertMessage(IllegalStateException.class, "not by alice", () -> kotlin.unlock(alice));
        assertTrue(lock.isLocked(), "a Kotlin unlock with the wrong owner changed nothing");
        java.join().close();
        assertFalse(lock.isLocked());
        try (Permit p = lock.lockBlocking()) {
            assertTrue(lock.isLocked());
            assertEquals(1, p.permits());
            assertFalse(kotlin.tryLock(alice), "a Kotlin owner waits for a Java hold too");
        }
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void misuseThrowsAndChangesNothing() {
        AsyncLock lock = AsyncLock.create();
        Lock kotlin = lock.asKotlin();
        Object me = new Object();
        assertTrue(kotlin.tryLock(me));
        // Reentrancy and wrong-owner checks need owners: Kotlin code has them on the same lock.
        assertMessage(IllegalStateException.class, "not reentrant", () -> kotlin.tryLock(me));
        assertMessage(IllegalStateException.class, "not by", () -> kotlin.unlock("someone else"));
        assertMessage(NullPointerException.class, "timeout", () -> lock.lock((Duration) null));
        assertMessage(NullPointerException.class, "timeout", () -> lock.lockBlocking((Duration) null));
        assertMessage(NullPointerException.class, "timeout", () -> lock.tryLock((Duration) null));
        assertMessage(NullPointerException.class, "action", () -> lock.withLock(null));
        assertMessage(NullPointerException.class, "shared", () -> AsyncLock.of(null));
        assertTrue(kotlin.holdsLock(me));
        assertEquals(0, lock.queueLength());
        lock.unlock(); // Java's unlock ends whoever holds the lock: it has no owner to check
        assertFalse(kotlin.holdsLock(me));
        assertMessage(IllegalStateException.class, "not locked", lock::unlock);
        assertFalse(lock.isLocked());
    }

    @Test
    void timedLockFailsWithTimeoutExceptionAndLeavesTheLineClean() throws Exception {
        AsyncLock lock = AsyncLock.of(LockKt.Lock(true)); // created held, without owner
        assertTrue(lock.isLocked());
        failsWith(TimeoutException.class, lock.lock(Duration.ofMillis(10)));
        failsWith(TimeoutException.class, lock.lock(Duration.ZERO));
        assertFalse(lock.tryLock(Duration.ofMillis(5)));
        assertEquals(Optional.empty(), lock.lockBlocking(Duration.ofMillis(-1)));
        assertEquals(Optional.empty(), lock.lockBlocking(Duration.ofMillis(5)));
        assertEquals(0, lock.queueLength());
        lock.unlock();
        assertFalse(lock.isLocked());
        assertTrue(lock.tryLock(Duration.ofSeconds(1)));
        assertTrue(lock.isLocked());
        lock.unlock();
        assertFalse(lock.isLocked());
    }

    @Test
    void aCancelledRequestPassesTheLockOn() {
        AsyncLock lock = AsyncLock.create();
        Permit held = lock.lock().join();
        CompletableFuture<Permit> cancelled = lock.lock();
        CompletableFuture<Permit> next = lock.lock();
        assertTrue(cancelled.cancel(true));
        assertEquals(1, lock.queueLength());
        held.close();
        assertTrue(next.isDone(), "the lock went to the request behind the cancelled one");
        assertTrue(lock.isLocked());
        next.join().close(); // would throw if the lock's current hold were not next's
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void kotlinAndJavaShareOneLock() {
        Lock kotlin = LockKt.Lock(false);
        AsyncLock lock = AsyncLock.of(kotlin);
        assertSame(kotlin, lock.asKotlin());
        assertTrue(kotlin.tryLock("kotlin"));
        CompletableFuture<Permit> java = lock.lock();
        assertEquals(1, kotlin.getQueueLength());
        kotlin.unlock("kotlin");
        assertTrue(java.isDone());
        assertTrue(kotlin.isLocked());
        assertFalse(kotlin.holdsLock("kotlin"));
        java.join().close();
        assertFalse(kotlin.isLocked());
        kotlin.close(null);
        assertTrue(lock.isClosed(), "one lock: closed from Kotlin, closed for Java");
    }

    @Test
    void waitingOnALockNotBackedByTheEngineIsRejectedByName() {
        Lock foreign = TestSupport.foreignImplementation(Lock.class, "ZookeeperLock");
        AsyncLock view = AsyncLock.of(foreign);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, view::lock);
        assertTrue(e.getMessage().contains("ZookeeperLock"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, view::lockBlocking);
        assertTrue(e.getMessage().contains("ZookeeperLock"), e.getMessage());
    }
}
