package dev.semaphore.micrometer;

import static dev.semaphore.micrometer.Meters.collectUntil;
import static dev.semaphore.micrometer.Meters.describe;
import static dev.semaphore.micrometer.Meters.eventually;
import static dev.semaphore.micrometer.Meters.gauge;
import static dev.semaphore.micrometer.Meters.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.Inspectable;
import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SemaphoreMetrics#allNamed()}: every named primitive alive, those created later at a refresh, on a
 * schedule of its own, sharing meters with the per-primitive binder. Other tests' named primitives may be
 * alive in this JVM too (the list is process-wide), so each test looks at the names it made.
 */
class NamedSemaphoreMetricsTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void bindsTheNamedPrimitivesAliveAndThoseCreatedBeforeARefresh() {
        String dbName = uniqueName("db");
        String lockName = uniqueName("lock");
        AsyncSemaphore db = AsyncSemaphore.create(4, Diagnostics.named(dbName));
        AsyncLock lock = AsyncLock.create(Diagnostics.named(lockName));
        AsyncSemaphore unnamed = AsyncSemaphore.create(4);
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed()) {
            all.bindTo(registry);
            assertEquals(EventMetersTest.allMeters("Semaphore", dbName), describe(registry, dbName));
            assertEquals(EventMetersTest.allMeters("Lock", lockName), describe(registry, lockName));
            assertTrue(unnamed.tryAcquire()); // an unnamed primitive is not listed, so not bound: nothing to see

            String laterName = uniqueName("later");
            AsyncSemaphore later = AsyncSemaphore.create(2, Diagnostics.named(laterName));
            assertEquals(List.of(), describe(registry, laterName), "created after the look");
            all.refresh();
            assertEquals(EventMetersTest.allMeters("Semaphore", laterName), describe(registry, laterName));
            assertEquals(2.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, laterName));

            String laterStill = uniqueName("later");
            AsyncSemaphore another = AsyncSemaphore.create(3, Diagnostics.named(laterStill));
            all.bindTo(registry); // binding again is a refresh for that registry
            assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, laterStill));
            assertEquals(EventMetersTest.allMeters("Semaphore", dbName), describe(registry, dbName), "not bound twice");
            assertTrue(later.tryAcquire() && another.tryAcquire() && db.tryAcquire() && lock.tryLock());
        }
        assertEquals(List.of(), describe(registry, dbName), "close removes them");
        assertEquals(List.of(), describe(registry, lockName));
    }

    @Test
    void refreshesOnItsOwnSchedule() throws Exception {
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed().refreshEvery(Duration.ofMillis(20))) {
            all.bindTo(registry);
            String name = uniqueName("scheduled");
            AsyncSemaphore created = AsyncSemaphore.create(5, Diagnostics.named(name));
            eventually("the new primitive bound", () -> !describe(registry, name).isEmpty());
            assertEquals(5.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
            assertTrue(created.tryAcquire());
            assertEquals(4.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
            assertThrows(IllegalStateException.class, () -> all.refreshEvery(Duration.ofSeconds(1)));
        }
        assertTrue(Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("semaphore-micrometer-refresh"))
                .allMatch(t -> !t.isAlive() || t.getState() == Thread.State.TERMINATED || waitForEnd(t)),
                "the refresh thread ends at close");
    }

    private static boolean waitForEnd(Thread t) {
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !t.isAlive();
    }

    @Test
    void aSecondLivePrimitiveWithTheSameNameIsSkippedNotFatal() {
        String name = uniqueName("twin");
        AsyncSemaphore first = AsyncSemaphore.create(1, Diagnostics.named(name));
        AsyncSemaphore second = AsyncSemaphore.create(9, Diagnostics.named(name));
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed()) {
            all.bindTo(registry);
            all.refresh();
            assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name), "the first one created is bound");
            assertEquals(EventMetersTest.allMeters("Semaphore", name), describe(registry, name));
            assertTrue(first.tryAcquire() && second.tryAcquire());
        }
    }

    @Test
    void sharesMetersWithThePerPrimitiveBinder() {
        String name = uniqueName("shared");
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        SemaphoreMetrics one = SemaphoreMetrics.of(db.asKotlin());
        one.bindTo(registry);
        NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed();
        all.bindTo(registry);
        db.acquire().join().close();
        assertEquals(1, registry.get(SemaphoreMetrics.ACQUIRE).tag("name", name).tag("outcome", "acquired").timer().count(),
                "one listener: the wait is recorded once");
        all.close();
        assertEquals(EventMetersTest.allMeters("Semaphore", name), describe(registry, name), "still bound by the other");
        one.close();
        assertEquals(List.of(), describe(registry, name));
        assertThrows(IllegalStateException.class, () -> all.bindTo(registry), "a closed binder binds nothing more");
    }

    @Test
    void snapshotOnlyLeavesThePrimitivesUnobserved() {
        String name = uniqueName("cheap");
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed().snapshotOnly().tag("app", "shop")) {
            all.bindTo(registry);
            assertEquals(SemaphoreMetricsTest.snapshotMeters("Semaphore", name, "app=shop"), describe(registry, name));
            try (Permit p = db.acquire().join()) {
                assertEquals(List.of(), db.asKotlin().holders());
                assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
            }
        }
    }

    @Test
    void aPrimitiveBoundSnapshotOnlyByItselfStaysUnobservedUnderAllNamed() {
        String before = uniqueName("hot");
        String after = uniqueName("hot");
        AsyncSemaphore boundBefore = AsyncSemaphore.create(2, Diagnostics.named(before));
        AsyncSemaphore boundAfter = AsyncSemaphore.create(2, Diagnostics.named(after));
        SemaphoreMetrics.of(boundBefore.asKotlin()).snapshotOnly().bindTo(registry);
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed()) {
            all.bindTo(registry);
            assertEquals(SemaphoreMetricsTest.snapshotMeters("Semaphore", before), describe(registry, before));
            assertEquals(EventMetersTest.allMeters("Semaphore", after), describe(registry, after));
            SemaphoreMetrics.of(boundAfter.asKotlin()).snapshotOnly().bindTo(registry); // the binder by itself decides
            assertEquals(SemaphoreMetricsTest.snapshotMeters("Semaphore", after), describe(registry, after));
            try (Permit p = boundAfter.acquire().join(); Permit q = boundBefore.acquire().join()) {
                assertEquals(List.of(), boundAfter.asKotlin().holders());
                assertEquals(List.of(), boundBefore.asKotlin().holders());
            }
        }
    }

    @Test
    void aCollectedPrimitiveLeavesTheRegistry() throws Exception {
        String name = uniqueName("gone");
        try (NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed()) {
            WeakReference<Inspectable> primitive = createAndBind(all, name);
            collectUntil("the primitive", () -> primitive.get() == null);
            eventually("its meters removed", () -> describe(registry, name).isEmpty());
            all.refresh();
            assertEquals(List.of(), describe(registry, name));
        }
    }

    private WeakReference<Inspectable> createAndBind(NamedSemaphoreMetrics all, String name) {
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(name));
        all.bindTo(registry);
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
        return new WeakReference<>(db.asKotlin());
    }

    @Test
    void badArgumentsAreRefused() {
        NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed();
        assertEquals("the period must be positive, was PT0S",
                assertThrows(IllegalArgumentException.class, () -> all.refreshEvery(Duration.ZERO)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> all.refreshEvery(Duration.ofSeconds(-1)));
        all.close();
        assertThrows(IllegalStateException.class, () -> all.refreshEvery(Duration.ofSeconds(1)));
        all.refresh(); // closed: does nothing
    }
}
