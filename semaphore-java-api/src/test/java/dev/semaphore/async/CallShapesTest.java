package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.assertState;
import static dev.semaphore.async.TestSupport.await;
import static dev.semaphore.async.TestSupport.failsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.SemaphoreClosedException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Each call shape of the Java API 1.0 (package-info, "One pattern"), written exactly as a user writes it,
 * and what it does. The shapes that must not compile are in {@link CompileShapesTest}.
 *
 * <p>Timing: a timed call that runs out is only checked to have waited <em>at least</em> its timeout
 * (these machines are shared and noisy); everything else waits on conditions, with generous bounds
 * that only turn a hang into a failure.
 */
class CallShapesTest {

    /** Runs {@code call} and returns how long it took, in nanoseconds; its result goes to {@code result}. */
    private static <T> long timed(AtomicReference<T> result, Outcome.Body call) throws Exception {
        long start = System.nanoTime();
        @SuppressWarnings("unchecked")
        T value = (T) call.get();
        long elapsed = System.nanoTime() - start;
        result.set(value);
        return elapsed;
    }

    private static void assertWaitedAtLeast(Duration timeout, long elapsedNanos) {
        assertTrue(elapsedNanos >= timeout.toNanos(),
                "returned after " + Duration.ofNanos(elapsedNanos) + ", before its timeout of " + timeout);
    }

    // ---- AsyncPrioritySemaphore: a lone int is a permit count, a priority is chosen with atPriority ----

    @Test
    void prioritySemaphoreAcquireTwoTakesTwoPermits() {
        AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.create(2);
        CompletableFuture<Permit> two = pool.acquire(2);
        assertTrue(two.isDone(), "free: granted at once");
        Permit permit = two.join();
        assertEquals(2, permit.permits(), "acquire(2) is 2 permits, not priority 2");
        assertEquals(0, pool.availablePermits());
        assertFalse(pool.tryAcquire(), "both permits are held");
        assertEquals(0, pool.queueLength());
        permit.close();
        assertState(pool, 2, 0);
    }

    @Test
    void atPriorityTenAcquireTwoIsServedBeforeAnEarlierPriorityZeroWaiterAndHoldsTwo() {
        AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.create(2);
        Permit held = pool.acquire(2).join();
        CompletableFuture<Permit> low = pool.atPriority(0).acquire();
        CompletableFuture<Permit> high = pool.atPriority(10).acquire(2);
        assertEquals(1, pool.queueLength(0));
        assertEquals(1, pool.queueLength(10));
        assertState(pool, 0, 2);
        held.close();
        assertTrue(high.isDone(), "priority 10 is served first, though it came later");
        assertFalse(low.isDone(), "the earlier priority-0 waiter still waits");
        Permit two = high.join();
        assertEquals(2, two.permits());
        assertEquals(0, pool.availablePermits(), "it holds both permits");
        two.close();
        assertTrue(low.isDone());
        assertEquals(1, low.join().permits());
        low.join().close();
        assertState(pool, 2, 0);
    }

    // ---- timed try forms block, as java.util.concurrent's do ----

    @Test
    void tryAcquireTwoWithATimeoutBlocksAtLeastThatLongAndHoldsNothing() throws Exception {
        for (AsyncPermitPool pool : List.<AsyncPermitPool>of(
                AsyncSemaphore.create(2), AsyncPrioritySemaphore.create(2), AsyncPrioritySemaphore.create(2).atPriority(7))) {
            Permit one = pool.acquire().join(); // one of two free: a request for 2 cannot be granted
            AtomicReference<Boolean> got = new AtomicReference<>();
            Duration timeout = Duration.ofMillis(200);
            long elapsed = timed(got, () -> pool.tryAcquire(2, timeout));
            assertEquals(false, got.get(), pool + ": tryAcquire(2, 200 ms) gave up");
            assertWaitedAtLeast(timeout, elapsed);
            assertState(pool, 1, 0);
            elapsed = timed(got, () -> pool.tryAcquire(Duration.ofMillis(50)));
            assertEquals(true, got.get(), pool + ": one permit is free: tryAcquire(Duration) takes it at once");
            assertState(pool, 0, 0);
            elapsed = timed(got, () -> pool.tryAcquire(Duration.ofMillis(50)));
            assertEquals(false, got.get());
            assertWaitedAtLeast(Duration.ofMillis(50), elapsed);
            pool.release();
            one.close();
            assertState(pool, 2, 0);
        }
    }

