package dev.semaphore.micrometer;

import static dev.semaphore.micrometer.Meters.afterWait;
import static dev.semaphore.micrometer.Meters.collectUntil;
import static dev.semaphore.micrometer.Meters.describe;
import static dev.semaphore.micrometer.Meters.eventually;
import static dev.semaphore.micrometer.Meters.gauge;
import static dev.semaphore.micrometer.Meters.requests;
import static dev.semaphore.micrometer.Meters.uniqueName;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.Inspectable;
import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.AsyncPrioritySemaphore;
import dev.semaphore.async.AsyncReadWriteLock;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The snapshot meters of one primitive, read back from Micrometer's {@link SimpleMeterRegistry} after real
 * acquisitions, waits, timeouts, cancellations and a close, made as a Java caller makes them.
 */
class SemaphoreMetricsTest {
    private final MeterRegistry registry = new SimpleMeterRegistry();

    /**
     * The snapshot meters, as {@link Meters#describe} writes them (tags sorted by key, as Micrometer keeps
     * them), for a primitive of {@code kind} named {@code name}, with extra tags ("region=eu"...).
     */
    static List<String> snapshotMeters(String kind, String name, String... extraTags) {
        List<String> expected = new ArrayList<>();
        for (String meter : List.of("GAUGE semaphore.permits.available", "GAUGE semaphore.permits.held",
                "GAUGE semaphore.permits.limit", "GAUGE semaphore.requests.waiting",
                "COUNTER semaphore.requests.acquired.after.wait")) {
            expected.add(meter + " " + tags(kind, name, extraTags));
        }
        for (String outcome : List.of("acquired", "cancelled", "failed", "refused", "timed_out")) {
            expected.add("COUNTER semaphore.requests " + tags(kind, name, extraTags, "outcome=" + outcome));
        }
        expected.sort(null);
        return expected;
    }

    static String tags(String kind, String name, String[] extraTags, String... more) {
        List<String> tags = new ArrayList<>(List.of("kind=" + kind, "name=" + name));
        tags.addAll(List.of(extraTags));
        tags.addAll(List.of(more));
        tags.sort(null);
        return "{" + String.join(", ", tags) + "}";
    }

