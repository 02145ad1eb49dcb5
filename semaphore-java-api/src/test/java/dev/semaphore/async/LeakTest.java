package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.semaphore.Caller;
import dev.semaphore.Diagnostics;
import dev.semaphore.HoldInfo;
import dev.semaphore.Inspectable;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.Tracking;
import dev.semaphore.bridge.JavaBridge;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

/**
 * Leaks: a Permit garbage-collected without being closed, on an observed primitive, is reported to the
 * listeners, to JFR and to the log; its permits are not given back. A closed permit is never reported,
 * and an unobserved primitive watches nothing.
 */
class LeakTest {

    /** A listener that keeps what onLeak hears (on the library's leak thread). */
    static final class Leaks implements SemaphoreListener {
        final List<HoldInfo> leaks = new CopyOnWriteArrayList<>();
        final List<String> primitives = new CopyOnWriteArrayList<>();

        @Override
        public void onLeak(Inspectable primitive, HoldInfo hold) {
            primitives.add(String.valueOf(primitive.getName()));
            leaks.add(hold);
        }
    }

    /**
     * Asks for collections until {@code done} holds; a guard of 20 s against a hang, not a timing. The
     * caller has already dropped what must be collected.
     */
    static void gcUntil(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) fail("never happened: " + what);
            System.gc();
            Thread.sleep(10);
        }
    }

    // Each helper below takes a permit and lets it go out of scope when it returns: nothing else refers to it.

    private static void acquireAndDrop(AsyncSemaphore s, int permits) {
        Permit leaked = s.acquire(permits).join();
        assertFalse(leaked.isReleased());
    }

    private static void acquireBlockingAndDrop(AsyncSemaphore s) throws InterruptedException {
        Permit leaked = s.acquireBlocking();
        assertFalse(leaked.isReleased());
    }

    private static WeakReference<Permit> acquireCloseAndDrop(AsyncSemaphore s, int permits) {
        Permit p = s.acquire(permits).join();
        p.close();
        return new WeakReference<>(p);
    }

    private static void lockAndDrop(AsyncLock lock) throws InterruptedException {
        Permit leaked = lock.lockBlocking();
        assertTrue(leaked.toString().endsWith(", held)"));
    }

    @Test
    void aDroppedPermitIsReportedWithWhoAndWhereAndItsPermitsStayHeld() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(5, Diagnostics.named("java-leaky").withTracking(Tracking.HOLDERS_AND_STACKS));
        Leaks heard = new Leaks();
        s.addListener(heard);

        acquireAndDrop(s, 2);
        gcUntil("the leak is reported", () -> !heard.leaks.isEmpty());

        HoldInfo leak = heard.leaks.get(0);
        assertEquals(List.of("java-leaky"), heard.primitives);
        assertEquals(2, leak.permits());
        assertEquals("future requested on thread \"" + Thread.currentThread().getName() + "\"", leak.holder());
        // Who, typed: the request's own Requester, made when it asked (JavaHolds.kt, J2), as holders() shows it.
        assertEquals(Caller.Kind.FUTURE, leak.caller().kind());
        assertEquals(Thread.currentThread(), leak.caller().thread());
        assertEquals(s.holders().get(0).caller().toString(), leak.caller().toString());
        assertNotNull(leak.since());
        assertNotNull(leak.held());
        StackTraceElement top = leak.stack().get(0);
        assertEquals(LeakTest.class.getName(), top.getClassName(), leak.toString());
        assertEquals("acquireAndDrop", top.getMethodName(), leak.toString());

        // Not given back: the permits stay held, and the hold is still listed.
        assertEquals(3, s.availablePermits());
        assertEquals(2L, s.snapshot().heldPermits());
        assertEquals(List.of(2), s.holders().stream().map(HoldInfo::permits).toList());
        Thread.sleep(50);
        System.gc();
        assertEquals(1, heard.leaks.size(), "reported once");
        s.release(2); // the only way back: an anonymous release
        assertEquals(5, s.availablePermits());
    }

    @Test
    void aBlockedThreadsPermitAndALockHoldAreReportedToo() throws Exception {
        AsyncSemaphore s = Unobserved.create(() -> AsyncSemaphore.create(1, Diagnostics.named("java-leaky-blocking")));
        Leaks heard = new Leaks();
        s.addListener(heard);
        acquireBlockingAndDrop(s);
        gcUntil("the semaphore's leak is reported", () -> !heard.leaks.isEmpty());
        assertEquals("thread \"" + Thread.currentThread().getName() + "\"", heard.leaks.get(0).holder());
        assertEquals(Caller.Kind.THREAD, heard.leaks.get(0).caller().kind());
        assertEquals(Thread.currentThread(), heard.leaks.get(0).caller().thread());
        assertEquals(1, heard.leaks.get(0).permits());
        assertTrue(heard.leaks.get(0).stack().isEmpty(), "stacks are captured only with HOLDERS_AND_STACKS");

        AsyncLock lock = Unobserved.create(() -> AsyncLock.create(Diagnostics.named("java-leaky-lock")));
        Leaks lockHeard = new Leaks();
        lock.addListener(lockHeard);
        lockAndDrop(lock);
        gcUntil("the lock's leak is reported", () -> !lockHeard.leaks.isEmpty());
        assertEquals("thread \"" + Thread.currentThread().getName() + "\"", lockHeard.leaks.get(0).holder());
        assertTrue(lock.isLocked(), "the lock is not unlocked for the leaker");
        lock.unlock(); // the anonymous unlock still works
        assertFalse(lock.isLocked());
    }

    @Test
    void aClosedPermitAndAHoldEndedOrSpentOtherwiseAreNeverReported() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(4, Diagnostics.named("java-not-leaky").withTracking(Tracking.HOLDERS));
        Leaks heard = new Leaks();
        s.addListener(heard);
        AsyncLock lock = AsyncLock.create(Diagnostics.NONE);
        Leaks lockHeard = new Leaks();
        lock.addListener(lockHeard);
        AsyncReadWriteLock rw = AsyncReadWriteLock.create(Diagnostics.NONE);
        Leaks rwHeard = new Leaks();
        rw.addListener(rwHeard);

        List<WeakReference<Permit>> dropped = new ArrayList<>();
        dropped.add(acquireCloseAndDrop(s, 3));
        dropped.add(endedByUnlock(lock));
        dropped.add(spentByUpgrade(rw));
        gcUntil("the dropped permits are collected", () -> dropped.stream().allMatch(r -> r.get() == null));

        // One leak after them, as a barrier: its check runs after theirs (collected in a later cycle).
        acquireAndDrop(s, 1);
        gcUntil("the leak after them is reported", () -> !heard.leaks.isEmpty());
        assertEquals(List.of(1), heard.leaks.stream().map(HoldInfo::permits).toList(), "only the unclosed permit");
        assertEquals(List.of(), lockHeard.leaks);
        assertEquals(List.of(), rwHeard.leaks);
        assertEquals(3, s.availablePermits());
        assertFalse(lock.isLocked());
        assertFalse(rw.isWriteLocked());
    }

    private static WeakReference<Permit> endedByUnlock(AsyncLock lock) {
        Permit p = lock.lock().join();
        lock.unlock(); // the hold ends anonymously; the permit is never closed
        return new WeakReference<>(p);
    }

    private static WeakReference<Permit> spentByUpgrade(AsyncReadWriteLock rw) throws InterruptedException {
        Permit upgradable = rw.upgradableReadLockBlocking();
        try (Permit write = rw.upgradeBlocking(upgradable)) {
            assertTrue(rw.isWriteLocked());
        }
        return new WeakReference<>(upgradable); // spent by the upgrade: closing it would do nothing
    }

    @Test
    void anUnobservedPrimitiveWatchesNothingAndAnObservedOneWatchesEachPermit() throws Exception {
        AsyncSemaphore quiet = Unobserved.create(() -> AsyncSemaphore.create(3));
        AsyncLock quietLock = Unobserved.create(() -> AsyncLock.create());
        AsyncReadWriteLock quietRw = Unobserved.create(() -> AsyncReadWriteLock.create());
        long before = JavaBridge.watchedHandles();
        quiet.acquire().join().close();
        quiet.acquire(2, Duration.ZERO).join().close();
        quiet.acquireBlocking(3).close();
        quiet.acquireBlocking(1, Duration.ofSeconds(1)).orElseThrow().close();
        quietLock.lock().join().close();
        quietLock.lockBlocking().close();
        quietRw.readLock().join().close();
        quietRw.writeLockBlocking().close();
        assertEquals(before, JavaBridge.watchedHandles(), "nothing is watched while nobody observes");

        AsyncSemaphore observed = AsyncSemaphore.create(3, Diagnostics.named("java-watched").withTracking(Tracking.HOLDERS));
        observed.acquire().join().close();
        observed.acquire(2, Duration.ZERO).join().close();
        observed.acquireBlocking(3).close();
        observed.acquireBlocking(1, Duration.ofSeconds(1)).orElseThrow().close();
        assertTrue(observed.tryAcquire());
        observed.release(); // a try hands out no Permit: nothing to watch
        assertEquals(before + 4, JavaBridge.watchedHandles());

        quietLock.addListener(new SemaphoreListener() {}).close(); // observed for a moment only
        quietLock.lock().join().close();
        assertEquals(before + 4, JavaBridge.watchedHandles());
    }

    @Test
    void aWatchedSemaphorePermitLooksAndIsRefusedAsAnyOther() throws Exception {
        AsyncSemaphore observed = AsyncSemaphore.create(2, Diagnostics.NONE.withTracking(Tracking.HOLDERS));
        AsyncReadWriteLock rw = AsyncReadWriteLock.create();
        long before = JavaBridge.watchedHandles();
        try (Permit watched = observed.acquireBlocking(2)) {
            assertEquals(before + 1, JavaBridge.watchedHandles());
            assertEquals("Permit(2 permits, held)", watched.toString());
            assertEquals(2, watched.permits());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> rw.upgrade(watched));
            assertEquals("upgrade needs a UPGRADABLE_READ hold of this lock, got no lock hold (permits of a semaphore?)", e.getMessage());
        }
        assertEquals(2, observed.availablePermits());
    }

    @Test
    void aLeakIsAJfrEventAndAnErrorInTheLog() throws Exception {
        Logger jul = Logger.getLogger("dev.semaphore"); // the System.Logger's backend here: kept while we listen
        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        jul.addHandler(handler);
        List<RecordedEvent> events = new CopyOnWriteArrayList<>();
        CountDownLatch recorded = new CountDownLatch(1);
        try (RecordingStream rs = new RecordingStream()) {
            rs.enable("dev.semaphore.Leak");
            rs.onEvent("dev.semaphore.Leak", e -> {
                events.add(e);
                recorded.countDown();
            });
            rs.startAsync();
            AsyncSemaphore s = AsyncSemaphore.create(2, Diagnostics.named("java-leak-jfr").withTracking(Tracking.HOLDERS_AND_STACKS));
            acquireAndDrop(s, 2);
            gcUntil("the leak is recorded", () -> recorded.getCount() == 0);
        } finally {
            jul.removeHandler(handler);
        }
        RecordedEvent e = events.stream().filter(ev -> "java-leak-jfr".equals(ev.getString("primitive"))).findFirst().orElseThrow();
        assertEquals("Semaphore", e.getString("kind"));
        assertEquals("future requested on thread \"" + Thread.currentThread().getName() + "\"", e.getString("holder"));
        assertEquals(2, e.getInt("permits"));
        assertTrue(e.getLong("heldFor") > 0);
        assertTrue(e.getString("acquiredAt").startsWith(LeakTest.class.getName() + ".acquireAndDrop("), e.getString("acquiredAt"));
        assertEquals(List.of("Semaphore"), e.getEventType().getCategoryNames());

        LogRecord line = logged.stream().filter(r -> r.getMessage().startsWith("Semaphore \"java-leak-jfr\"")).findFirst().orElseThrow();
        assertEquals(Level.SEVERE, line.getLevel(), "System.Logger's ERROR");
        assertTrue(line.getMessage().contains("a Permit was garbage-collected without being closed"), line.getMessage());
        assertTrue(line.getMessage().contains("not given back"), line.getMessage());
        assertTrue(line.getMessage().contains("2 permits held by future requested on thread"), line.getMessage());
        assertTrue(line.getMessage().contains("\n        at " + LeakTest.class.getName() + ".acquireAndDrop("), line.getMessage());
    }

    @Test
    void aFutureGrantedLaterIsWatchedFromTheThreadThatGrantsIt() throws Exception {
        AsyncSemaphore s = AsyncSemaphore.create(1, Diagnostics.named("java-leak-later"));
        Leaks heard = new Leaks();
        s.addListener(heard);
        Permit first = s.acquire().join();
        CompletableFuture<Permit> later = s.acquire(1, Duration.ofMinutes(1));
        Thread releaser = new Thread(first::close, "java-leak-releaser");
        releaser.start();
        releaser.join();
        assertTrue(later.isDone());
        later = null; // the future held the only reference to the permit
        gcUntil("the permit granted later is reported", () -> !heard.leaks.isEmpty());
        assertEquals("future requested on thread \"" + Thread.currentThread().getName() + "\"", heard.leaks.get(0).holder());
        assertEquals(0, s.availablePermits());
    }
}
