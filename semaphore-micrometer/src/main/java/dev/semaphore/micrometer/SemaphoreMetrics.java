package dev.semaphore.micrometer;

import dev.semaphore.Diagnostics;
import dev.semaphore.Inspectable;
import dev.semaphore.async.AsyncInspectable;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;

/**
 * Binds one primitive's meters to a {@link MeterRegistry}: any {@link Inspectable} of the library (a
 * {@code Semaphore}, {@code PrioritySemaphore}, {@code Lock} or {@code ReadWriteLock}; from Java,
 * {@code asyncSemaphore.asKotlin()}).
 *
 * <pre>{@code
 * AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named("db"));
 * SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);
 * SemaphoreMetrics.of(db.asKotlin()).tag("region", "eu").bindTo(registry);   // an extra tag on every meter
 * }</pre>
 *
 * <p>The meters, their tags and the names Prometheus shows are listed in {@code docs/diagnostics.md}
 * ("Metrics (Micrometer)"); their names are the constants of this class. Every meter is tagged with
 * the primitive's {@code kind} ({@code Semaphore}, {@code PrioritySemaphore}, {@code Lock},
 * {@code ReadWriteLock}) and {@code name}, and the extra tags given here; never with a holder, owner or
 * thread.
 *
 * <p><b>A name is required</b>: the primitive's own ({@link Diagnostics#named(String)}), or one given
 * here for a primitive created without one ({@link #of(Inspectable, String)}). An unnamed primitive's
 * series could not be told apart from another's.
 *
 * <p><b>Lifetime.</b> The meters hold the primitive weakly, as Micrometer's gauges do, and so does this
 * binder: a primitive the application drops is garbage-collected, and its meters are then removed from
 * the registry. {@link #close()} removes them earlier. Binding the same primitive to the same registry
 * again with the same tags shares the meters already there (and one listener: nothing is counted twice),
 * and they stay until the last binder that asked for them closes; a <em>different</em> live primitive with
 * the same kind, name and tags is refused ({@link IllegalStateException}), since its series would mix with
 * the first one's.
 *
 * <p><b>Cost.</b> Each gauge and counter takes one snapshot of the primitive when the registry reads it (a
 * scrape, a publication): one pass through the primitive's internal lock, nothing on its acquire and
 * release paths. The timers and the gauges of holds and waits in progress need a listener on the
 * primitive, which makes it <em>observed</em>: every call then takes its internal lock (see
 * {@code SemaphoreListener}). For a primitive on a hot path, {@link #snapshotOnly()} binds the gauges and
 * counters alone and adds no listener. When several binders bind one primitive, those that bind it by
 * itself (this class) decide whether it has a listener, not {@link #allNamed()}.
 *
 * <p>Instances are immutable until bound: {@link #tag}, {@link #tags} return a new binder. A binder may be
 * bound to several registries; {@link #close()} unbinds it from all of them. Thread-safe.
 */
public final class SemaphoreMetrics implements MeterBinder, AutoCloseable {
    /** Gauge: permits that exist, held plus available (the snapshot's {@code totalPermits}). */
    public static final String PERMITS_LIMIT = "semaphore.permits.limit";
    /** Gauge: permits free now; below zero while a reduction's debt is repaid. */
    public static final String PERMITS_AVAILABLE = "semaphore.permits.available";
    /** Gauge: permits held now. */
    public static final String PERMITS_HELD = "semaphore.permits.held";
    /** Gauge: requests waiting in line now. */
    public static final String REQUESTS_WAITING = "semaphore.requests.waiting";
    /**
     * Function counter, tagged {@code outcome}: requests {@code acquired}, {@code refused} (a try form without
     * a timeout took nothing), {@code timed_out}, {@code cancelled}, {@code failed} (by close); every request
     * ends in exactly one of them.
     */
    public static final String REQUESTS = "semaphore.requests";
    /** Function counter: requests granted after waiting in line (part of {@code outcome=acquired}). */
    public static final String REQUESTS_ACQUIRED_AFTER_WAIT = "semaphore.requests.acquired.after.wait";


