package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.await;
import static dev.semaphore.async.TestSupport.coroutine;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.ReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import kotlin.Unit;
import org.junit.jupiter.api.Test;

/**
 * AsyncReadWriteLock as a Java caller uses it: futures, blocked threads and Kotlin coroutines of the same
 * lock in one FIFO line; timeouts, withdrawal, upgrade, downgrade, stale permits and misuse.
 */
class AsyncReadWriteLockTest {
    private final AsyncReadWriteLock lock = AsyncReadWriteLock.create();
    private final ReadWriteLock kotlin = lock.asKotlin();

    private void assertState(int readHolds, boolean writeLocked, int queued) {
        assertEquals(readHolds, kotlin.getReadHolds(), "readHolds of " + kotlin);
        assertEquals(writeLocked, kotlin.isWriteLocked(), "isWriteLocked of " + kotlin);
        assertEquals(queued, kotlin.getQueueLength(), "queueLength of " + kotlin);
    }

    /** A thread blocked in readLockBlocking(); the permit it got, once granted, is put in [got]. */
    private Thread blockedReader(AtomicReference<Permit> got) {
        Thread t = new Thread(() -> {
            try {
                got.set(lock.readLockBlocking());
            } catch (InterruptedException e) {
                throw new AssertionError("not expected here", e);
            }
        });
        t.start();
        return t;
    }

    private void awaitQueued(int n) {
        await("queueLength == " + n, () -> kotlin.getQueueLength() == n);
    }

    @Test
    void readersShareAndTheWriterExcludes() {
        Permit r1 = lock.readLock().join();
        Permit r2 = lock.readLock().join();
        assertState(2, false, 0);
        CompletableFuture<Permit> w = lock.writeLock();
        assertFalse(w.isDone());
        r1.close();
        assertFalse(w.isDone(), "one reader still holds the lock");
        r2.close();
        Permit write = w.join();
        assertState(0, true, 0);
        CompletableFuture<Permit> r3 = lock.readLock();
        assertFalse(r3.isDone(), "a reader waits while the write hold is taken");
        write.close();
        r3.join().close();
        assertState(0, false, 0);
    }

    @Test
    void futuresThreadsAndCoroutinesStandInOneFifoLine() throws Exception {
        Permit first = lock.readLock().join();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Unit> coroutineReader = coroutine((scope, cont) -> kotlin.lockRead(cont));
        AtomicReference<Permit> threadPermit = new AtomicReference<>();
        Thread thread = blockedReader(threadPermit);
        awaitQueued(3);
        CompletableFuture<Permit> laterReader = lock.readLock();
        assertState(1, false, 4);
        assertFalse(writer.isDone());
        assertFalse(coroutineReader.isDone(), "the coroutine reader waits behind the queued writer");
        assertFalse(laterReader.isDone(), "the later read future waits behind the queued writer");
        assertEquals(null, threadPermit.get());

        first.close();
        Permit write = writer.join();
        assertState(0, true, 3);
        assertFalse(coroutineReader.isDone());
        assertFalse(laterReader.isDone());

        write.close(); // the three readers behind the writer are granted together
        coroutineReader.join();
        thread.join(20_000);
        assertFalse(thread.isAlive());
        Permit later = laterReader.join();
        assertState(3, false, 0);
        kotlin.unlockRead(); // the coroutine's (anonymous) hold
        threadPermit.get().close();
        later.close();
        assertState(0, false, 0);
    }

    @Test
    void aCancelledWriterLetsTheReadersBehindItIn() throws Exception {
        Permit first = lock.readLock().join();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> reader = lock.readLock();
        AtomicReference<Permit> threadPermit = new AtomicReference<>();
        Thread thread = blockedReader(threadPermit);
        awaitQueued(3);
        CompletableFuture<Unit> coroutineReader = coroutine((scope, cont) -> kotlin.lockRead(cont));
        assertState(1, false, 4);
        assertFalse(reader.isDone());

        assertTrue(writer.cancel(false), "nothing was held: the writer waited");
        reader.join().close();
        coroutineReader.join();
        kotlin.unlockRead();
        thread.join(20_000);
        assertFalse(thread.isAlive());
        threadPermit.get().close();
        assertState(1, false, 0);
        first.close();
        assertState(0, false, 0);
    }

