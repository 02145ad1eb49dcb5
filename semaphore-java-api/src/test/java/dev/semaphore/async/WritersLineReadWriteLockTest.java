package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.await;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.ReadWriteLock;
import dev.semaphore.ReadWritePolicy;
import dev.semaphore.SemaphoreClosedException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * AsyncReadWriteLock.create(ReadWritePolicy.WRITERS_LINE) as a Java caller uses it: writers' futures and
 * blocked threads in the writers' line, one writer at a time in the lock's line, withdrawal, timeouts, the
 * try form, close.
 */
class WritersLineReadWriteLockTest {
    private final AsyncReadWriteLock lock = AsyncReadWriteLock.create(ReadWritePolicy.WRITERS_LINE);
    private final ReadWriteLock kotlin = lock.asKotlin();

    @Test
    void writersWaitInTheirOwnLineAndAreServedInOrder() throws Exception {
        assertEquals(ReadWritePolicy.WRITERS_LINE, lock.policy());
        Permit read = lock.readLock().join();
        CompletableFuture<Permit> w1 = lock.writeLock();
        CompletableFuture<Permit> w2 = lock.writeLock();
        CompletableFuture<Permit> w3 = lock.writeLock();
        assertEquals(3, kotlin.getQueueLength());
        assertEquals(3, kotlin.snapshot().queuedRequests());
        assertFalse(lock.tryWriteLock(), "a writer waits: the try does not barge");
        assertTrue(w2.cancel(false));
        assertEquals(2, kotlin.getQueueLength());
        read.close();
        Permit first = w1.get();
        assertFalse(w3.isDone());
        first.close();
        w3.get().close();
        assertEquals(0, kotlin.getQueueLength());
        assertTrue(lock.tryWriteLock());
        lock.unlockWrite();
    }

    @Test
    void aBlockedWriterTimesOutInTheWritersLineHoldingNothing() throws Exception {
        Permit read = lock.readLock().join();
        CompletableFuture<Permit> standing = lock.writeLock();
        assertEquals(Optional.empty(), lock.writeLockBlocking(Duration.ofMillis(20)));
        assertFalse(lock.tryWriteLock(Duration.ofMillis(20)));
        assertEquals(1, kotlin.getQueueLength());
        assertEquals(2, kotlin.snapshot().timedOut());
        AtomicReference<Permit> got = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                got.set(lock.writeLockBlocking());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        writer.start();
        await("the thread waits in the writers' line", () -> kotlin.getQueueLength() == 2);
        read.close();
        standing.get().close();
        writer.join(10_000);
        assertFalse(writer.isAlive());
        got.get().close();
        assertFalse(kotlin.isWriteLocked());
        assertEquals(0, kotlin.getQueueLength());
    }

    @Test
    void closeFailsTheWritersInBothLines() {
        Permit read = lock.readLock().join();
        CompletableFuture<Permit> standing = lock.writeLock();
        CompletableFuture<Permit> inLine = lock.writeLock();
        lock.close(null);
        failsWith(SemaphoreClosedException.class, standing);
        failsWith(SemaphoreClosedException.class, inLine);
        failsWith(SemaphoreClosedException.class, lock.writeLock());
        read.close();
        assertEquals(0, kotlin.getQueueLength());
    }
}
