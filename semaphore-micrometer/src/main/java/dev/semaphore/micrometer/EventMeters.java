package dev.semaphore.micrometer;

import static dev.semaphore.micrometer.SemaphoreMetrics.ACQUIRE;
import static dev.semaphore.micrometer.SemaphoreMetrics.ACQUIRE_OLDEST;
import static dev.semaphore.micrometer.SemaphoreMetrics.DEADLOCKS;
import static dev.semaphore.micrometer.SemaphoreMetrics.HOLD;
import static dev.semaphore.micrometer.SemaphoreMetrics.HOLD_ACTIVE;
import static dev.semaphore.micrometer.SemaphoreMetrics.HOLD_LONG;
import static dev.semaphore.micrometer.SemaphoreMetrics.HOLD_OLDEST;
import static dev.semaphore.micrometer.SemaphoreMetrics.TAG_OUTCOME;

import dev.semaphore.Deadlock;
import dev.semaphore.HoldInfo;
import dev.semaphore.Inspectable;
import dev.semaphore.ListenerRegistration;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.WaitInfo;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The meters fed by a listener on the primitive: timers of waits (by outcome) and holds, the long-hold
 * counter, and the gauges of holds and waits in progress, which read the hold and wait records that the
 * primitive keeps while it is observed.
 *
 * <p>The primitive holds this listener (strongly, while it is registered); this listener holds its
 * registration, and so the primitive, only through that cycle. {@link Binding} holds it weakly, so nothing
 * from outside keeps the primitive alive.
 */
final class EventMeters implements SemaphoreListener {
    private final Timer acquired;
    private final Timer timedOut;
    private final Timer cancelled;
    private final Timer hold;
    private final Counter longHolds;
    private final Counter deadlocks;
    private volatile @Nullable ListenerRegistration registration;

    private EventMeters(MeterRegistry registry, Tags tags, List<Meter> meters) {
        acquired = waitTimer(registry, tags, "acquired", meters);
        timedOut = waitTimer(registry, tags, "timed_out", meters);
        cancelled = waitTimer(registry, tags, "cancelled", meters);
        hold = Timer.builder(HOLD)
                .tags(tags)
                .description("How long holds lasted, one sample per release (holds that began before observation are left out)")
                .register(registry);
        meters.add(hold);
        longHolds = Counter.builder(HOLD_LONG)
                .tags(tags)
                .description("Holds that outlasted the primitive's long-hold threshold (Diagnostics.longHoldThreshold)")
                .register(registry);
        meters.add(longHolds);
        deadlocks = Counter.builder(DEADLOCKS)
                .tags(tags)
                .description("Deadlocks found with this primitive in their cycle (Diagnostics.detectDeadlocksAfter)")
                .register(registry);
        meters.add(deadlocks);
    }

    /**
     * Registers the event meters of {@code primitive} in {@code registry} (adding each to {@code meters}) and
     * adds the listener that feeds them: from now on the primitive is observed.
     */
    static EventMeters register(MeterRegistry registry, Tags tags, Inspectable primitive, List<Meter> meters) {
        EventMeters events = new EventMeters(registry, tags, meters);
        meters.add(Gauge.builder(HOLD_ACTIVE, primitive, p -> p.holders().size())
                .tags(tags)
                .description("Holds alive now (those taken since the primitive is observed)")
                .register(registry));
        meters.add(TimeGauge.builder(HOLD_OLDEST, primitive, TimeUnit.NANOSECONDS, EventMeters::oldestHoldNanos)
                .tags(tags)
                .description("How long the oldest hold alive has lasted; 0 if none")
                .register(registry));
        meters.add(TimeGauge.builder(ACQUIRE_OLDEST, primitive, TimeUnit.NANOSECONDS, EventMeters::oldestWaitNanos)
                .tags(tags)
                .description("How long the oldest request in line has waited; 0 if none")
                .register(registry));
        events.registration = primitive.addListener(events);
        return events;
    }

    /** Removes the listener (once): the primitive is no longer observed on this binding's account. */
    void close() {
        ListenerRegistration r = registration;
        registration = null;
        if (r != null) r.close();
    }

    @Override
    public void onAcquired(Inspectable primitive, HoldInfo hold, Duration waited) {
        acquired.record(waited);
    }

    @Override
    public void onTimedOut(Inspectable primitive, WaitInfo request) {
        timedOut.record(request.waited());
    }

    @Override
    public void onCancelled(Inspectable primitive, WaitInfo request) {
        cancelled.record(request.waited());
    }

    @Override
    public void onReleased(Inspectable primitive, HoldInfo hold) {
        Duration held = hold.held();
        if (held != null) this.hold.record(held);
    }

    @Override
    public void onLongHold(Inspectable primitive, HoldInfo hold) {
        longHolds.increment();
    }

    @Override
    public void onDeadlock(Inspectable primitive, Deadlock deadlock) {
        deadlocks.increment();
    }

    @Override
    public String toString() {
        return "semaphore-micrometer's listener (" + acquired.getId().getTags() + ")";
    }

    private static Timer waitTimer(MeterRegistry registry, Tags tags, String outcome, List<Meter> meters) {
        Timer timer = Timer.builder(ACQUIRE)
                .tags(tags.and(Tags.of(TAG_OUTCOME, outcome)))
                .description("How long requests waited in line, by how they ended (0 for a request granted at once)")
                .register(registry);
        meters.add(timer);
        return timer;
    }

    private static double oldestHoldNanos(Inspectable primitive) {
        long max = 0;
        for (HoldInfo h : primitive.holders()) {
            Duration held = h.held();
            if (held != null) max = Math.max(max, held.toNanos());
        }
        return max;
    }

    private static double oldestWaitNanos(Inspectable primitive) {
        Duration oldest = primitive.snapshot().oldestWait();
        return oldest == null ? 0 : oldest.toNanos();
    }
}