    @Test
    void aTimedOutRequestFailsWithTimeoutExceptionAndHoldsNothing() throws Exception {
        Permit write = lock.writeLock().join();
        CompletableFuture<Permit> reader = lock.readLock(Duration.ofMillis(30));
        CompletableFuture<Permit> upgradable = lock.upgradableReadLock(Duration.ofMillis(30));
        failsWith(TimeoutException.class, reader);
        failsWith(TimeoutException.class, upgradable);
        failsWith(TimeoutException.class, lock.writeLock(Duration.ZERO)); // zero: only tries now
        assertEquals(Optional.empty(), lock.readLockBlocking(Duration.ofMillis(20)));
        assertEquals(Optional.empty(), lock.writeLockBlocking(Duration.ofMillis(20)));
        assertEquals(Optional.empty(), lock.upgradableReadLockBlocking(Duration.ZERO));
        assertState(0, true, 0);
        write.close();
        assertState(0, false, 0);
        lock.writeLockBlocking(Duration.ofSeconds(5)).orElseThrow().close();
        lock.upgradableReadLockBlocking(Duration.ofSeconds(5)).orElseThrow().close();
        assertState(0, false, 0);
    }

    @Test
    void cancellingOrCompletingTheFutureWithdrawsTheRequest() {
        Permit write = lock.writeLock().join();
        CompletableFuture<Permit> reader = lock.readLock();
        CompletableFuture<Permit> writer = lock.writeLock();
        assertState(0, true, 2);
        assertTrue(reader.cancel(false));
        assertTrue(writer.completeExceptionally(new IllegalStateException("changed my mind")));
        assertState(0, true, 0);
        write.close();
        assertState(0, false, 0);
    }

