package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.await;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.ReadWriteLock;
import dev.semaphore.ReadWritePolicy;
import dev.semaphore.SemaphoreClosedException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * AsyncReadWriteLock.create(ReadWritePolicy.PHASE_FAIR) as a Java caller uses it: futures and blocked
 * threads in the readers' and the writers' lines, batches, a newcomer reader held back by a waiting writer,
 * the upgrade, withdrawal in the middle of a batch, close.
 */
class PhaseFairReadWriteLockTest {
    private final AsyncReadWriteLock lock = AsyncReadWriteLock.create(ReadWritePolicy.PHASE_FAIR);
    private final ReadWriteLock kotlin = lock.asKotlin();

    private void assertState(int readHolds, boolean writeLocked, int queued) {
        assertEquals(readHolds, kotlin.getReadHolds(), "readHolds of " + kotlin);
        assertEquals(writeLocked, kotlin.isWriteLocked(), "isWriteLocked of " + kotlin);
        assertEquals(queued, kotlin.getQueueLength(), "queueLength of " + kotlin);
    }

    @Test
    void createdWithThePolicyTheDefaultStaysFifo() {
        assertEquals(ReadWritePolicy.PHASE_FAIR, lock.policy());
        assertEquals(ReadWritePolicy.FIFO, AsyncReadWriteLock.create().policy());
        assertEquals(ReadWritePolicy.FIFO, AsyncReadWriteLock.create(Diagnostics.named("x")).policy());
        AsyncReadWriteLock named = AsyncReadWriteLock.create(ReadWritePolicy.PHASE_FAIR, Diagnostics.named("cache"));
        assertEquals(ReadWritePolicy.PHASE_FAIR, named.policy());
        assertEquals("cache", named.asKotlin().getName());
        assertEquals(ReadWritePolicy.PHASE_FAIR, AsyncReadWriteLock.of(kotlin).policy());
        NullPointerException e = assertThrows(NullPointerException.class, () -> AsyncReadWriteLock.create((ReadWritePolicy) null));
        assertEquals("policy", e.getMessage());
    }

    @Test
    void whenAWriteEndsEveryWaitingReaderGetsInTogetherThenTheNextWriter() throws Exception {
        Permit write = lock.writeLock().join();
        CompletableFuture<Permit> r1 = lock.readLock();
        CompletableFuture<Permit> w2 = lock.writeLock();
        CompletableFuture<Permit> r2 = lock.readLock(); // after w2, but during the write: same batch
        AtomicReference<Permit> threadRead = new AtomicReference<>();
        Thread blocked = new Thread(() -> {
            try {
                threadRead.set(lock.readLockBlocking());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        blocked.start();
        await("4 queued", () -> kotlin.getQueueLength() == 4);
        write.close();
        blocked.join(20_000);
        assertTrue(r1.isDone() && r2.isDone() && threadRead.get() != null, "the whole batch is in");
        assertFalse(w2.isDone());
        assertState(3, false, 1);
        CompletableFuture<Permit> late = lock.readLock(); // a writer waits: the next read phase
        assertFalse(late.isDone());
        assertFalse(lock.tryReadLock(), "no barging into a read phase that a waiting writer closed");
        r1.join().close();
        r2.join().close();
        threadRead.get().close();
        Permit second = w2.join();
        assertFalse(late.isDone());
        second.close();
        late.join().close();
        assertState(0, false, 0);
    }

    @Test
    void aWithdrawnReaderIsNotPartOfTheBatchAndATimedOutOneHoldsNothing() throws Exception {
        Permit write = lock.writeLockBlocking();
        CompletableFuture<Permit> r1 = lock.readLock();
        CompletableFuture<Permit> withdrawn = lock.readLock();
        CompletableFuture<Permit> timed = lock.readLock(Duration.ofMillis(20));
        CompletableFuture<Permit> w2 = lock.writeLock();
        assertTrue(withdrawn.cancel(false));
        failsWith(java.util.concurrent.TimeoutException.class, timed);
        assertState(0, true, 2);
        write.close();
        assertState(1, false, 1);
        Optional<Permit> none = lock.readLockBlocking(Duration.ofMillis(10)); // w2 waits: this reader waits for its turn
        assertTrue(none.isEmpty());
        r1.join().close();
        w2.join().close();
        assertState(0, false, 0);
    }

    @Test
    void theUpgradeIsServedFirstAndItsWriteEndsWithTheWaitingReadersBeforeAnEarlierWriter() throws Exception {
        Permit upgradable = lock.upgradableReadLockBlocking();
        Permit other = lock.readLockBlocking();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> upgrade = lock.upgrade(upgradable);
        CompletableFuture<Permit> reader = lock.readLock();
        assertFalse(upgrade.isDone());
        other.close();
        Permit write = upgrade.join();
        assertState(0, true, 2);
        Permit read = lock.downgrade(write); // the write phase ends: the waiting reader joins the downgraded read
        assertTrue(reader.isDone());
        assertFalse(writer.isDone());
        assertState(2, false, 1);
        read.close();
        reader.join().close();
        writer.join().close();
        assertState(0, false, 0);
    }

    @Test
    void closeFailsBothLinesAndTheHoldsMayStillEnd() {
        Permit read = lock.readLock().join();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> reader = lock.readLock();
        lock.close(new IllegalStateException("shutdown"));
        failsWith(SemaphoreClosedException.class, writer);
        failsWith(SemaphoreClosedException.class, reader);
        assertThrows(SemaphoreClosedException.class, lock::tryReadLock);
        read.close();
        assertState(0, false, 0);
    }
}
