package dev.semaphore.micrometer;

import dev.semaphore.Diagnostics;
import dev.semaphore.Inspectable;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Binds the meters of every named primitive ({@link Diagnostics#namedPrimitives()}) to the registries it
 * is bound to: those alive at {@link #bindTo}, and those created later at each {@link #refresh()}.
 * Made by {@link SemaphoreMetrics#allNamed()}.
 *
 * <pre>{@code
 * NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed().refreshEvery(Duration.ofSeconds(30));
 * all.bindTo(registry);          // every named primitive alive now
 * // ... primitives created later are bound within 30 s; or call all.refresh() after creating them
 * all.close();                   // stops refreshing, removes the meters it bound
 * }</pre>
 *
 * <p><b>Primitives created later.</b> The core has no hook at creation, so this binder looks again:
 * {@link #refresh()} binds the named primitives that are new since the last look, to every registry this
 * binder is bound to; {@link #bindTo} does the same for its registry, so calling it again is also a
 * refresh. {@link #refreshEvery(Duration)} refreshes on a daemon thread of its own until {@link #close()};
 * or call {@link #refresh()} from a scheduler you have, or after creating a primitive. A look costs one
 * snapshot per named primitive (for its kind) and a map look-up for those bound already.
 *
 * <p>Each primitive gets the meters {@link SemaphoreMetrics#of(Inspectable)} gives it, with the same
 * sharing and lifetime (held weakly; removed when it is collected), and a listener unless this binder is
 * {@link #snapshotOnly()}, or the primitive is bound by a {@link SemaphoreMetrics} of its own, which then
 * decides: {@code SemaphoreMetrics.of(hot).snapshotOnly()} keeps {@code hot} unobserved under this binder. A primitive whose kind, name and tags
 * are those of another live primitive already bound to the registry is skipped, with one warning (logger
 * {@code dev.semaphore.micrometer}): names need not be unique in the core, but series must be.
 *
 * <p>Thread-safe.
 */
public final class NamedSemaphoreMetrics implements MeterBinder, AutoCloseable {
    private static final System.Logger LOGGER = System.getLogger("dev.semaphore.micrometer");

    private final Tags extraTags;
    private final boolean withEvents;
    /** Guarded by this. */
    private final Set<MeterRegistry> registries = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Guarded by this. */
    private final Set<Binding> bindings = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The primitives skipped with a warning already (weakly). Guarded by this. */
    private final Set<Inspectable> warned = Collections.newSetFromMap(new WeakHashMap<>());
    /** Guarded by this. */
    private @Nullable ScheduledExecutorService refresher;
    /** Guarded by this. */
    private boolean closed;

    NamedSemaphoreMetrics(Tags extraTags, boolean withEvents) {
        this.extraTags = extraTags;
        this.withEvents = withEvents;
    }

    /** A binder like this one (not yet bound) whose meters also carry {@code key}={@code value}. */
    public NamedSemaphoreMetrics tag(String key, String value) {
        return tags(Tags.of(key, value));
    }

    /** A binder like this one (not yet bound) whose meters also carry {@code tags}. */
    public NamedSemaphoreMetrics tags(Iterable<? extends Tag> tags) {
        return new NamedSemaphoreMetrics(extraTags.and(SemaphoreMetrics.checkExtraTags(tags)), withEvents);
    }

    /**
     * A binder like this one (not yet bound) with the snapshot meters only: it adds no listener, so the
     * primitives stay unobserved (see {@link SemaphoreMetrics#snapshotOnly()}).
     */
    public NamedSemaphoreMetrics snapshotOnly() {
        return new NamedSemaphoreMetrics(extraTags, false);
    }

    /**
     * Binds every named primitive alive now to {@code registry}, and those created later at each refresh. Calling
     * it again binds those created since.
     *
     * @throws IllegalStateException if this binder is closed
     */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        if (closed) throw new IllegalStateException("this NamedSemaphoreMetrics is closed");
        registries.add(registry);
        scan(registry);
    }

    /** Binds the named primitives created since the last look to every registry this binder is bound to. */
    public synchronized void refresh() {
        if (closed) return;
        bindings.removeIf(Binding::isRemoved);
        for (MeterRegistry registry : registries) scan(registry);
    }

    /**
     * Refreshes every {@code period} on a daemon thread of this binder's ("semaphore-micrometer-refresh"),
     * until {@link #close()}. Returns this binder.
     *
     * @throws IllegalArgumentException if {@code period} is not positive
     * @throws IllegalStateException if it refreshes already, or is closed
     */
    public synchronized NamedSemaphoreMetrics refreshEvery(Duration period) {
        Objects.requireNonNull(period, "period");
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("the period must be positive, was " + period);
        }
        if (closed) throw new IllegalStateException("this NamedSemaphoreMetrics is closed");
        if (refresher != null) throw new IllegalStateException("this NamedSemaphoreMetrics refreshes already");
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "semaphore-micrometer-refresh");
            thread.setDaemon(true);
            return thread;
        });
        long nanos = period.toNanos();
        executor.scheduleWithFixedDelay(this::refreshLogged, nanos, nanos, TimeUnit.NANOSECONDS);
        refresher = executor;
        return this;
    }

    /**
     * Stops refreshing and removes the meters this binder bound (those another binder also asked for stay
     * until it closes too). Closing twice does nothing; a closed binder binds nothing more.
     */
    @Override
    public void close() {
        List<Binding> toRelease;
        ScheduledExecutorService executor;
        synchronized (this) {
            closed = true;
            executor = refresher;
            refresher = null;
            toRelease = new ArrayList<>(bindings);
            bindings.clear();
            registries.clear();
        }
        if (executor != null) executor.shutdownNow();
        for (Binding binding : toRelease) binding.release(this);
    }

    @Override
    public String toString() {
        return "NamedSemaphoreMetrics" + (extraTags.stream().findAny().isPresent() ? "(tags=" + extraTags + ")" : "");
    }

    private void refreshLogged() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOGGER.log(Level.WARNING, "semaphore-micrometer: a refresh of the named primitives' meters failed", e);
        }
    }

    /** Guarded by this. */
    private void scan(MeterRegistry registry) {
        for (Inspectable primitive : Diagnostics.namedPrimitives()) {
            String name = primitive.getName();
            if (name == null) continue; // cannot happen: the list holds named primitives only
            Binding binding;
            try {
                binding = Binding.bind(registry, primitive, Binding.tagsOf(primitive, name, extraTags), this, new Binding.Want(false, withEvents));
            } catch (IllegalStateException conflict) {
                if (warned.add(primitive)) {
                    LOGGER.log(Level.WARNING, "semaphore-micrometer: not binding " + primitive.snapshot().kind()
                            + " \"" + name + "\": " + conflict.getMessage());
                }
                continue;
            }
            bindings.add(binding);
        }
    }
}