    @Test
    void aGrantRacingACancelIsNeverLost() {
        for (int i = 0; i < 2_000 * TestSupport.SCALE; i++) {
            Permit write = lock.writeLock().join();
            CompletableFuture<Permit> reader = lock.readLock();
            CompletableFuture<Permit> writer = lock.writeLock(Duration.ofNanos(ThreadLocalRandom.current().nextInt(50_000)));
            Thread closer = new Thread(write::close);
            closer.start();
            if (!reader.cancel(false)) reader.join().close(); // granted in the same instant: ours to close
            try {
                closer.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            if (!writer.cancel(false) && !writer.isCompletedExceptionally()) writer.join().close(); // else withdrawn or timed out
            // A grant that lost to the cancel is handed back by the thread that made it, maybe just after.
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            ReadWriteLock k = lock.asKotlin();
            while ((k.getQueueLength() != 0 || k.getReadHolds() != 0 || k.isWriteLocked()) && System.nanoTime() < deadline) Thread.yield();
            assertState(0, false, 0);
        }
    }

    @Test
    void aBlockedThreadIsInterruptibleAndHoldsNothing() throws Exception {
        Permit write = lock.writeLock().join();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                lock.readLockBlocking();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        awaitQueued(1);
        t.interrupt();
        t.join(20_000);
        assertTrue(thrown.get() instanceof InterruptedException, String.valueOf(thrown.get()));
        assertState(0, true, 0);
        write.close();
        assertState(0, false, 0);
    }

    @Test
    void upgradeWaitsForTheOtherReadersAndLetsNoWriterIn() {
        Permit upgradable = lock.upgradableReadLock().join();
        Permit reader = lock.readLock().join(); // a plain reader shares the lock with the upgradable read
        assertState(2, false, 0);
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> secondUpgradable = lock.upgradableReadLock();
        CompletableFuture<Permit> upgrade = lock.upgrade(upgradable);
        CompletableFuture<Permit> laterReader = lock.readLock();
        assertState(2, false, 4);
        assertFalse(upgrade.isDone(), "the upgrade waits for the other reader");
        assertFalse(laterReader.isDone(), "no new reader while the upgrade waits");

        reader.close();
        Permit write = upgrade.join();
        assertState(0, true, 3);
        assertFalse(writer.isDone(), "no writer got in between");
        upgradable.close(); // spent by the upgrade: does nothing
        assertState(0, true, 3);

        write.close(); // the line goes on in order: the writer first
        Permit w = writer.join();
        assertFalse(secondUpgradable.isDone());
        w.close();
        secondUpgradable.join().close();
        laterReader.join().close();
        assertState(0, false, 0);
    }

    @Test
    void anUpgradeThatTimesOutOrIsCancelledKeepsTheUpgradableRead() {
        Permit reader = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLock().join();
        failsWith(TimeoutException.class, lock.upgrade(upgradable, Duration.ofMillis(30)));
        assertState(2, false, 0); // the upgradable read is still held, beside the reader

        CompletableFuture<Permit> upgrade = lock.upgrade(upgradable);
        CompletableFuture<Permit> laterReader = lock.readLock();
        assertFalse(laterReader.isDone(), "held back by the waiting upgrade");
        assertTrue(upgrade.cancel(false));
        laterReader.join().close(); // let in once the upgrade left
        assertState(2, false, 0);
        upgradable.close();
        assertState(1, false, 0);
        reader.close();
        assertState(0, false, 0);

        Permit immediate = lock.upgradableReadLock().join();
        lock.upgrade(immediate, Duration.ZERO).join().close(); // no other reader: granted at once
        assertState(0, false, 0);
    }

    @Test
    void closingTheUpgradablePermitWithdrawsItsPendingUpgrade() {
        Permit reader = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLock().join();
        CompletableFuture<Permit> upgrade = lock.upgrade(upgradable);
        upgradable.close();
        assertTrue(upgrade.isCancelled());
        assertState(1, false, 0);
        reader.close();
        assertState(0, false, 0);
    }

    @Test
    void upgradeOnABlockedThread() throws Exception {
        Permit reader = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLockBlocking();
        AtomicReference<Permit> write = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                write.set(lock.upgradeBlocking(upgradable, Duration.ofSeconds(20)).orElseThrow());
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        awaitQueued(1);
        assertTrue(t.isAlive(), "the upgrade waits for the other reader");
        reader.close();
        t.join(20_000);
        assertFalse(t.isAlive());
        assertState(0, true, 0);
        write.get().close();
        upgradable.close();
        assertState(0, false, 0);

        Permit u = lock.upgradableReadLockBlocking();
        Permit r = lock.readLockBlocking();
        assertEquals(Optional.empty(), lock.upgradeBlocking(u, Duration.ofMillis(20)));
        assertState(2, false, 0); // timed out: the upgradable read is still held
        u.close();
        r.close();
        assertState(0, false, 0);
    }

    private Permit upgradableOfAnotherLock() {
        return AsyncReadWriteLock.create().upgradableReadLock().join();
    }

    @Test
    void downgradeLetsTheReadersFirstInLineIn() {
        Permit write = lock.writeLock().join();
        CompletableFuture<Permit> reader = lock.readLock();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> laterReader = lock.readLock();
        Permit read = lock.downgrade(write);
        Permit r = reader.join();
        assertState(2, false, 2);
        assertFalse(writer.isDone());
        assertFalse(laterReader.isDone(), "FIFO: it stays behind the writer");
        write.close(); // spent by the downgrade: does nothing
        assertState(2, false, 2);
        read.close();
        r.close();
        writer.join().close();
        laterReader.join().close();
        assertState(0, false, 0);
    }

    @Test
    void aStalePermitNeverReleasesAnotherHold() {
        Permit p1 = lock.writeLock().join();
        p1.close();
        Permit p2 = lock.writeLock().join();
        p1.close(); // closed already: does nothing
        assertState(0, true, 0);
        CompletableFuture<Permit> reader = lock.readLock();
        assertFalse(reader.isDone(), "p2's write hold is still in place");
        p2.close();
        Permit r1 = reader.join();
        r1.close();
        Permit r2 = lock.readLock().join();
        r1.close();
        assertState(1, false, 0);
        r2.close();
        assertState(0, false, 0);
    }

    @Test
    void misuseThrowsNamingWhatWasWrongAndChangesNothing() {
        Permit read = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLock().join();
        Permit semaphorePermit = AsyncSemaphore.create(1).acquire().join();
        Permit other = upgradableOfAnotherLock();

        IllegalArgumentException e1 = assertThrows(IllegalArgumentException.class, () -> lock.upgrade(read));
        assertTrue(e1.getMessage().contains("upgrade needs a UPGRADABLE_READ hold of this lock"), e1.getMessage());
        IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class, () -> lock.upgrade(semaphorePermit));
        assertTrue(e2.getMessage().contains("no lock hold"), e2.getMessage());
        assertThrows(IllegalArgumentException.class, () -> lock.upgrade(other));
        IllegalArgumentException e3 = assertThrows(IllegalArgumentException.class, () -> lock.downgrade(upgradable));
        assertTrue(e3.getMessage().contains("downgrade needs a WRITE hold"), e3.getMessage());
        NullPointerException e4 = assertThrows(NullPointerException.class, () -> lock.upgrade(null));
        assertTrue(String.valueOf(e4.getMessage()).contains("upgradable"), e4.getMessage());
        NullPointerException e4u = assertThrows(NullPointerException.class, () -> lock.upgradeBlocking(null));
        assertTrue(String.valueOf(e4u.getMessage()).contains("upgradable"), e4u.getMessage());
        NullPointerException e4b = assertThrows(NullPointerException.class, () -> lock.downgrade(null));
        assertTrue(e4b.getMessage().contains("write"), e4b.getMessage());
        assertThrows(NullPointerException.class, () -> AsyncReadWriteLock.of(null));
        assertState(2, false, 0);

        read.close();
        upgradable.close();
        IllegalStateException e5 = assertThrows(IllegalStateException.class, () -> lock.upgrade(upgradable));
        assertTrue(e5.getMessage().contains("already ended"), e5.getMessage());
        Permit write = lock.writeLock().join();
        Permit downgraded = lock.downgrade(write);
        IllegalStateException e6 = assertThrows(IllegalStateException.class, () -> lock.downgrade(write));
        assertTrue(e6.getMessage().contains("spent by an upgrade or downgrade"), e6.getMessage());
        assertState(1, false, 0);
        downgraded.close();
        assertState(0, false, 0);

        // Kotlin code ending the anonymous write hold: the Java downgrade is refused and changes nothing.
        Permit w = lock.writeLock().join();
        kotlin.unlockWrite();
        IllegalStateException e7 = assertThrows(IllegalStateException.class, () -> lock.downgrade(w));
        assertTrue(e7.getMessage().contains("downgrade() without the write hold"), e7.getMessage());
        assertState(0, false, 0);
        other.close();
        semaphorePermit.close();
    }

