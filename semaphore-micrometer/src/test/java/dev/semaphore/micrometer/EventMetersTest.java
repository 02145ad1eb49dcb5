package dev.semaphore.micrometer;

import static dev.semaphore.micrometer.Meters.collectUntil;
import static dev.semaphore.micrometer.Meters.describe;
import static dev.semaphore.micrometer.Meters.eventually;
import static dev.semaphore.micrometer.Meters.gauge;
import static dev.semaphore.micrometer.Meters.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.Inspectable;
import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The meters fed by the listener (timers of waits and holds, holds and waits in progress, long holds),
 * after real waits, timeouts, cancellations and holds of measured length, on real primitives.
 */
class EventMetersTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();

    /** Every meter of a full binding, as {@link Meters#describe} writes them. */
    static List<String> allMeters(String kind, String name) {
        List<String> expected = new ArrayList<>(SemaphoreMetricsTest.snapshotMeters(kind, name));
        String tags = "{kind=" + kind + ", name=" + name + "}";
        for (String outcome : List.of("acquired", "cancelled", "timed_out")) {
            expected.add("TIMER semaphore.acquire {kind=" + kind + ", name=" + name + ", outcome=" + outcome + "}");
        }
        expected.add("GAUGE semaphore.acquire.oldest " + tags);
        expected.add("TIMER semaphore.hold " + tags);
        expected.add("GAUGE semaphore.hold.active " + tags);
        expected.add("GAUGE semaphore.hold.oldest " + tags);
        expected.add("COUNTER semaphore.hold.long " + tags);
        expected.add("COUNTER semaphore.deadlocks " + tags);
        expected.sort(null);
        return expected;
    }

    private Timer acquireTimer(String name, String outcome) {
        return registry.get(SemaphoreMetrics.ACQUIRE).tag("name", name).tag("outcome", outcome).timer();
    }

    private Timer holdTimer(String name) {
        return registry.get(SemaphoreMetrics.HOLD).tag("name", name).timer();
    }

    @Test
    void aFullBindingHasTheDocumentedMeters() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        assertEquals(allMeters("Semaphore", name), describe(registry, name));
        assertEquals(19, registry.getMeters().size());
        assertEquals("seconds", registry.get(SemaphoreMetrics.HOLD_OLDEST).gauge().getId().getBaseUnit());
    }

    @Test
    void waitsAreTimedByOutcome() throws Exception {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);

        Permit held = db.acquire().join();                           // granted at once: a wait of 0
        assertEquals(1, acquireTimer(name, "acquired").count());
        assertEquals(0.0, acquireTimer(name, "acquired").totalTime(TimeUnit.NANOSECONDS));

        CompletableFuture<Permit> timesOut = db.acquire(Duration.ofMillis(50));
        assertThrows(CompletionException.class, timesOut::join);
        eventually("the timed-out wait", () -> acquireTimer(name, "timed_out").count() == 1);
        // its clock starts before the request joins the line (how long before depends on the load): only a positive wait is certain
        assertTrue(acquireTimer(name, "timed_out").totalTime(TimeUnit.MILLISECONDS) > 0,
                "waited " + acquireTimer(name, "timed_out").totalTime(TimeUnit.MILLISECONDS) + " ms");

        CompletableFuture<Permit> cancelled = db.acquire();
        Thread.sleep(30);
        assertTrue(cancelled.cancel(false));
        assertEquals(1, acquireTimer(name, "cancelled").count());
        assertTrue(acquireTimer(name, "cancelled").totalTime(TimeUnit.MILLISECONDS) >= 30);

        CompletableFuture<Permit> waits = db.acquire();
        assertTrue(gauge(registry, SemaphoreMetrics.ACQUIRE_OLDEST, name) >= 0.0);
        Thread.sleep(40);
        assertTrue(gauge(registry, SemaphoreMetrics.ACQUIRE_OLDEST, name) >= 0.040,
                "oldest wait " + gauge(registry, SemaphoreMetrics.ACQUIRE_OLDEST, name) + " s");
        held.close();
        waits.join().close();
        assertEquals(2, acquireTimer(name, "acquired").count());
        assertTrue(acquireTimer(name, "acquired").max(TimeUnit.MILLISECONDS) >= 40);
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.ACQUIRE_OLDEST, name), "nobody waits now");
    }

    @Test
    void holdsAreTimedAndTheOnesInProgressShow() throws Exception {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(3, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.HOLD_ACTIVE, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.HOLD_OLDEST, name));

        Permit one = db.acquireBlocking();
        Permit two = db.acquireBlocking(2);
        Thread.sleep(40);
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.HOLD_ACTIVE, name));
        assertTrue(gauge(registry, SemaphoreMetrics.HOLD_OLDEST, name) >= 0.040);
        one.close();
        two.close();
        assertEquals(2, holdTimer(name).count());
        assertTrue(holdTimer(name).totalTime(TimeUnit.MILLISECONDS) >= 80,
                "held " + holdTimer(name).totalTime(TimeUnit.MILLISECONDS) + " ms in all");
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.HOLD_ACTIVE, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.HOLD_OLDEST, name));
    }

    @Test
    void aHoldFromBeforeTheBindingIsNotTimed() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        Permit before = db.acquire().join();
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.HOLD_ACTIVE, name), "not recorded: taken before");
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name), "but the snapshot counts it");
        before.close();
        assertEquals(0, holdTimer(name).count(), "its length is unknown");
    }

    @Test
    void longHoldsAreCounted() throws Exception {
        String name = uniqueName("lock");
        AsyncLock lock = AsyncLock.create(Diagnostics.named(name).withLongHoldThreshold(Duration.ofMillis(50)));
        SemaphoreMetrics.of(lock.asKotlin()).bindTo(registry);
        try (Permit quick = lock.lockBlocking()) {
            assertEquals(0.0, registry.get(SemaphoreMetrics.HOLD_LONG).tag("name", name).counter().count());
        }
        try (Permit slow = lock.lockBlocking()) {
            eventually("the long hold reported",
                    () -> registry.get(SemaphoreMetrics.HOLD_LONG).tag("name", name).counter().count() == 1.0);
        }
        assertEquals(1.0, registry.get(SemaphoreMetrics.HOLD_LONG).tag("name", name).counter().count());
        assertTrue(holdTimer(name).max(TimeUnit.MILLISECONDS) >= 50);
    }

    @Test
    void deadlocksAreCounted() throws Exception {
        String accountsName = uniqueName("accounts");
        String ledgerName = uniqueName("ledger");
        AsyncLock accounts = AsyncLock.create(Diagnostics.named(accountsName).withDeadlockDetection(Duration.ofMillis(50)));
        AsyncLock ledger = AsyncLock.create(Diagnostics.named(ledgerName).withDeadlockDetection(Duration.ofMillis(50)));
        SemaphoreMetrics.of(accounts.asKotlin()).bindTo(registry);
        SemaphoreMetrics.of(ledger.asKotlin()).bindTo(registry);

        // Two blocked threads, each holding one lock and waiting for the other's (a pending future waits for nobody,
        // so it is never part of a deadlock the library reports: docs/diagnostics.md, "Who holds").
        java.util.concurrent.CountDownLatch bothHold = new java.util.concurrent.CountDownLatch(2);
        Thread teller = transfer("accounts-worker", accounts, ledger, bothHold);
        Thread clerk = transfer("ledger-worker", ledger, accounts, bothHold);
        eventually("the deadlock counted on both locks",
                () -> registry.get(SemaphoreMetrics.DEADLOCKS).tag("name", accountsName).counter().count() == 1.0
                        && registry.get(SemaphoreMetrics.DEADLOCKS).tag("name", ledgerName).counter().count() == 1.0);

        teller.interrupt();                                          // one gives up: the other goes on
        teller.join(10_000);
        clerk.join(10_000);
        assertFalse(clerk.isAlive());
        assertEquals(1.0, registry.get(SemaphoreMetrics.DEADLOCKS).tag("name", accountsName).counter().count());
    }

    /** A thread that takes {@code first}, waits until both threads hold one lock, then waits for {@code second}. */
    private static Thread transfer(String name, AsyncLock first, AsyncLock second, java.util.concurrent.CountDownLatch bothHold) {
        Thread t = new Thread(() -> {
            try (Permit held = first.lockBlocking()) {
                bothHold.countDown();
                bothHold.await();
                second.lockBlocking().close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, name);
        t.start();
        return t;
    }

    @Test
    void snapshotOnlyAddsNoListener() {
        String name = uniqueName("hot");
        AsyncSemaphore hot = AsyncSemaphore.create(2, Diagnostics.named(name));
        SemaphoreMetrics.of(hot.asKotlin()).snapshotOnly().bindTo(registry);
        assertEquals(SemaphoreMetricsTest.snapshotMeters("Semaphore", name), describe(registry, name));
        try (Permit p = hot.acquire().join()) {
            assertEquals(List.of(), hot.asKotlin().holders(), "not observed: no hold is recorded");
        }
    }

    @Test
    void closingRemovesTheListener() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        SemaphoreMetrics metrics = SemaphoreMetrics.of(db.asKotlin());
        metrics.bindTo(registry);
        try (Permit p = db.acquire().join()) {
            assertEquals(1, db.asKotlin().holders().size(), "observed while bound");
        }
        metrics.close();
        assertEquals(List.of(), describe(registry, name));
        try (Permit p = db.acquire().join()) {
            assertEquals(List.of(), db.asKotlin().holders(), "no longer observed");
        }
    }

    @Test
    void theEventMetersComeAndGoWithTheBindersThatWantThem() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        SemaphoreMetrics cheap = SemaphoreMetrics.of(db.asKotlin()).snapshotOnly();
        cheap.bindTo(registry);
        SemaphoreMetrics full = SemaphoreMetrics.of(db.asKotlin());
        full.bindTo(registry);
        assertEquals(allMeters("Semaphore", name), describe(registry, name));
        db.acquire().join().close();
        assertEquals(1, acquireTimer(name, "acquired").count());

        full.close(); // nobody wants the listener now: it goes, with its meters
        assertEquals(SemaphoreMetricsTest.snapshotMeters("Semaphore", name), describe(registry, name));
        try (Permit p = db.acquire().join()) {
            assertEquals(List.of(), db.asKotlin().holders(), "no longer observed");
        }
        cheap.close();
        assertEquals(List.of(), describe(registry, name));
    }

    @Test
    void theListenerDoesNotKeepThePrimitiveAlive() throws Exception {
        String name = uniqueName("observed");
        WeakReference<Inspectable> primitive = bindObserved(name);
        assertNotNull(registry.find(SemaphoreMetrics.ACQUIRE).tag("name", name).timer());
        collectUntil("the observed primitive", () -> primitive.get() == null);
        eventually("its meters removed", () -> describe(registry, name).isEmpty());
        assertNull(registry.find(SemaphoreMetrics.HOLD).tag("name", name).timer());
    }

    private WeakReference<Inspectable> bindObserved(String name) {
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        db.acquire().join().close();
        assertEquals(1, holdTimer(name).count());
        return new WeakReference<>(db.asKotlin());
    }
}