    /**
     * Timer (listener), tagged {@code outcome}: how long requests waited in line, {@code acquired} (0 for those
     * granted at once), {@code timed_out}, {@code cancelled}.
     */
    public static final String ACQUIRE = "semaphore.acquire";
    /** Time gauge (listener): how long the oldest request in line has waited; 0 if none. */
    public static final String ACQUIRE_OLDEST = "semaphore.acquire.oldest";
    /** Timer (listener): how long holds lasted, one sample per release. */
    public static final String HOLD = "semaphore.hold";
    /** Gauge (listener): holds alive now. */
    public static final String HOLD_ACTIVE = "semaphore.hold.active";
    /** Time gauge (listener): how long the oldest hold alive has lasted; 0 if none. */
    public static final String HOLD_OLDEST = "semaphore.hold.oldest";
    /** Counter (listener): holds that outlasted the primitive's long-hold threshold. */
    public static final String HOLD_LONG = "semaphore.hold.long";
    /** Counter (listener): deadlocks found with the primitive in their cycle (a Lock or ReadWriteLock). */
    public static final String DEADLOCKS = "semaphore.deadlocks";

    /** Tag key: the primitive's name. */
    public static final String TAG_NAME = "name";
    /** Tag key: the primitive's kind: {@code Semaphore}, {@code PrioritySemaphore}, {@code Lock}, {@code ReadWriteLock}. */
    public static final String TAG_KIND = "kind";
    /** Tag key: how a request ended ({@link #REQUESTS}). */
    public static final String TAG_OUTCOME = "outcome";

    private final WeakReference<Inspectable> primitive;
    private final String name;
    private final Tags extraTags;
    private final boolean withEvents;
    /** Guarded by this. */
    private final Set<Binding> bindings = Collections.newSetFromMap(new IdentityHashMap<>());

    private SemaphoreMetrics(Inspectable primitive, String name, Tags extraTags, boolean withEvents) {
        this.primitive = new WeakReference<>(primitive);
        this.name = name;
        this.extraTags = extraTags;
        this.withEvents = withEvents;
    }

    /**
     * A binder for {@code primitive}, tagged with its name.
     *
     * @throws IllegalArgumentException if the primitive has no name; name it at creation
     *     ({@code Diagnostics.named("db")}, Kotlin {@code Diagnostics(name = "db")}) or give one here with
     *     {@link #of(Inspectable, String)}
     */
    public static SemaphoreMetrics of(Inspectable primitive) {
        Objects.requireNonNull(primitive, "primitive");
        String own = primitive.getName();
        if (own == null) {
            throw new IllegalArgumentException("cannot bind the metrics of an unnamed " + primitive.snapshot().kind()
                    + ": its series could not be told apart from another's. Name it at creation (Java: "
                    + "Diagnostics.named(\"db\"), Kotlin: Diagnostics(name = \"db\")) or give the name tag here: "
                    + "SemaphoreMetrics.of(primitive, \"db\")");
        }
        return new SemaphoreMetrics(primitive, own, Tags.empty(), true);
    }

    /**
     * A binder for a Java view ({@code AsyncSemaphore}, {@code AsyncLock}, {@code AsyncPrioritySemaphore},
     * {@code AsyncReadWriteLock}), tagged with its name: {@code SemaphoreMetrics.of(pool).bindTo(registry)}. The same
     * as {@link #of(Inspectable)} of {@code primitive.asKotlin()}.
     *
     * @throws IllegalArgumentException if the primitive has no name
     */
    @SuppressWarnings("exports") // dev.semaphore.async is optional (requires static): for callers that have it
    public static SemaphoreMetrics of(AsyncInspectable primitive) {
        return of(Objects.requireNonNull(primitive, "primitive").asKotlin());
    }

    /**
     * A binder for a Java view tagged {@code name=}{@code name}: {@link #of(Inspectable, String)} of
     * {@code primitive.asKotlin()}.
     *
     * @throws IllegalArgumentException as {@link #of(Inspectable, String)}
     */
    @SuppressWarnings("exports") // dev.semaphore.async is optional (requires static): for callers that have it
    public static SemaphoreMetrics of(AsyncInspectable primitive, String name) {
        return of(Objects.requireNonNull(primitive, "primitive").asKotlin(), name);
    }

