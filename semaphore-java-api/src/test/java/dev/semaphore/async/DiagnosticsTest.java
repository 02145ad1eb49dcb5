package dev.semaphore.async;

import static dev.semaphore.async.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.HoldInfo;
import dev.semaphore.Inspectable;
import dev.semaphore.ListenerRegistration;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.Tracking;
import dev.semaphore.WaitInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Listeners, holders, waiters and dumps as a Java caller uses them, on every Java view. */
class DiagnosticsTest {

    /** One event as a listener heard it: its name, who, and how many. */
    record Heard(String event, String who, int permits, Object detail) {}

    /** A Java listener that records what it hears; events come on other threads too, hence the lock. */
    static final class Recorder implements SemaphoreListener {
        private final List<Heard> heard = new ArrayList<>();

        synchronized List<Heard> heard() {
            return List.copyOf(heard);
        }

        synchronized List<Heard> heard(String event) {
            return heard.stream().filter(h -> h.event().equals(event)).toList();
        }

        private synchronized void add(Heard h) {
            heard.add(h);
        }

        @Override
        public void onAcquired(Inspectable primitive, HoldInfo hold, Duration waited) {
            add(new Heard("acquired", hold.holder(), hold.permits(), waited));
        }

        @Override
        public void onReleased(Inspectable primitive, HoldInfo hold) {
            add(new Heard("released", hold.holder(), hold.permits(), hold.held()));
        }

        @Override
        public void onRefused(Inspectable primitive, int permits) {
            add(new Heard("refused", "", permits, null));
        }

        @Override
        public void onTimedOut(Inspectable primitive, WaitInfo request) {
            add(new Heard("timed out", request.requester(), request.permits(), request.waited()));
        }

        @Override
        public void onCancelled(Inspectable primitive, WaitInfo request) {
            add(new Heard("cancelled", request.requester(), request.permits(), request.waited()));
        }
    }

    /** Overrides one method only: the Kotlin interface's other methods are JVM default methods. */
    static final class ReleaseCounter implements SemaphoreListener {
        volatile int released;

        @Override
        public void onReleased(Inspectable primitive, HoldInfo hold) {
            released++;
        }
    }

    private static String thread(Thread t) {
        return "thread \"" + t.getName() + "\"";
    }

    private static String futureOf(Thread t) {
        return "future requested on thread \"" + t.getName() + "\"";
    }

    @Test
    void aJavaListenerHearsFuturesTheirTimeoutsAndCancellationsAndTries() throws Exception {
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named("java-listener-db"));
        Recorder recorder = new Recorder();
        ReleaseCounter counter = new ReleaseCounter();
        ListenerRegistration registration = db.addListener(recorder);
        db.addListener(counter);
        String me = futureOf(Thread.currentThread());

        Permit held = db.acquire(2).join();
        Heard acquired = recorder.heard("acquired").get(0);
        assertEquals(me, acquired.who(), "a future granted at once is named by its requesting thread too");
        assertEquals(2, acquired.permits());
        assertEquals(Duration.ZERO, acquired.detail());

        assertFalse(db.tryAcquire());
        assertFalse(db.tryAcquire(1, Duration.ZERO));
        assertEquals(List.of(new Heard("refused", "", 1, null), new Heard("refused", "", 1, null)), recorder.heard("refused"));

        CompletableFuture<Permit> timesOut = db.acquire(1, Duration.ofMillis(30)); // orTimeout inside
        CompletionException failure = assertThrows(CompletionException.class, timesOut::join);
        assertInstanceOf(TimeoutException.class, failure.getCause());
        await("the timeout is heard", () -> !recorder.heard("timed out").isEmpty());
        Heard timedOut = recorder.heard("timed out").get(0);
        assertEquals(me, timedOut.who());
        assertTrue(((Duration) timedOut.detail()).toMillis() >= 25, "waited " + timedOut.detail());

        CompletableFuture<Permit> cancelled = db.acquire(1);
        assertTrue(cancelled.cancel(false));
        assertEquals(List.of(new Heard("cancelled", me, 1, recorder.heard("cancelled").get(0).detail())), recorder.heard("cancelled"));

        CompletableFuture<Permit> later = db.acquire(1);
        held.close(); // grants `later` on this thread
        Permit second = later.join();
        Heard released = recorder.heard("released").get(0);
        assertEquals(me, released.who());
        assertEquals(2, released.permits());
        assertNotNull(released.detail(), "held for a known time");
        Heard grantedLater = recorder.heard("acquired").get(1);
        assertEquals(me, grantedLater.who());
        assertTrue(((Duration) grantedLater.detail()).compareTo(Duration.ZERO) > 0, "it waited");