    @Test
    void aForeignKotlinLockCannotWait() {
        ReadWriteLock foreign = TestSupport.foreignImplementation(ReadWriteLock.class, "ForeignLock");
        AsyncReadWriteLock view = AsyncReadWriteLock.of(foreign);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, view::readLock);
        assertTrue(e.getMessage().contains("ForeignLock"), e.getMessage());
    }

    @Test
    void manyReadersAndWritersOnThreadsAndFuturesNeverOverlap() throws Exception {
        AtomicReference<String> broken = new AtomicReference<>();
        int[] writers = {0};
        int[] readers = {0};
        Object guard = new Object();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            boolean writes = i % 2 == 0;
            Thread t = new Thread(() -> {
                for (int round = 0; round < 500 * TestSupport.SCALE; round++) {
                    try (Permit p = writes
                            ? (round % 2 == 0 ? lock.writeLockBlocking() : lock.writeLock().join())
                            : (round % 2 == 0 ? lock.readLockBlocking() : lock.readLock().join())) {
                        synchronized (guard) {
                            if (writes) writers[0]++;
                            else readers[0]++;
                            if (writers[0] > 1 || (writers[0] == 1 && readers[0] > 0)) broken.set("overlap");
                        }
                        synchronized (guard) {
                            if (writes) writers[0]--;
                            else readers[0]--;
                        }
                    } catch (InterruptedException e) {
                        broken.set("interrupted");
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) t.join(60_000);
        assertEquals(null, broken.get());
        assertState(0, false, 0);
    }

    /** A reader, and an upgradable read whose upgrade future queued behind it and was failed by close. */
    private static AsyncReadWriteLock closedWhileAnUpgradeFutureWaits(Permit[] holds) {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        holds[0] = lock.readLock().join();
        holds[1] = lock.upgradableReadLock().join();
        CompletableFuture<Permit> upgrade = lock.upgrade(holds[1]); // queued: waits for the reader
        assertEquals(1, lock.queueLength());
        lock.close(null);
        java.util.concurrent.ExecutionException failed = assertThrows(java.util.concurrent.ExecutionException.class, upgrade::get);
        assertTrue(failed.getCause() instanceof dev.semaphore.SemaphoreClosedException, String.valueOf(failed.getCause()));
        assertEquals(2, lock.readHolds(), "the upgradable read is still held, beside the reader");
        return lock;
    }

    /** Regression (found while adapting these tests to API 1.0): the engine's failure of a queued upgrade future did not give the upgradable read back. */
    @Test
    void aQueuedUpgradeFailedByCloseLetsTheUpgradableReadBeEnded() {
        Permit[] holds = new Permit[2];
        AsyncReadWriteLock lock = closedWhileAnUpgradeFutureWaits(holds);
        holds[0].close();
        holds[1].close();
        assertEquals(0, lock.readHolds(), "every hold taken before the close was ended");
        assertFalse(lock.asKotlin().toString().contains("upgrading=true"), lock.asKotlin().toString());
    }

    @Test
    void aQueuedUpgradeFailedByCloseLeavesTheUpgradableReadTheCallersToUpgradeAgain() {
        Permit[] holds = new Permit[2];
        AsyncReadWriteLock lock = closedWhileAnUpgradeFutureWaits(holds);
        CompletableFuture<Permit> again = lock.upgrade(holds[1]); // refused as closed: a failed future
        assertTrue(again.isCompletedExceptionally());
        assertFalse(holds[1].isReleased());
        holds[0].close();
        holds[1].close();
        assertEquals(0, lock.readHolds());
        assertThrows(IllegalStateException.class, () -> lock.asKotlin().unlockRead(), "nothing is left to end");
    }
}
