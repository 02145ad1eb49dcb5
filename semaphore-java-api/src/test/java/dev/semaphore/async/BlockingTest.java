package dev.semaphore.async;

import static dev.semaphore.async.AsyncSemaphoreTest.drained;
import static dev.semaphore.async.TestSupport.assertState;
import static dev.semaphore.async.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.SemaphoreClosedException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The blocking forms: parking in the shared line, interrupts, deadlines, close. */
class BlockingTest {

    @Test
    void aBlockedThreadIsWokenByARelease() throws Exception {
        AsyncSemaphore s = drained(2);
        Outcome o = new Outcome(() -> s.acquireBlocking(2));
        await("thread queued", () -> s.queueLength() == 1);
        s.release();
        assertEquals(1, s.queueLength(), "one permit does not fit a request for two");
        s.release();
        Permit p = assertInstanceOf(Permit.class, o.join());
        assertEquals(2, p.permits());
        assertState(s, 0, 0);
        p.close();
        assertState(s, 2, 0);
    }

    @Test
    void anInterruptRemovesTheWaiterAndThrowsWithNothingHeld() throws Exception {
        AsyncSemaphore s = drained(1);
        Outcome o = new Outcome(s::acquireBlocking);
        await("thread queued", () -> s.queueLength() == 1);
        o.thread.interrupt();
        assertInstanceOf(InterruptedException.class, o.join());
        assertState(s, 0, 0);
        s.release();
        assertState(s, 1, 0); // nobody holds it: the interrupted waiter is gone
    }

    @Test
    void anInterruptBeforeTheCallThrowsAtOnce() {
        AsyncSemaphore s = AsyncSemaphore.create(1);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, s::acquireBlocking);
        assertFalse(Thread.interrupted(), "the flag is cleared, as InterruptedException promises");
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> s.acquireBlocking(1, Duration.ofSeconds(1)));
        assertState(s, 1, 0);
    }

    @Test
    void aGrantRacingAnInterruptIsNeverLost() throws Exception {
        AsyncSemaphore s = drained(1);
        int interrupted = 0;
        int granted = 0;
        int rounds = 300 * TestSupport.SCALE;
        for (int i = 0; i < rounds; i++) {
            Outcome o = new Outcome(s::acquireBlocking);
            await("thread queued", () -> s.queueLength() == 1);
            s.release();          // grant ...
            o.thread.interrupt(); // ... and interrupt in the same instant
            Object r = o.join();
            if (r instanceof Permit) {
                granted++;
                ((Permit) r).close();
            } else {
                assertInstanceOf(InterruptedException.class, r);
                interrupted++;
            }
            assertState(s, 1, 0); // the permit is back whichever side won
            assertEquals(1, s.drainPermits());
        }
        System.out.printf("grant-vs-interrupt: %d rounds, %d returned the permit, %d threw InterruptedException (cancelled in line, or granted and handed back)%n",
                rounds, granted, interrupted);
        assertEquals(rounds, granted + interrupted);
    }

    @Test
    void aDeadlineReturnsEmptyWithNothingHeld() throws Exception {
        AsyncSemaphore s = drained(1);
        assertEquals(Optional.empty(), s.acquireBlocking(1, Duration.ofMillis(20)));
        assertFalse(s.tryAcquire(1, Duration.ofMillis(1)));
        assertState(s, 0, 0);
        s.release();
        assertState(s, 1, 0);
    }

    @Test
    void theTimedTryWithAnEndlessTimeoutWaitsForTheGrant() throws Exception {
        // The handle-less blocking form (AsyncPermitPool, "Blocking"): a timeout past what nanoseconds can count
        // saturates to no limit, not to a negative "try now".
        AsyncSemaphore s = drained(2);
        Outcome forever = new Outcome(() -> s.tryAcquire(ChronoUnit.FOREVER.getDuration()));
        Outcome longest = new Outcome(() -> s.tryAcquire(1, Duration.ofSeconds(Long.MAX_VALUE)));
        await("two threads queued", () -> s.queueLength() == 2);
        s.release(2);
        assertEquals(true, forever.join());
        assertEquals(true, longest.join());
        assertState(s, 0, 0);
        s.release(2); // no handle: the try form's permits go back by release
        assertState(s, 2, 0);
    }

    @Test
    void aGrantRacingTheDeadlineIsNeverLost() throws Exception {
        AsyncSemaphore s = drained(1);
        int rounds = 300 * TestSupport.SCALE;
        int got = 0;
        for (int i = 0; i < rounds; i++) {
            long micros = i % 50;
            Outcome o = new Outcome(() -> s.acquireBlocking(1, Duration.ofNanos(micros * 1_000)));
            s.release();
            Object r = o.join();
            Optional<?> opt = assertInstanceOf(Optional.class, r);
            if (opt.isPresent()) {
                got++;
                ((Permit) opt.get()).close();
            }
            assertState(s, 1, 0);
            assertEquals(1, s.drainPermits());
        }
        System.out.printf("grant-vs-deadline: %d rounds, %d got the permit%n", rounds, got);
    }

    @Test
    void closeWakesBlockedThreadsWithTheCause() throws Exception {
        AsyncSemaphore s = drained(1);
        Outcome untimed = new Outcome(s::acquireBlocking);
        Outcome timed = new Outcome(() -> s.acquireBlocking(1, Duration.ofMinutes(1)));
        await("two threads queued", () -> s.queueLength() == 2);
        RuntimeException cause = new RuntimeException("maintenance");
        s.close(cause);
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, untimed.join()).getCause());
        assertSame(cause, assertInstanceOf(SemaphoreClosedException.class, timed.join()).getCause());
        assertState(s, 0, 0);
    }

    @Test
    void lockBlockingInterruptLeavesTheLockAsItWas() throws Exception {
        AsyncLock lock = AsyncLock.create();
        Permit mine = lock.lockBlocking();
        Outcome o = new Outcome(lock::lockBlocking);
        await("worker queued", () -> lock.queueLength() == 1);
        o.thread.interrupt();
        assertInstanceOf(InterruptedException.class, o.join());
        assertTrue(lock.isLocked());
        assertEquals(0, lock.queueLength());
        mine.close(); // would throw IllegalStateException if the interrupted waiter had ended or replaced this hold
        assertFalse(lock.isLocked());

        // The same for tryLock(Duration), which blocks like java.util.concurrent.locks.Lock.tryLock(time, unit).
        mine = lock.lockBlocking();
        Outcome interruptedTry = new Outcome(() -> lock.tryLock(Duration.ofMinutes(1)));
        await("timed worker queued", () -> lock.queueLength() == 1);
        interruptedTry.thread.interrupt();
        assertInstanceOf(InterruptedException.class, interruptedTry.join());
        assertEquals(0, lock.queueLength());
        mine.close();
        assertFalse(lock.isLocked());
        Permit free = lock.lockBlocking(Duration.ZERO).orElseThrow(); // free: a zero timeout takes it now
        assertTrue(lock.isLocked());
        free.close();
        assertFalse(lock.isLocked());
    }
}