        second.close();
        assertEquals(2, counter.released);
        registration.close();
        registration.close(); // twice does nothing
        db.acquire().join().close();
        assertEquals(2, recorder.heard("released").size(), "nothing heard after the registration is closed");
        assertEquals(3, counter.released, "the other listener still hears");
        NullPointerException npe = assertThrows(NullPointerException.class, () -> db.addListener(null));
        assertEquals("listener", npe.getMessage());
    }

    @Test
    void aBlockedThreadIsNamedWithItsDeadlineAndHeardWhenItTimesOutOrIsInterrupted() throws Exception {
        AsyncSemaphore pool = AsyncSemaphore.create(1, Diagnostics.named("java-blocked").withTracking(Tracking.HOLDERS));
        Recorder recorder = new Recorder();
        pool.addListener(recorder);
        Permit held = pool.acquireBlocking();

        AtomicReference<Optional<Permit>> outcome = new AtomicReference<>();
        Thread timed = new Thread(() -> {
            try {
                outcome.set(pool.acquireBlocking(Duration.ofSeconds(30)));
            } catch (InterruptedException e) {
                outcome.set(null);
            }
        }, "java-diag-timed");
        Instant before = Instant.now();
        timed.start();
        await("the blocked thread is in line", () -> pool.waiters().size() == 1);
        WaitInfo w = pool.waiters().get(0);
        assertEquals("thread \"java-diag-timed\"", w.requester());
        assertEquals(1, w.permits());
        Instant deadline = w.deadline();
        assertNotNull(deadline, "a timed request shows its deadline");
        long untilDeadline = Duration.between(before, deadline).toMillis();
        assertTrue(untilDeadline > 29_000 && untilDeadline < 31_000, "deadline " + untilDeadline + " ms after the call");
        assertTrue(pool.dump().contains("thread \"java-diag-timed\" waits for 1 permit since"), pool.dump());
        assertTrue(pool.dump().contains(", until " + deadline.toString().substring(0, 10)), pool.dump());

        timed.interrupt();
        timed.join();
        assertNull(outcome.get(), "interrupted, nothing held");
        assertEquals("thread \"java-diag-timed\"", recorder.heard("cancelled").get(0).who());

        Thread shortWait = new Thread(() -> {
            try {
                outcome.set(pool.acquireBlocking(Duration.ofMillis(40)));
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "java-diag-short");
        shortWait.start();
        shortWait.join();
        assertEquals(Optional.empty(), outcome.get());
        Heard timedOut = recorder.heard("timed out").get(0);
        assertEquals("thread \"java-diag-short\"", timedOut.who());

        assertTrue(pool.waiters().isEmpty());
        held.close();
        assertEquals("thread \"" + Thread.currentThread().getName() + "\"", recorder.heard("released").get(0).who());
    }

    @Test
    void holdersAndTheDumpShowWhoHoldsWhatSinceWhen() throws Exception {
        AsyncSemaphore s = Unobserved.create(() -> AsyncSemaphore.create(5, Diagnostics.named("java-holders").withTracking(Tracking.HOLDERS)));
        assertTrue(s.holders().isEmpty());
        Instant before = Instant.now();
        Permit two = s.acquire(2).join();
        Permit three = s.acquireBlocking(3);
        CompletableFuture<Permit> waiting = s.acquire(1);

        List<HoldInfo> holders = s.holders();
        assertEquals(2, holders.size());
        assertEquals(futureOf(Thread.currentThread()), holders.get(0).holder());
        assertEquals(2, holders.get(0).permits());
        assertEquals(thread(Thread.currentThread()), holders.get(1).holder());
        assertEquals(3, holders.get(1).permits());
        Instant since = holders.get(0).since();
        assertNotNull(since);
        assertFalse(since.isBefore(before.minusMillis(50)), since + " is before " + before);
        assertNotNull(holders.get(0).held());
        assertTrue(holders.get(0).stack().isEmpty(), "no stacks without HOLDERS_AND_STACKS");

        List<WaitInfo> waiters = s.waiters();
        assertEquals(1, waiters.size());
        assertEquals(futureOf(Thread.currentThread()), waiters.get(0).requester());
        assertNull(waiters.get(0).deadline(), "no timeout, no deadline");

        String dump = s.dump();
        assertTrue(dump.startsWith("Semaphore \"java-holders\": 5/5 held"), dump);
        assertTrue(dump.contains("\n  holders:\n    2 permits held by " + futureOf(Thread.currentThread()) + " for "), dump);
        assertTrue(dump.contains("\n    3 permits held by thread \""), dump);
        assertTrue(dump.contains("\n  waiting, in the order they came:\n    " + futureOf(Thread.currentThread()) + " waits for 1 permit"), dump);

        two.close();
        Permit one = waiting.join();
        assertEquals(List.of(3, 1), s.holders().stream().map(HoldInfo::permits).toList());
        three.close();
        one.close();
        assertTrue(s.holders().isEmpty());
    }

    @Test
    void thePrioritySemaphoreAndTheLocksHaveTheSameViews() throws Exception {
        AsyncPrioritySemaphore jobs = AsyncPrioritySemaphore.create(1, null, Diagnostics.named("java-prio"));
        Recorder heard = new Recorder();
        jobs.addListener(heard);
        Permit p = jobs.acquire().join();
        CompletableFuture<Permit> urgent = jobs.atPriority(7).acquire();
        assertEquals(7, jobs.waiters().get(0).priority());
        assertEquals(1, jobs.holders().size());
        assertTrue(jobs.dump().contains("at priority 7"), jobs.dump());
        p.close();
        urgent.join().close();
        assertEquals(2, heard.heard("released").size());

        AsyncLock ledger = AsyncLock.create(Diagnostics.named("java-ledger"));
        Recorder lockHeard = new Recorder();
        ledger.addListener(lockHeard);
        Permit lock = ledger.lockBlocking();
        CompletableFuture<Permit> next = ledger.lock(Duration.ofMinutes(1));
        assertEquals("thread \"" + Thread.currentThread().getName() + "\"", ledger.holders().get(0).holder());
        assertEquals(futureOf(Thread.currentThread()), ledger.waiters().get(0).requester());
        assertNotNull(ledger.waiters().get(0).deadline());
        assertTrue(ledger.dump().startsWith("Lock \"java-ledger\""), ledger.dump());
        assertFalse(ledger.tryLock());
        assertEquals(1, lockHeard.heard("refused").size());
        lock.close();
        next.join().close();
        assertEquals(2, lockHeard.heard("acquired").size());
        assertEquals(2, lockHeard.heard("released").size());

        AsyncReadWriteLock cache = AsyncReadWriteLock.create(Diagnostics.named("java-cache"));
        Recorder rwHeard = new Recorder();
        cache.addListener(rwHeard);
        Permit read = cache.readLock().join();
        CompletableFuture<Permit> write = cache.writeLock(Duration.ofMillis(20));
        assertEquals(1, cache.waiters().size());
        assertThrows(CompletionException.class, write::join);
        await("the writer's timeout is heard", () -> rwHeard.heard("timed out").size() == 1);
        assertEquals(1, cache.holders().size());
        assertTrue(cache.dump().contains("holders:"), cache.dump());
        read.close();
        assertTrue(cache.holders().isEmpty());
    }

    @Test
    void closingAPermitEndsItsOwnRecordNotTheLatestOfItsThread() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(5, Diagnostics.named("java-own-record").withTracking(Tracking.HOLDERS_AND_STACKS));
        Permit first = s.acquireBlocking(2);
        Thread.sleep(20); // the two holds' times differ
        Permit second = s.acquireBlocking(2); // the same thread, the same size
        List<HoldInfo> both = s.holders();
        assertEquals(2, both.size(), both.toString());
        Instant secondSince = both.stream().map(HoldInfo::since).max(Instant::compareTo).orElseThrow();

        first.close(); // names its own request (JavaHolds.kt, J3): the second hold's record stays

        List<HoldInfo> left = s.holders();
        assertEquals(1, left.size(), left.toString());
        assertEquals(secondSince, left.get(0).since(), "the record left is the second Permit's: " + left);
        assertEquals(2, left.get(0).permits());
        second.close();
        assertTrue(s.holders().isEmpty());
        assertEquals(5, s.availablePermits());
    }

    @Test
    void anUpgradeIsItsOwnCallersRequest() throws Exception {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create(Diagnostics.named("java-upgrade-caller").withTracking(Tracking.HOLDERS));
        Permit upgradable = lock.upgradableReadLock().join(); // a future's hold
        Permit write = lock.upgradeBlocking(upgradable); // this thread's request
        List<HoldInfo> holders = lock.holders();
        assertTrue(holders.stream().anyMatch(h -> h.caller().kind() == dev.semaphore.Caller.Kind.FUTURE), holders.toString());
        assertTrue(holders.stream().anyMatch(h -> h.caller().kind() == dev.semaphore.Caller.Kind.THREAD
                && h.caller().thread() == Thread.currentThread()), holders.toString());
        write.close();
        assertTrue(lock.holders().isEmpty(), lock.holders().toString());
        assertFalse(lock.isWriteLocked());
    }
}
