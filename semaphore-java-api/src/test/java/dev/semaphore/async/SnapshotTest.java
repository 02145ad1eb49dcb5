package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.SemaphoreSnapshot;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The snapshot as a Java caller reads it: record-style methods, the same figures as Kotlin's. */
class SnapshotTest {

    @Test
    void semaphoreSnapshotCountsFuturesThreadsAndTries() throws Exception {
        AsyncSemaphore db = Unobserved.create(() -> AsyncSemaphore.create(2, Diagnostics.named("db"))); // no tracking: no timed waits
        assertEquals("db", db.name());
        Permit first = db.acquire(2).join();
        assertFalse(db.tryAcquire());
        assertFalse(db.tryAcquire(1, Duration.ZERO), "a zero timeout is a try");
        CompletableFuture<Permit> waiting = db.acquire(1);
        CompletableFuture<Permit> timesOut = db.acquire(1, Duration.ofMillis(20));
        CompletableFuture<Permit> cancelled = db.acquire(1);

        SemaphoreSnapshot s = db.snapshot();
        assertEquals("Semaphore", s.kind());
        assertEquals("db", s.name());
        assertEquals(2, s.totalPermits());
        assertEquals(0, s.availablePermits());
        assertEquals(2L, s.heldPermits());
        assertEquals(3, s.queuedRequests());
        assertEquals(3L, s.queuedPermits());
        assertEquals(2L, s.tryRefused());
        assertEquals(Map.of(), s.queuedByPriority());
        assertNull(s.oldestWait(), "waits are not timed without tracking");

        assertThrows(CompletionException.class, timesOut::join);
        assertTrue(cancelled.cancel(false));
        first.close();
        waiting.join().close();

        s = db.snapshot();
        assertEquals(1L, s.timedOut());
        assertEquals(1L, s.cancelled());
        assertEquals(2L, s.acquired());
        assertEquals(1L, s.acquiredAfterWait());
        assertEquals(0, s.queuedRequests());
        assertEquals(0L, s.heldPermits());
    }

    @Test
    void aBlockedThreadThatTimesOutIsCountedAsTimedOut() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Permit held = s.acquireBlocking();
        assertTrue(s.acquireBlocking(Duration.ofMillis(10)).isEmpty());
        assertEquals(1L, s.snapshot().timedOut());
        held.close();
    }

    @Test
    void prioritySemaphoreCountsItsLinePerPriority() {
        AsyncPrioritySemaphore jobs = AsyncPrioritySemaphore.create(1, null, Diagnostics.named("jobs"));
        Permit held = jobs.acquire().join();
        CompletableFuture<Permit> low = jobs.atPriority(1).acquire();
        CompletableFuture<Permit> high = jobs.atPriority(9).acquire();
        assertEquals(Map.of(9, 1, 1, 1), jobs.snapshot().queuedByPriority());
        held.close();
        high.join().close();
        low.join().close();
        assertEquals(3L, jobs.snapshot().acquired());
    }

    @Test
    void locksReportTheirHolds() {
        AsyncLock lock = AsyncLock.create(Diagnostics.named("ledger"));
        Permit held = lock.lock().join();
        assertEquals("Lock", lock.snapshot().kind());
        assertEquals(1L, lock.snapshot().heldPermits());
        assertFalse(lock.tryLock());
        assertEquals(1L, lock.snapshot().tryRefused());
        held.close();

        AsyncReadWriteLock cache = AsyncReadWriteLock.create(Diagnostics.named("cache"));
        Permit read = cache.readLock().join();
        CompletableFuture<Permit> write = cache.writeLock(Duration.ofMillis(5));
        assertThrows(CompletionException.class, write::join);
        SemaphoreSnapshot s = cache.snapshot();
        assertEquals(1, s.readHolds());
        assertFalse(s.writeLocked());
        assertEquals(1L, s.timedOut());
        assertTrue(s.toString().startsWith("ReadWriteLock \"cache\": 1 read holds"), s.toString());
        read.close();
    }

    @Test
    void namedPrimitivesAreDumpedInOneCall() {
        AsyncSemaphore a = AsyncSemaphore.create(3, Diagnostics.named("java-dump-a"));
        assertTrue(Diagnostics.dumpAll().contains("Semaphore \"java-dump-a\": 0/3 held"), Diagnostics.dumpAll());
        assertTrue(Diagnostics.namedPrimitives().contains(a.asKotlin()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Diagnostics.named(""));
        assertTrue(e.getMessage().contains("was \"\""), e.getMessage());
        assertThrows(NullPointerException.class, () -> AsyncSemaphore.create(1, null));
    }
}
