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

/** AsyncLock: futures, owners, blocking, timeouts and sharing with the Kotlin Lock. */
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
    void ownersAreRecordedAndVisibleToKotlin() throws Exception {
        AsyncLock lock = AsyncLock.create();
        Object alice = "alice";
        Object bob = "bob";
        Permit a = lock.lock(alice).join();
        assertTrue(lock.holdsLock(alice));
        assertTrue(lock.asKotlin().holdsLock(alice));
        CompletableFuture<Permit> b = lock.lock(bob);
        a.close();
        assertTrue(b.isDone());
        assertTrue(lock.holdsLock(bob), "the holder is recorded when a queued waiter is granted");
        assertFalse(lock.holdsLock(alice));
        b.join().close();
        assertFalse(lock.holdsLock(bob));
        try (Permit p = lock.lockBlocking(alice)) {
            assertTrue(lock.holdsLock(alice));
            assertEquals(1, p.permits());
        }
        assertFalse(lock.isLocked());
    }

    @Test
    void misuseThrowsAndChangesNothing() {
        AsyncLock lock = AsyncLock.create();
        Object me = new Object();
        assertTrue(lock.tryLock(me));
        assertMessage(IllegalStateException.class, "not reentrant", () -> lock.lock(me));
        assertMessage(IllegalStateException.class, "not reentrant", () -> lock.tryLock(me));
        assertMessage(IllegalStateException.class, "not reentrant", () -> lock.lockBlocking(me));
        assertMessage(IllegalStateException.class, "not by", () -> lock.unlock("someone else"));
        assertMessage(NullPointerException.class, "owner", () -> lock.lock((Object) null, Duration.ZERO));
        assertMessage(NullPointerException.class, "timeout", () -> lock.lock((Duration) null));
        assertMessage(NullPointerException.class, "action", () -> lock.withLock(null));
        assertTrue(lock.holdsLock(me));
        assertEquals(0, lock.queueLength());
        lock.unlock(me);
        assertMessage(IllegalStateException.class, "not locked", lock::unlock);
        assertFalse(lock.isLocked());
    }

    @Test
    void timedLockFailsWithTimeoutExceptionAndLeavesTheLineClean() throws Exception {
        AsyncLock lock = AsyncLock.create(true);
        assertTrue(lock.isLocked());
        failsWith(TimeoutException.class, lock.lock(Duration.ofMillis(10)));
        failsWith(TimeoutException.class, lock.lock("me", Duration.ZERO));
        assertFalse(lock.tryLock(Duration.ofMillis(5)));
        assertEquals(Optional.empty(), lock.lockBlocking("me", Duration.ofMillis(-1)));
        assertEquals(0, lock.queueLength());
        lock.unlock();
        assertFalse(lock.isLocked());
        assertTrue(lock.tryLock("me", Duration.ofSeconds(1)));
        assertTrue(lock.holdsLock("me"));
        lock.unlock("me");
    }

    @Test
    void aCancelledRequestPassesTheLockOn() {
        AsyncLock lock = AsyncLock.create();
        Permit held = lock.lock().join();
        CompletableFuture<Permit> cancelled = lock.lock("x");
        CompletableFuture<Permit> next = lock.lock("y");
        assertTrue(cancelled.cancel(true));
        held.close();
        assertTrue(lock.holdsLock("y"));
        next.join().close();
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void kotlinAndJavaShareOneLock() {
        Lock kotlin = LockKt.Lock(false);
        AsyncLock lock = AsyncLock.of(kotlin);
        assertSame(kotlin, lock.asKotlin());
        assertTrue(kotlin.tryLock("kotlin"));
        CompletableFuture<Permit> java = lock.lock("java");
        assertEquals(1, kotlin.getQueueLength());
        kotlin.unlock("kotlin");
        assertTrue(kotlin.holdsLock("java"));
        java.join().close();
        assertFalse(kotlin.isLocked());
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