    @Test
    void aTimedTryThatIsGrantedInTimeReturnsTrueHoldingThePermits() throws Exception {
        AsyncSemaphore pool = AsyncSemaphore.create(2);
        Permit held = pool.acquire(2).join();
        Outcome waiter = new Outcome(() -> pool.tryAcquire(2, Duration.ofMinutes(1)));
        await("the timed try is queued", () -> pool.queueLength() == 1);
        held.close();
        assertEquals(Boolean.TRUE, waiter.join());
        assertState(pool, 0, 0);
        pool.release(2); // the try forms give back with release(n)
        assertState(pool, 2, 0);
    }

    @Test
    void acquireBlockingWithATimeoutReturnsEmptyOnTimeout() throws Exception {
        AsyncSemaphore semaphore = AsyncSemaphore.create(1);
        AsyncPrioritySemaphore priority = AsyncPrioritySemaphore.create(3);
        Permit a = semaphore.acquire().join();
        Permit b = priority.acquire(3).join();
        AtomicReference<Optional<Permit>> got = new AtomicReference<>();
        Duration timeout = Duration.ofMillis(100);

        long elapsed = timed(got, () -> semaphore.acquireBlocking(timeout));
        assertEquals(Optional.empty(), got.get());
        assertWaitedAtLeast(timeout, elapsed);
        elapsed = timed(got, () -> priority.atPriority(5).acquireBlocking(2, timeout));
        assertEquals(Optional.empty(), got.get());
        assertWaitedAtLeast(timeout, elapsed);
        assertState(semaphore, 0, 0);
        assertState(priority, 0, 0);

        a.close();
        b.close();
        Permit one = semaphore.acquireBlocking(Duration.ofSeconds(5)).orElseThrow();
        assertEquals(1, one.permits());
        Permit two = priority.atPriority(5).acquireBlocking(2, Duration.ofSeconds(5)).orElseThrow();
        assertEquals(2, two.permits());
        assertEquals(1, priority.availablePermits());
        one.close();
        two.close();
        assertState(semaphore, 1, 0);
        assertState(priority, 3, 0);
    }

    @Test
    void theFutureAndBlockingShapesOfAPermitPool() throws Exception {
        AsyncSemaphore pool = AsyncSemaphore.create(3);
        Permit a = pool.acquire().join();
        Permit b = pool.acquire(2, Duration.ofSeconds(5)).join();
        assertEquals(1, a.permits());
        assertEquals(2, b.permits());
        failsWith(java.util.concurrent.TimeoutException.class, pool.acquire(Duration.ofMillis(10)));
        assertState(pool, 0, 0);
        a.close();
        b.close();
        try (Permit c = pool.acquireBlocking(); Permit d = pool.acquireBlocking(2)) {
            assertEquals(1, c.permits());
            assertEquals(2, d.permits());
            assertState(pool, 0, 0);
        }
        assertEquals(5, pool.withPermit(2, () -> {
            assertEquals(1, pool.availablePermits());
            return CompletableFuture.completedFuture(5);
        }).join());
        assertState(pool, 3, 0);
    }

    // ---- the java.util.concurrent try forms of every primitive ----