    @Test
    void theMetersHaveTheDocumentedNamesTypesAndTags() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        assertEquals(EventMetersTest.allMeters("Semaphore", name), describe(registry, name));
        assertEquals(19, registry.getMeters().size(), "no meter beyond the documented ones");
    }

    @Test
    void gaugesFollowHoldsAndTheLine() throws Exception {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(3, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
        assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
        assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.REQUESTS_WAITING, name));

        Permit two = db.acquireBlocking(2);
        CompletableFuture<Permit> wantsTwo = db.acquire(2);
        CompletableFuture<Permit> wantsOne = db.acquire(1); // behind the first in line: no barging
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.REQUESTS_WAITING, name));

        two.close();
        Permit granted = wantsTwo.join();
        Permit alsoGranted = wantsOne.join();
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.REQUESTS_WAITING, name));

        db.reducePermits(2); // a debt: available goes below zero until the holders give back
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
        assertEquals(-2.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
        granted.close();
        alsoGranted.close();
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(0.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, name));
    }

    @Test
    void countersCountEachOutcomeOfARequest() throws Exception {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);

        Permit held = db.acquire().join();                                      // acquired at once
        assertFalse(db.tryAcquire());                                           // refused
        assertFalse(db.tryAcquire(1, Duration.ZERO));                           // refused: a zero timeout is a try
        CompletableFuture<Permit> timesOut = db.acquire(Duration.ofMillis(20)); // timed out
        assertTrue(db.acquireBlocking(Duration.ofMillis(10)).isEmpty());        // timed out, a blocked thread
        CompletableFuture<Permit> cancelled = db.acquire();                     // cancelled
        CompletableFuture<Permit> waits = db.acquire();                         // acquired after waiting
        CompletionException timeout = assertThrows(CompletionException.class, timesOut::join);
        assertTrue(timeout.getCause() instanceof TimeoutException, timeout.toString());
        assertTrue(cancelled.cancel(false));
        held.close();
        Permit second = waits.join();
        CompletableFuture<Permit> failsAtClose = db.acquire();                  // failed by close
        db.close(null);
        assertThrows(CompletionException.class, failsAtClose::join);
        assertThrows(SemaphoreClosedException.class, db::tryAcquire);            // failed: made after the close
        second.close();

        eventually("the counters", () -> requests(registry, name, "timed_out") == 2.0);
        assertEquals(2.0, requests(registry, name, "acquired"));
        assertEquals(1.0, afterWait(registry, name));
        assertEquals(2.0, requests(registry, name, "refused"));
        assertEquals(2.0, requests(registry, name, "timed_out"));
        assertEquals(1.0, requests(registry, name, "cancelled"));
        assertEquals(2.0, requests(registry, name, "failed"));
    }

    @Test
    void everyKindOfPrimitiveIsTaggedWithItsKind() throws Exception {
        String lockName = uniqueName("lock");
        String rwName = uniqueName("rw");
        String jobsName = uniqueName("jobs");
        AsyncLock lock = AsyncLock.create(Diagnostics.named(lockName));
        AsyncReadWriteLock rw = AsyncReadWriteLock.create(Diagnostics.named(rwName));
        AsyncPrioritySemaphore jobs = AsyncPrioritySemaphore.create(2, null, Diagnostics.named(jobsName));
        SemaphoreMetrics.of(lock.asKotlin()).bindTo(registry);
        SemaphoreMetrics.of(rw.asKotlin()).bindTo(registry);
        SemaphoreMetrics.of(jobs.asKotlin()).bindTo(registry);
        assertEquals(EventMetersTest.allMeters("Lock", lockName), describe(registry, lockName));
        assertEquals(EventMetersTest.allMeters("ReadWriteLock", rwName), describe(registry, rwName));
        assertEquals(EventMetersTest.allMeters("PrioritySemaphore", jobsName), describe(registry, jobsName));

        try (Permit locked = lock.lockBlocking()) {
            assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, lockName));
            assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, lockName));
            assertFalse(lock.tryLock());
        }
        assertEquals(1.0, requests(registry, lockName, "refused"));

        // A read-write lock counts in its internal permits (a write hold takes them all): see SemaphoreSnapshot.
        double total = gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, rwName);
        try (Permit read = rw.readLockBlocking()) {
            assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_HELD, rwName));
            CompletableFuture<Permit> write = rw.writeLock();
            assertEquals(1.0, gauge(registry, SemaphoreMetrics.REQUESTS_WAITING, rwName));
            read.close();
            try (Permit w = write.join()) {
                assertEquals(total, gauge(registry, SemaphoreMetrics.PERMITS_HELD, rwName));
            }
        }
        assertEquals(1.0, afterWait(registry, rwName));

        Permit both = jobs.acquire(2).join();
        CompletableFuture<Permit> urgent = jobs.atPriority(9).acquire();
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.REQUESTS_WAITING, jobsName));
        both.close();
        urgent.join().close();
        assertEquals(2.0, requests(registry, jobsName, "acquired"));
    }

    @Test
    void extraTagsAreAddedToEveryMeter() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics.of(db.asKotlin()).tag("region", "eu").tags(Tags.of("pool", "main")).snapshotOnly().bindTo(registry);
        assertEquals(snapshotMeters("Semaphore", name, "pool=main", "region=eu"), describe(registry, name));
    }

    @Test
    void theTagsThisModuleSetsCannotBeReplaced() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics metrics = SemaphoreMetrics.of(db.asKotlin());
        for (String key : List.of("name", "kind", "outcome")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> metrics.tag(key, "x"));
            assertEquals("the tag \"" + key + "\" is set by semaphore-micrometer itself (name, kind and outcome are); "
                    + "choose another key for \"x\"", e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> metrics.tags(Tags.of(key, "x")));
            assertThrows(IllegalArgumentException.class, () -> SemaphoreMetrics.allNamed().tag(key, "x"));
        }
    }

    @Test
    void anUnnamedPrimitiveNeedsANameFromTheCaller() {
        AsyncSemaphore unnamed = AsyncSemaphore.create(2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SemaphoreMetrics.of(unnamed.asKotlin()));
        assertEquals("cannot bind the metrics of an unnamed Semaphore: its series could not be told apart from "
                + "another's. Name it at creation (Java: Diagnostics.named(\"db\"), Kotlin: Diagnostics(name = \"db\")) "
                + "or give the name tag here: SemaphoreMetrics.of(primitive, \"db\")", e.getMessage());

        String name = uniqueName("given");
        SemaphoreMetrics.of(unnamed.asKotlin(), name).bindTo(registry);
        assertEquals(EventMetersTest.allMeters("Semaphore", name), describe(registry, name));
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));

        assertThrows(IllegalArgumentException.class, () -> SemaphoreMetrics.of(unnamed.asKotlin(), " "));
        assertThrows(IllegalArgumentException.class, () -> SemaphoreMetrics.of(unnamed.asKotlin(), "x".repeat(201)));
    }

    @Test
    void aNamedPrimitiveKeepsItsName() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SemaphoreMetrics.of(db.asKotlin(), "orders"));
        assertEquals("this Semaphore is named \"" + name + "\", and its metrics carry that name (as its snapshot and "
                + "dump do): call SemaphoreMetrics.of(primitive), or name it \"orders\" at creation", e.getMessage());
        SemaphoreMetrics.of(db.asKotlin(), name).bindTo(registry); // the same name is accepted
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
    }

    @Test
    void bindingTheSamePrimitiveAgainSharesItsMetersUntilTheLastBinderCloses() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(1, Diagnostics.named(name));
        SemaphoreMetrics first = SemaphoreMetrics.of(db.asKotlin());
        SemaphoreMetrics second = SemaphoreMetrics.of(db.asKotlin());
        first.bindTo(registry);
        first.bindTo(registry);
        second.bindTo(registry);
        assertEquals(19, describe(registry, name).size());

        first.close();
        assertEquals(19, describe(registry, name).size(), "the second binder still has them");
        first.close(); // twice: nothing
        second.close();
        assertEquals(List.of(), describe(registry, name));

        first.bindTo(registry); // a closed binder may bind again
        assertEquals(19, describe(registry, name).size());
        first.close();
        assertEquals(List.of(), describe(registry, name));
    }

    @Test
    void oneBinderCanFeedSeveralRegistries() {
        String name = uniqueName("db");
        AsyncSemaphore db = AsyncSemaphore.create(4, Diagnostics.named(name));
        MeterRegistry other = new SimpleMeterRegistry();
        SemaphoreMetrics metrics = SemaphoreMetrics.of(db.asKotlin());
        metrics.bindTo(registry);
        metrics.bindTo(other);
        assertTrue(db.tryAcquire());
        assertEquals(3.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        assertEquals(3.0, gauge(other, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        metrics.close();
        assertEquals(List.of(), describe(registry, name));
        assertEquals(List.of(), describe(other, name));
    }

    @Test
    void anotherLivePrimitiveWithTheSameNameIsRefused() {
        String name = uniqueName("db");
        AsyncSemaphore first = AsyncSemaphore.create(1, Diagnostics.named(name));
        AsyncSemaphore second = AsyncSemaphore.create(5, Diagnostics.named(name));
        SemaphoreMetrics.of(first.asKotlin()).bindTo(registry);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> SemaphoreMetrics.of(second.asKotlin()).bindTo(registry));
        assertEquals("another live Semaphore named \"" + name + "\" is bound to this registry (SimpleMeterRegistry) "
                + "with the same tags [tag(kind=Semaphore),tag(name=" + name + ")]: its meters would show that one's "
                + "figures. Give the primitives distinct names, or tell them apart with a tag of your own: "
                + "SemaphoreMetrics.of(primitive).tag(key, value)", e.getMessage());
        assertEquals(1.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name), "the first one's meters stay");

        SemaphoreMetrics.of(second.asKotlin()).tag("instance", "2").bindTo(registry); // told apart by a tag
        assertEquals(5.0, registry.get(SemaphoreMetrics.PERMITS_LIMIT).tags("name", name, "instance", "2").gauge().value());
        SemaphoreMetrics.of(second.asKotlin()).bindTo(new SimpleMeterRegistry()); // another registry: no clash
    }

    @Test
    void theMetersDoNotKeepAPrimitiveAliveAndLeaveTheRegistryAfterIt() throws Exception {
        String name = uniqueName("dropped");
        SemaphoreMetrics metrics = SemaphoreMetrics.of(AsyncSemaphore.create(2, Diagnostics.named(name)).asKotlin());
        WeakReference<Inspectable> primitive = bindAndForget(metrics, name);
        assertEquals(19, describe(registry, name).size());

        collectUntil("the bound primitive", () -> primitive.get() == null);
        eventually("its meters removed", () -> describe(registry, name).isEmpty());
        assertNull(registry.find(SemaphoreMetrics.PERMITS_LIMIT).tag("name", name).gauge());
        metrics.bindTo(registry); // the binder (kept here) held it weakly: binding now binds nothing
        assertEquals(List.of(), describe(registry, name));
        metrics.close();
    }

    /** Binds and reads once; returns only a weak reference, so the caller's frame holds nothing. */
    private WeakReference<Inspectable> bindAndForget(SemaphoreMetrics metrics, String name) {
        metrics.bindTo(registry);
        Inspectable bound = null;
        for (Inspectable p : Diagnostics.namedPrimitives()) {
            if (name.equals(p.getName())) bound = p;
        }
        assertNotNull(bound);
        assertEquals(2.0, gauge(registry, SemaphoreMetrics.PERMITS_AVAILABLE, name));
        return new WeakReference<>(bound);
    }

    @Test
    void aNewPrimitiveWithTheNameOfACollectedOneCanBeBound() throws Exception {
        String name = uniqueName("reborn");
        WeakReference<Inspectable> old = bindAndForget(
                SemaphoreMetrics.of(AsyncSemaphore.create(2, Diagnostics.named(name)).asKotlin()), name);
        collectUntil("the first primitive", () -> old.get() == null);
        AsyncSemaphore reborn = AsyncSemaphore.create(7, Diagnostics.named(name));
        SemaphoreMetrics.of(reborn.asKotlin()).bindTo(registry); // even before the Cleaner has run
        assertEquals(7.0, gauge(registry, SemaphoreMetrics.PERMITS_LIMIT, name));
        assertEquals(19, describe(registry, name).size());
    }

    @Test
    void aRegistryTheApplicationDropsIsCollectedWhileItsPrimitivesLive() throws Exception {
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named(uniqueName("outlives-its-registry")));
        WeakReference<MeterRegistry> dropped = bindToThrowawayRegistry(db);
        collectUntil("the registry the application dropped", () -> dropped.get() == null);
        try (Permit p = db.acquireBlocking()) { // the primitive lives on, its listener's meters gone with the registry
            assertEquals(1, db.availablePermits());
        }
    }

    private static WeakReference<MeterRegistry> bindToThrowawayRegistry(AsyncSemaphore db) {
        MeterRegistry throwaway = new SimpleMeterRegistry();
        SemaphoreMetrics.of(db.asKotlin()).bindTo(throwaway); // with the listener's meters (the default)
        return new WeakReference<>(throwaway);
    }
}
