package dev.semaphore.micrometer;

import static dev.semaphore.micrometer.SemaphoreMetrics.PERMITS_AVAILABLE;
import static dev.semaphore.micrometer.SemaphoreMetrics.PERMITS_HELD;
import static dev.semaphore.micrometer.SemaphoreMetrics.PERMITS_LIMIT;
import static dev.semaphore.micrometer.SemaphoreMetrics.REQUESTS;
import static dev.semaphore.micrometer.SemaphoreMetrics.REQUESTS_ACQUIRED_AFTER_WAIT;
import static dev.semaphore.micrometer.SemaphoreMetrics.REQUESTS_WAITING;
import static dev.semaphore.micrometer.SemaphoreMetrics.TAG_KIND;
import static dev.semaphore.micrometer.SemaphoreMetrics.TAG_NAME;
import static dev.semaphore.micrometer.SemaphoreMetrics.TAG_OUTCOME;

import dev.semaphore.Inspectable;
import dev.semaphore.SemaphoreSnapshot;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * The meters of one primitive in one registry under one set of tags, shared by every binder that asked
 * for them (its owners), and removed from the registry when the last owner closes or when the primitive is
 * garbage-collected (a {@link Cleaner} watches it).
 *
 * <p>Nothing here holds the primitive strongly: the gauges and function counters hold it weakly (Micrometer's
 * default for both), this class through a {@link WeakReference}, and the cleanup action not at all. So a
 * primitive that the application drops is collected, and its meters leave the registry after it.
 *
 * <p>Whether the binding has the meters fed by a listener ({@link EventMeters}) follows what its owners ask for:
 * if any owner binds this primitive by itself ({@link SemaphoreMetrics}), those owners decide (events if one
 * of them wants them); otherwise the blanket owners ({@link NamedSemaphoreMetrics}) do. So a primitive bound
 * with {@code snapshotOnly()} on purpose stays unobserved under {@code allNamed()}, whichever is bound first.
 *
 * <p>One primitive per registry and tags: a second live primitive with the same kind, name and extra tags
 * cannot be bound to the same registry (its gauges would silently show the first one's figures, and its
 * events would mix with them); the binders refuse it ({@link #bind}).
 */
final class Binding {
    /** Guards {@link #BY_REGISTRY} and every binding's owners and state. */
    private static final Object LOCK = new Object();

    /**
     * The bindings alive, per registry and tags. Registries are compared by identity (none overrides equals). The
     * registry is a weak key, and nothing here holds it strongly (a binding keeps it weakly): a registry dropped by
     * the application goes, with its entry, even while primitives bound to it live.
     */
    private static final Map<MeterRegistry, Map<Tags, Binding>> BY_REGISTRY = new WeakHashMap<>();

    /** One daemon thread for the library, started at the first binding. */
    private static final class CleanerHolder {
        static final Cleaner CLEANER = Cleaner.create(runnable -> {
            Thread thread = new Thread(runnable, "semaphore-micrometer-cleaner");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Weakly (see BY_REGISTRY): a registry that is gone has no meters left to remove. */
    private final WeakReference<MeterRegistry> registry;
    private final Tags tags;
    private final WeakReference<Inspectable> primitive;
    /**
     * The meters, by id: a meter may hold its registry (Micrometer's TimeGauge does), and the binding must not
     * (BY_REGISTRY), so it keeps what {@link MeterRegistry#remove(Meter.Id)} needs and nothing more.
     */
    private final List<Meter.Id> meters = new ArrayList<>();
    /** The listener's meters, apart: they go when no owner wants them any more. */
    private final List<Meter.Id> eventMeters = new ArrayList<>();
    /** Each owner and what it asked for. */
    private final Map<Object, Want> owners = new IdentityHashMap<>();
    /** The listener, if this binding has one; weakly: the listener's registration holds the primitive. */
    private @Nullable WeakReference<EventMeters> events;

    /** What an owner asked for: by itself (a per-primitive binder) or as one of all (allNamed), with events or not. */
    record Want(boolean explicit, boolean events) {}
    private Cleaner.@Nullable Cleanable cleanable;
    private boolean removed;

    private Binding(MeterRegistry registry, Tags tags, Inspectable primitive) {
        this.registry = new WeakReference<>(registry);
        this.tags = tags;
        this.primitive = new WeakReference<>(primitive);
    }

    /**
     * The tags of every meter of {@code primitive}: {@code kind} (from its snapshot), {@code name}, then {@code extra}.
     */
    static Tags tagsOf(Inspectable primitive, String name, Tags extra) {
        return Tags.of(TAG_KIND, primitive.snapshot().kind(), TAG_NAME, name).and(extra);
    }

    /**
     * Binds {@code primitive}'s meters to {@code registry} under {@code tags} for {@code owner}, or adds {@code owner} to the binding
     * that has them already for the same primitive; {@code want} says whether {@code owner} binds it by itself
     * and wants the listener's meters (see the class comment for how the owners' wants combine).
     *
     * @throws IllegalStateException if another live primitive is bound to {@code registry} under the same tags
     */
    static Binding bind(MeterRegistry registry, Inspectable primitive, Tags tags, Object owner, Want want) {
        synchronized (LOCK) {
            Map<Tags, Binding> bindings = BY_REGISTRY.computeIfAbsent(registry, r -> new java.util.HashMap<>());
            Binding existing = bindings.get(tags);
            if (existing != null) {
                Inspectable bound = existing.primitive.get();
                if (bound == primitive) {
                    existing.owners.put(owner, want);
                    existing.updateEvents(primitive);
                    return existing;
                }
                if (bound != null) {
                    throw new IllegalStateException("another live " + describe(tags) + " is bound to this registry ("
                            + registry.getClass().getSimpleName() + ") with the same tags " + tags
                            + ": its meters would show that one's figures. Give the primitives distinct names, or "
                            + "tell them apart with a tag of your own: SemaphoreMetrics.of(primitive).tag(key, value)");
                }
                existing.remove(); // collected, its cleanup not run yet
            }
            Binding binding = new Binding(registry, tags, primitive);
            try {
                binding.registerSnapshotMeters(registry, primitive);
                binding.owners.put(owner, want);
                binding.updateEvents(primitive);
            } catch (RuntimeException e) {
                binding.removeMeters();
                throw e;
            }
            bindings.put(tags, binding);
            binding.cleanable = CleanerHolder.CLEANER.register(primitive, new Cleanup(binding));
            return binding;
        }
    }

    /** {@code owner} no longer wants these meters; the last owner's release removes them from the registry. */
    void release(Object owner) {
        Cleaner.Cleanable toClean = null;
        synchronized (LOCK) {
            if (owners.remove(owner) == null) return;
            if (owners.isEmpty()) {
                toClean = cleanable;
            } else {
                Inspectable p = primitive.get();
                if (p != null) updateEvents(p);
            }
        }
        if (toClean != null) toClean.clean(); // runs Cleanup at most once, here, with the lock taken again inside
    }

    /** True once the meters are gone from the registry (released by every owner, or the primitive collected). */
    boolean isRemoved() {
        synchronized (LOCK) {
            return removed;
        }
    }

    /** The primitive if it is still alive. */
    @Nullable Inspectable primitive() {
        return primitive.get();
    }

    /** Removes the meters and forgets the binding; once. Callers hold LOCK, or Cleanup takes it. */
    private void remove() {
        if (removed) return;
        removed = true;
        MeterRegistry r = registry.get();
        Map<Tags, Binding> bindings = r == null ? null : BY_REGISTRY.get(r);
        if (bindings != null && bindings.get(tags) == this) {
            bindings.remove(tags);
            if (bindings.isEmpty()) BY_REGISTRY.remove(r);
        }
        removeMeters();
        owners.clear();
    }

    private void removeMeters() {
        removeEvents();
        MeterRegistry r = registry.get();
        if (r != null) for (Meter.Id id : meters) r.remove(id);
        meters.clear();
    }

    /** Adds or removes the listener and its meters, as the owners' wants say. Guarded by LOCK. */
    private void updateEvents(Inspectable primitive) {
        boolean anyExplicit = false;
        boolean explicitEvents = false;
        boolean anyEvents = false;
        for (Want want : owners.values()) {
            anyExplicit |= want.explicit();
            explicitEvents |= want.explicit() && want.events();
            anyEvents |= want.events();
        }
        boolean wanted = anyExplicit ? explicitEvents : anyEvents;
        MeterRegistry r = registry.get();
        if (wanted && events == null && r != null) {
            List<Meter> made = new ArrayList<>();
            try {
                events = new WeakReference<>(EventMeters.register(r, tags, primitive, made));
            } catch (RuntimeException e) {
                for (Meter meter : made) eventMeters.add(meter.getId());
                removeEvents();
                throw e;
            }
            for (Meter meter : made) eventMeters.add(meter.getId());
        } else if (!wanted && events != null) {
            removeEvents();
        }
    }

    private void removeEvents() {
        WeakReference<EventMeters> ref = events;
        EventMeters listener = ref == null ? null : ref.get();
        if (listener != null) listener.close();
        events = null;
        MeterRegistry r = registry.get();
        if (r != null) for (Meter.Id id : eventMeters) r.remove(id);
        eventMeters.clear();
    }

    /** What the Cleaner runs: holds the binding, never the primitive. */
    private static final class Cleanup implements Runnable {
        private final Binding binding;

        Cleanup(Binding binding) {
            this.binding = binding;
        }

        @Override
        public void run() {
            synchronized (LOCK) {
                binding.remove();
            }
        }
    }

    private void registerSnapshotMeters(MeterRegistry registry, Inspectable primitive) {
        gauge(registry, primitive, PERMITS_LIMIT, "Permits that exist: held plus available (the snapshot's totalPermits)",
                s -> s.totalPermits());
        gauge(registry, primitive, PERMITS_AVAILABLE, "Permits free now; below zero while a reduction's debt is repaid",
                s -> s.availablePermits());
        gauge(registry, primitive, PERMITS_HELD, "Permits held now: limit minus available", s -> s.heldPermits());
        gauge(registry, primitive, REQUESTS_WAITING, "Requests waiting in line now", s -> s.queuedRequests());
        counter(registry, primitive, REQUESTS, Tags.of(TAG_OUTCOME, "acquired"),
                "Requests granted, at once or after waiting", s -> s.acquired());
        counter(registry, primitive, REQUESTS, Tags.of(TAG_OUTCOME, "refused"),
                "try calls without a timeout (or with one of zero) that took nothing", s -> s.tryRefused());
        counter(registry, primitive, REQUESTS, Tags.of(TAG_OUTCOME, "timed_out"),
                "Requests that left the line because their timeout passed", s -> s.timedOut());
        counter(registry, primitive, REQUESTS, Tags.of(TAG_OUTCOME, "cancelled"),
                "Requests that left the line because their caller went away", s -> s.cancelled());
        counter(registry, primitive, REQUESTS, Tags.of(TAG_OUTCOME, "failed"),
                "Requests failed by close: those waiting at the close and those made after it", s -> s.failedByClose());
        counter(registry, primitive, REQUESTS_ACQUIRED_AFTER_WAIT, Tags.empty(),
                "Requests granted after waiting in line (part of semaphore.requests{outcome=acquired})",
                s -> s.acquiredAfterWait());
    }

    /** A gauge that reads {@code value} from a fresh snapshot; it holds the primitive weakly (Micrometer's default). */
    private void gauge(MeterRegistry registry, Inspectable primitive, String name, String description, ToDoubleFunction<SemaphoreSnapshot> value) {
        meters.add(Gauge.builder(name, primitive, p -> value.applyAsDouble(p.snapshot()))
                .tags(tags)
                .description(description)
                .register(registry).getId());
    }

    /** A counter that reads {@code value} from a fresh snapshot; it holds the primitive weakly (Micrometer's default). */
    private void counter(MeterRegistry registry, Inspectable primitive, String name, Tags outcome, String description,
                         ToDoubleFunction<SemaphoreSnapshot> value) {
        meters.add(FunctionCounter.builder(name, primitive, p -> value.applyAsDouble(p.snapshot()))
                .tags(tags.and(outcome))
                .description(description)
                .register(registry).getId());
    }

    /** "Semaphore named \"db\"", from the tags. */
    private static String describe(Tags tags) {
        String kind = "primitive";
        String name = "?";
        for (var tag : tags) {
            if (tag.getKey().equals(TAG_KIND)) kind = tag.getValue();
            if (tag.getKey().equals(TAG_NAME)) name = tag.getValue();
        }
        return kind + " named \"" + name + "\"";
    }
}