    @Test
    void theTryFormsOfTheSemaphores() throws Exception {
        AsyncSemaphore semaphore = AsyncSemaphore.create(3);
        assertTrue(semaphore.tryAcquire());
        assertTrue(semaphore.tryAcquire(2));
        assertFalse(semaphore.tryAcquire(), "never waits");
        assertFalse(semaphore.tryAcquire(Duration.ZERO), "a zero timeout only tries now");
        semaphore.release(2);
        assertTrue(semaphore.tryAcquire(2, Duration.ofSeconds(5)));
        assertState(semaphore, 0, 0);
        semaphore.release();
        semaphore.release(2);
        assertState(semaphore, 3, 0);

        AsyncPrioritySemaphore priority = AsyncPrioritySemaphore.create(3);
        assertTrue(priority.atPriority(4).tryAcquire(2));
        assertTrue(priority.tryAcquire(Duration.ofSeconds(5)));
        assertFalse(priority.atPriority(99).tryAcquire(), "no permit left, whatever the priority");
        priority.atPriority(4).release(2); // a view gives back to the one semaphore
        priority.release();
        assertState(priority, 3, 0);
    }

    @Test
    void theTryFormsOfAsyncLock() throws Exception {
        AsyncLock lock = AsyncLock.create();
        assertTrue(lock.tryLock());
        assertTrue(lock.isLocked());
        assertFalse(lock.tryLock(), "never waits, and Java holds have no owner to be reentrant with");
        AtomicReference<Boolean> got = new AtomicReference<>();
        Duration timeout = Duration.ofMillis(150);
        long elapsed = timed(got, () -> lock.tryLock(timeout));
        assertEquals(false, got.get(), "tryLock(Duration) blocked and gave up");
        assertWaitedAtLeast(timeout, elapsed);
        assertEquals(0, lock.queueLength());

        Outcome waiter = new Outcome(() -> lock.tryLock(Duration.ofMinutes(1)));
        await("the timed tryLock is queued", () -> lock.queueLength() == 1);
        lock.unlock();
        assertEquals(Boolean.TRUE, waiter.join(), "granted while it waited");
        assertTrue(lock.isLocked());
        lock.unlock();
        assertFalse(lock.isLocked());
        assertTrue(lock.tryLock(Duration.ZERO), "free: a zero timeout takes it now");
        lock.unlock();
        assertFalse(lock.isLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void theTryFormsOfAsyncReadWriteLock() throws Exception {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        assertTrue(lock.tryReadLock());
        assertTrue(lock.tryReadLock(Duration.ofSeconds(5)));
        assertTrue(lock.tryUpgradableReadLock(), "an upgradable read shares the lock with readers");
        assertEquals(3, lock.readHolds());
        assertFalse(lock.tryWriteLock());
        assertFalse(lock.tryUpgradableReadLock(), "one upgradable read at a time");
        AtomicReference<Boolean> got = new AtomicReference<>();
        long elapsed = timed(got, () -> lock.tryWriteLock(Duration.ofMillis(100)));
        assertEquals(false, got.get());
        assertWaitedAtLeast(Duration.ofMillis(100), elapsed);
        elapsed = timed(got, () -> lock.tryUpgradableReadLock(Duration.ofMillis(100)));
        assertEquals(false, got.get());
        assertWaitedAtLeast(Duration.ofMillis(100), elapsed);
        assertEquals(0, lock.queueLength());
        lock.unlockRead();
        lock.unlockRead();
        lock.unlockUpgradableRead();
        assertEquals(0, lock.readHolds());

        assertTrue(lock.tryWriteLock());
        assertTrue(lock.isWriteLocked());
        assertFalse(lock.tryReadLock());
        elapsed = timed(got, () -> lock.tryReadLock(Duration.ofMillis(100)));
        assertEquals(false, got.get(), "tryReadLock(Duration) blocked and gave up");
        assertWaitedAtLeast(Duration.ofMillis(100), elapsed);
        Outcome reader = new Outcome(() -> lock.tryReadLock(Duration.ofMinutes(1)));
        await("the timed reader is queued", () -> lock.queueLength() == 1);
        lock.unlockWrite();
        assertEquals(Boolean.TRUE, reader.join());
        assertEquals(1, lock.readHolds());
        lock.unlockRead();
        assertTrue(lock.tryWriteLock(Duration.ofSeconds(5)));
        lock.unlockWrite();
        assertTrue(lock.tryUpgradableReadLock(Duration.ofSeconds(5)));
        lock.unlockUpgradableRead();
        assertEquals(0, lock.readHolds());
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.queueLength());
        assertThrows(IllegalStateException.class, lock::unlockRead, "no read hold to end");
        assertThrows(IllegalStateException.class, lock::unlockWrite, "no write hold to end");
        assertThrows(IllegalStateException.class, lock::unlockUpgradableRead, "no upgradable read to end");
    }

    // ---- AsyncReadWriteLock: with*, upgradeBlocking, queries, close ----

    @Test
    void withReadLockSharesTheLockAndReleasesHoweverTheActionEnds() {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> second = new CompletableFuture<>();
        CompletableFuture<String> a = lock.withReadLock(() -> first);
        CompletableFuture<String> b = lock.withReadLock(() -> second);
        assertEquals(2, lock.readHolds(), "two readers at once");
        CompletableFuture<Permit> writer = lock.writeLock();
        assertFalse(writer.isDone(), "a writer waits for the readers' stages");
        first.complete("one");
        assertEquals("one", a.join());
        assertEquals(1, lock.readHolds());
        assertFalse(writer.isDone());
        second.complete("two");
        assertEquals("two", b.join());
        assertTrue(writer.isDone(), "both read holds ended when the stages completed");
        writer.join().close();

        IOException io = new IOException("disk");
        assertSame(io, failsWith(IOException.class, lock.withReadLock(() -> CompletableFuture.failedFuture(io))));
        assertEquals(0, lock.readHolds(), "released when the stage failed");
        ArithmeticException boom = new ArithmeticException("/ by zero");
        assertSame(boom, failsWith(ArithmeticException.class, lock.<Integer>withReadLock(() -> {
            throw boom;
        })));
        assertEquals(0, lock.readHolds(), "released when the action threw");
        failsWith(NullPointerException.class, lock.withReadLock(() -> (CompletionStage<Integer>) null));
        assertEquals(0, lock.readHolds(), "released when the action returned null");
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void withWriteLockExcludesEveryoneAndReleasesHoweverTheActionEnds() {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        Permit reader = lock.readLock().join();
        CompletableFuture<String> stage = new CompletableFuture<>();
        List<String> ran = new ArrayList<>();
        CompletableFuture<String> write = lock.withWriteLock(() -> {
            ran.add("write");
            return stage;
        });
        assertEquals(List.of(), ran, "the action waits for the reader");
        assertEquals(1, lock.queueLength());
        reader.close();
        assertEquals(List.of("write"), ran);
        assertTrue(lock.isWriteLocked());
        assertFalse(lock.tryReadLock(), "readers are excluded while the write stage runs");
        CompletableFuture<Permit> laterReader = lock.readLock();
        assertFalse(laterReader.isDone());
        stage.complete("written");
        assertEquals("written", write.join());
        assertFalse(lock.isWriteLocked());
        laterReader.join().close();

        IOException io = new IOException("disk");
        assertSame(io, failsWith(IOException.class, lock.withWriteLock(() -> CompletableFuture.failedFuture(io))));
        assertFalse(lock.isWriteLocked(), "released when the stage failed");
        IllegalStateException boom = new IllegalStateException("bad");
        assertSame(boom, failsWith(IllegalStateException.class, lock.<Integer>withWriteLock(() -> {
            throw boom;
        })));
        assertFalse(lock.isWriteLocked(), "released when the action threw");
        failsWith(NullPointerException.class, lock.withWriteLock(() -> (CompletionStage<Integer>) null));
        assertFalse(lock.isWriteLocked(), "released when the action returned null");
        assertEquals(0, lock.readHolds());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void upgradeBlockingWithoutATimeoutWaitsForTheOtherReaders() throws Exception {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        try (Permit upgradable = lock.upgradableReadLockBlocking()) {
            try (Permit write = lock.upgradeBlocking(upgradable)) { // no other reader: at once
                assertTrue(lock.isWriteLocked());
                assertEquals(0, lock.readHolds());
            }
            assertFalse(lock.isWriteLocked());
            upgradable.close(); // spent by the upgrade: does nothing
            assertEquals(0, lock.readHolds());
        }

        Permit reader = lock.readLockBlocking();
        Permit upgradable = lock.upgradableReadLockBlocking();
        Outcome upgrade = new Outcome(() -> lock.upgradeBlocking(upgradable));
        await("the upgrade waits in line", () -> lock.queueLength() == 1);
        CompletableFuture<Permit> writer = lock.writeLock();
        assertEquals(2, lock.readHolds());
        assertFalse(lock.isWriteLocked());
        reader.close();
        Permit write = assertInstanceOf(Permit.class, upgrade.join());
        assertTrue(lock.isWriteLocked());
        assertFalse(writer.isDone(), "no writer got in between");
        upgradable.close(); // spent: does nothing
        assertTrue(lock.isWriteLocked());
        write.close();
        writer.join().close();

        // Interrupted while it waits: the upgradable read is still held.
        Permit other = lock.readLockBlocking();
        Permit u = lock.upgradableReadLockBlocking();
        Outcome interrupted = new Outcome(() -> lock.upgradeBlocking(u));
        await("the upgrade waits in line", () -> lock.queueLength() == 1);
        interrupted.thread.interrupt();
        assertInstanceOf(InterruptedException.class, interrupted.join());
        assertEquals(0, lock.queueLength());
        assertEquals(2, lock.readHolds(), "the upgradable read is still held, beside the reader");
        assertFalse(u.isReleased());
        u.close();
        other.close();
        assertEquals(0, lock.readHolds());
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void theQueriesOfAsyncReadWriteLock() {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        assertEquals(0, lock.readHolds());
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.queueLength());
        assertFalse(lock.isClosed());
        Permit read = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLock().join();
        assertEquals(2, lock.readHolds(), "the upgradable read counts as one");
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> reader = lock.readLock();
        assertEquals(2, lock.queueLength(), "the writer and the reader behind it");
        read.close();
        upgradable.close();
        Permit write = writer.join();
        assertTrue(lock.isWriteLocked());
        assertEquals(0, lock.readHolds());
        assertEquals(1, lock.queueLength());
        Permit downgraded = lock.downgrade(write);
        assertFalse(lock.isWriteLocked());
        assertEquals(2, lock.readHolds(), "the downgraded hold and the reader let in");
        reader.join().close();
        downgraded.close();
        assertEquals(0, lock.readHolds());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void closingAReadWriteLockFailsQueuedFuturesAndLaterCallsWhileHoldsCanStillBeEnded() throws Exception {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        Permit read = lock.readLock().join();
        Permit upgradable = lock.upgradableReadLock().join();
        // A blocked upgrade (a queued upgrade *future* failed by close is KnownIssuesCheck's first issue).
        Outcome upgrade = new Outcome(() -> lock.upgradeBlocking(upgradable)); // waits for the reader
        await("the upgrade waits", () -> lock.queueLength() == 1);
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> reader = lock.readLock(Duration.ofMinutes(1));
        Outcome blocked = new Outcome(lock::writeLockBlocking);
        await("four waiters", () -> lock.queueLength() == 4);
        IllegalStateException cause = new IllegalStateException("shutting down");
        lock.close(cause);
        assertTrue(lock.isClosed());

        for (CompletableFuture<Permit> f : List.of(writer, reader)) {
            assertSame(cause, failsWith(SemaphoreClosedException.class, f).getCause());
        }
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, upgrade.join()).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, blocked.join()).getCause());
        assertEquals(0, lock.queueLength());
        assertFalse(upgradable.isReleased(), "a failed upgrade leaves the upgradable read held");
        assertEquals(2, lock.readHolds());

        // Every later acquisition is refused, in every shape.
        failsWith(SemaphoreClosedException.class, lock.readLock());
        failsWith(SemaphoreClosedException.class, lock.writeLock(Duration.ofSeconds(1)));
        failsWith(SemaphoreClosedException.class, lock.upgradableReadLock());
        failsWith(SemaphoreClosedException.class, lock.withReadLock(() -> CompletableFuture.completedFuture(1)));
        failsWith(SemaphoreClosedException.class, lock.withWriteLock(() -> CompletableFuture.completedFuture(1)));
        failsWith(SemaphoreClosedException.class, lock.upgrade(upgradable));
        assertFalse(upgradable.isReleased(), "refused: the upgradable read is still the caller's");
        assertThrows(SemaphoreClosedException.class, lock::tryReadLock);
        assertThrows(SemaphoreClosedException.class, lock::tryWriteLock);
        assertThrows(SemaphoreClosedException.class, lock::tryUpgradableReadLock);
        assertThrows(SemaphoreClosedException.class, () -> lock.tryReadLock(Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, lock::readLockBlocking);
        assertThrows(SemaphoreClosedException.class, () -> lock.writeLockBlocking(Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, lock::upgradableReadLockBlocking);
        assertThrows(SemaphoreClosedException.class, () -> lock.upgradeBlocking(upgradable));
        assertEquals(2, lock.readHolds(), "nothing taken");

        // Holds taken before the close can still be ended, in every way.
        read.close();
        upgradable.close();
        assertEquals(0, lock.readHolds());
        lock.close(new IllegalStateException("again")); // a second close does nothing: the first cause stays
        assertSame(cause, failsWith(SemaphoreClosedException.class, lock.readLock()).getCause());
        assertEquals(0, lock.queueLength());
    }

    @Test
    void aClosedReadWriteLockStillLetsWriteHoldsBeDowngradedAndEnded() {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        Permit write = lock.writeLock().join();
        CompletableFuture<Permit> reader = lock.readLock();
        lock.close(null);
        failsWith(SemaphoreClosedException.class, reader);
        Permit read = lock.downgrade(write);
        assertFalse(lock.isWriteLocked());
        assertEquals(1, lock.readHolds());
        read.close();
        assertEquals(0, lock.readHolds());

        AsyncReadWriteLock other = AsyncReadWriteLock.create();
        assertTrue(other.tryWriteLock());
        assertFalse(other.tryReadLock());
        other.close(null);
        other.unlockWrite(); // the try forms' holds end with unlock..., closed or not
        assertFalse(other.isWriteLocked());
    }

    // ---- close of AsyncLock and of the permit pools ----

    @Test
    void closingAnAsyncLockFailsWaitersAndLaterCallsButTheHolderMayUnlock() throws Exception {
        AsyncLock lock = AsyncLock.create();
        Permit held = lock.lock().join();
        CompletableFuture<Permit> queued = lock.lock();
        CompletableFuture<Permit> timed = lock.lock(Duration.ofMinutes(1));
        Outcome blocked = new Outcome(lock::lockBlocking);
        Outcome tryBlocked = new Outcome(() -> lock.tryLock(Duration.ofMinutes(1)));
        await("four waiters", () -> lock.queueLength() == 4);
        IllegalStateException cause = new IllegalStateException("maintenance");
        lock.close(cause);
        assertTrue(lock.isClosed());
        assertSame(cause, failsWith(SemaphoreClosedException.class, queued).getCause());
        assertSame(cause, failsWith(SemaphoreClosedException.class, timed).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, blocked.join()).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, tryBlocked.join()).getCause());
        assertEquals(0, lock.queueLength());

        failsWith(SemaphoreClosedException.class, lock.lock());
        failsWith(SemaphoreClosedException.class, lock.lock(Duration.ofSeconds(1)));
        List<String> ran = new ArrayList<>();
        failsWith(SemaphoreClosedException.class, lock.withLock(() -> {
            ran.add("ran");
            return CompletableFuture.completedFuture(1);
        }));
        assertEquals(List.of(), ran, "withLock on a closed lock does not run the action");
        assertThrows(SemaphoreClosedException.class, lock::tryLock);
        assertThrows(SemaphoreClosedException.class, () -> lock.tryLock(Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, lock::lockBlocking);
        assertThrows(SemaphoreClosedException.class, () -> lock.lockBlocking(Duration.ofSeconds(1)));

        assertTrue(lock.isLocked());
        held.close(); // the holder may still unlock
        assertFalse(lock.isLocked());
        assertThrows(SemaphoreClosedException.class, lock::tryLock, "closed for good, even when free");
        lock.close(new IllegalStateException("again"));
        assertSame(cause, failsWith(SemaphoreClosedException.class, lock.lock()).getCause(), "the first cause stays");
    }

    @Test
    void closingAPermitPoolFailsWaitersOfEveryShapeAndPriorityButReleasesStillWork() throws Exception {
        closePoolAndCheck(AsyncSemaphore.create(2));
        closePoolAndCheck(AsyncPrioritySemaphore.create(2));
        AsyncPrioritySemaphore viewed = AsyncPrioritySemaphore.create(2);
        closePoolAndCheck(viewed.atPriority(3)); // closed through a view
        assertTrue(viewed.isClosed(), "a view closes the one semaphore it views");
        failsWith(SemaphoreClosedException.class, viewed.atPriority(-1).acquire());
    }

    private static void closePoolAndCheck(AsyncPermitPool pool) throws Exception {
        Permit held = pool.acquire(2).join();
        CompletableFuture<Permit> queued = pool.acquire();
        CompletableFuture<Permit> timed = pool.acquire(2, Duration.ofMinutes(1));
        CompletableFuture<Integer> action = pool.withPermit(() -> CompletableFuture.completedFuture(1));
        Outcome blocked = new Outcome(pool::acquireBlocking);
        Outcome tryBlocked = new Outcome(() -> pool.tryAcquire(Duration.ofMinutes(1)));
        await("five waiters of " + pool, () -> pool.queueLength() == 5);
        RuntimeException cause = new RuntimeException("draining " + pool);
        pool.close(cause);
        assertTrue(pool.isClosed());
        assertSame(cause, failsWith(SemaphoreClosedException.class, queued).getCause());
        assertSame(cause, failsWith(SemaphoreClosedException.class, timed).getCause());
        assertSame(cause, failsWith(SemaphoreClosedException.class, action).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, blocked.join()).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, tryBlocked.join()).getCause());
        assertEquals(0, pool.queueLength());

        failsWith(SemaphoreClosedException.class, pool.acquire());
        failsWith(SemaphoreClosedException.class, pool.acquire(Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, pool::tryAcquire);
        assertThrows(SemaphoreClosedException.class, () -> pool.tryAcquire(1, Duration.ofSeconds(1)));
        assertThrows(SemaphoreClosedException.class, () -> pool.acquireBlocking(2));
        assertThrows(SemaphoreClosedException.class, () -> pool.acquireBlocking(Duration.ofSeconds(1)));
        held.close(); // holders may still release
        assertEquals(2, pool.availablePermits());
        assertEquals(2, pool.totalPermits());
        assertEquals(0, pool.queueLength());
    }

    // ---- totalPermits ----

    @Test
    void totalPermitsCountsHeldAndFreePermitsAndFollowsResizing() {
        AsyncSemaphore semaphore = AsyncSemaphore.create(3);
        assertEquals(3, semaphore.totalPermits());
        Permit two = semaphore.acquire(2).join();
        assertEquals(3, semaphore.totalPermits(), "held permits still count");
        assertEquals(1, semaphore.availablePermits());
        semaphore.addPermits(2);
        assertEquals(5, semaphore.totalPermits());
        assertEquals(3, semaphore.drainPermits());
        assertEquals(5, semaphore.totalPermits(), "drained permits are held, not gone");
        semaphore.release(3);
        semaphore.reducePermits(1);
        assertEquals(4, semaphore.totalPermits());
        two.close();
        assertEquals(4, semaphore.availablePermits());
        assertEquals(semaphore.asKotlin().getTotalPermits(), semaphore.totalPermits());

        AsyncPrioritySemaphore priority = AsyncPrioritySemaphore.create(2, Duration.ofSeconds(1));
        assertEquals(2, priority.totalPermits());
        assertEquals(2, priority.atPriority(9).totalPermits(), "a view counts the same permits");
        priority.atPriority(9).addPermits(1);
        assertEquals(3, priority.totalPermits());
        assertEquals(0, AsyncSemaphore.create(0).totalPermits());
    }

    // ---- the future of a request granted at once ----

    @Test
    void cancellingTheFutureOfARequestGrantedAtOnceReturnsFalseAndThePermitMustBeClosed() {
        AsyncSemaphore semaphore = AsyncSemaphore.create(2);
        CompletableFuture<Permit> f = semaphore.acquire();
        assertFalse(f.cancel(true), "granted at once: nothing to withdraw");
        assertFalse(f.isCancelled());
        assertEquals(1, semaphore.availablePermits(), "the permit is still held");
        Permit p = f.join();
        assertFalse(p.isReleased());
        p.close();
        assertState(semaphore, 2, 0);

        AsyncPrioritySemaphore priority = AsyncPrioritySemaphore.create(2);
        CompletableFuture<Permit> g = priority.atPriority(5).acquire(2);
        assertFalse(g.cancel(false));
        assertEquals(0, priority.availablePermits());
        g.join().close();
        assertState(priority, 2, 0);

        AsyncLock lock = AsyncLock.create();
        CompletableFuture<Permit> l = lock.lock();
        assertFalse(l.cancel(true));
        assertTrue(lock.isLocked(), "the lock is still held");
        l.join().close();
        assertFalse(lock.isLocked());

        AsyncReadWriteLock rw = AsyncReadWriteLock.create();
        CompletableFuture<Permit> r = rw.readLock();
        CompletableFuture<Permit> u = rw.upgradableReadLock();
        assertFalse(r.cancel(true));
        assertFalse(u.cancel(true));
        assertEquals(2, rw.readHolds());
        r.join().close();
        CompletableFuture<Permit> w = rw.upgrade(u.join()); // no other reader: granted at once
        assertFalse(w.cancel(true));
        assertTrue(rw.isWriteLocked(), "the upgrade happened and is held");
        w.join().close();
        assertFalse(rw.isWriteLocked());
        assertEquals(0, rw.readHolds());
        CompletableFuture<Permit> wl = rw.writeLock(Duration.ofSeconds(1));
        assertFalse(wl.cancel(true));
        assertTrue(rw.isWriteLocked());
        wl.join().close();
        assertFalse(rw.isWriteLocked());
        assertEquals(0, rw.queueLength());
    }

    @Test
    void aPermitIsAPlainCloseOnceHandle() {
        AsyncSemaphore semaphore = AsyncSemaphore.create(2);
        Permit p = semaphore.acquire(2).join();
        assertNotNull(p.toString());
        assertTrue(p.toString().contains("held"), p.toString());
        p.close();
        assertTrue(p.isReleased());
        assertTrue(p.toString().contains("released"), p.toString());
        p.close();
        assertState(semaphore, 2, 0);
    }
}