    /**
     * A binder for {@code primitive} tagged {@code name=}{@code name}: for a primitive created without a name. A
     * primitive that has a name keeps it: {@code name} must then be the same.
     *
     * @throws IllegalArgumentException if {@code name} is blank or longer than {@link Diagnostics#MAX_NAME}, or
     *     the primitive is named otherwise
     */
    public static SemaphoreMetrics of(Inspectable primitive, String name) {
        Objects.requireNonNull(primitive, "primitive");
        Objects.requireNonNull(name, "name");
        if (name.isBlank() || name.length() > Diagnostics.MAX_NAME) {
            throw new IllegalArgumentException("a name must be 1 to " + Diagnostics.MAX_NAME
                    + " characters and not blank, was \"" + name + "\"");
        }
        String own = primitive.getName();
        if (own != null && !own.equals(name)) {
            throw new IllegalArgumentException("this " + primitive.snapshot().kind() + " is named \"" + own
                    + "\", and its metrics carry that name (as its snapshot and dump do): call "
                    + "SemaphoreMetrics.of(primitive), or name it \"" + name + "\" at creation");
        }
        return new SemaphoreMetrics(primitive, name, Tags.empty(), true);
    }

    /**
     * A binder for every named primitive alive when it is bound, and for those created later at each
     * {@link NamedSemaphoreMetrics#refresh()}: see {@link NamedSemaphoreMetrics}.
     */
    public static NamedSemaphoreMetrics allNamed() {
        return new NamedSemaphoreMetrics(Tags.empty(), true);
    }

    /**
     * A binder like this one whose meters also carry the tag {@code key}={@code value}.
     *
     * @throws IllegalArgumentException if {@code key} is one of the tags this module sets: {@code name},
     *     {@code kind}, {@code outcome}
     */
    public SemaphoreMetrics tag(String key, String value) {
        return tags(Tags.of(key, value));
    }

    /**
     * A binder like this one whose meters also carry {@code tags} ({@code Tags.of("region", "eu", "pool", "main")}).
     *
     * @throws IllegalArgumentException if a key is one of the tags this module sets: {@code name},
     *     {@code kind}, {@code outcome}
     */
    public SemaphoreMetrics tags(Iterable<? extends Tag> tags) {
        Inspectable p = primitive.get();
        if (p == null) throw new IllegalStateException("the primitive was garbage-collected");
        return new SemaphoreMetrics(p, name, extraTags.and(checkExtraTags(tags)), withEvents);
    }

    /**
     * A binder like this one with the snapshot meters only (gauges and function counters): it adds no
     * listener, so the primitive stays unobserved and its calls keep their lock-free paths. The timers and
     * the gauges of holds and waits in progress are left out.
     */
    public SemaphoreMetrics snapshotOnly() {
        Inspectable p = primitive.get();
        if (p == null) throw new IllegalStateException("the primitive was garbage-collected");
        return new SemaphoreMetrics(p, name, extraTags, false);
    }

    /**
     * Registers the primitive's meters in {@code registry}. Binding again to the same registry does nothing more;
     * a primitive already collected binds nothing.
     *
     * @throws IllegalStateException if another live primitive of the same kind and name is bound to
     *     {@code registry} with the same tags
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        Inspectable p = primitive.get();
        if (p == null) return;
        Binding binding = Binding.bind(registry, p, Binding.tagsOf(p, name, extraTags), this, new Binding.Want(true, withEvents));
        synchronized (this) {
            bindings.add(binding);
        }
    }

    /**
     * Removes this binder's meters from every registry it was bound to (those that another binder of the
     * same primitive also asked for stay until that one closes too). Closing twice does nothing.
     */
    @Override
    public void close() {
        List<Binding> toRelease;
        synchronized (this) {
            toRelease = new ArrayList<>(bindings);
            bindings.clear();
        }
        for (Binding binding : toRelease) binding.release(this);
    }

    @Override
    public String toString() {
        return "SemaphoreMetrics(name=\"" + name + "\"" + (extraTags.stream().findAny().isPresent() ? ", tags=" + extraTags : "")
                + ")";
    }

    /** The extra tags, checked: none may replace the tags this module sets. */
    static Tags checkExtraTags(Iterable<? extends Tag> tags) {
        Objects.requireNonNull(tags, "tags");
        Tags checked = Tags.of(tags);
        for (Tag tag : checked) {
            String key = tag.getKey();
            if (key.equals(TAG_NAME) || key.equals(TAG_KIND) || key.equals(TAG_OUTCOME)) {
                throw new IllegalArgumentException("the tag \"" + key + "\" is set by semaphore-micrometer itself "
                        + "(name, kind and outcome are); choose another key for \"" + tag.getValue() + "\"");
            }
        }
        return checked;
    }
}
