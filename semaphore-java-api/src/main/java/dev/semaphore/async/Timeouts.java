package dev.semaphore.async;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one daemon thread that fires the timeouts of timed future acquisitions. A timer is cancelled
 * (and removed from the queue at once) when its future completes first, so long timeouts on futures
 * that complete early retain nothing.
 */
final class Timeouts {
    private Timeouts() {}

    private static final class Holder {
        static final ScheduledThreadPoolExecutor SCHEDULER = create();

        private static ScheduledThreadPoolExecutor create() {
            ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "semaphore-async-timeouts");
                t.setDaemon(true);
                return t;
            });
            s.setRemoveOnCancelPolicy(true);
            return s;
        }
    }

    /** Runs [task] after [nanos] nanoseconds on the timeout thread. */
    static ScheduledFuture<?> schedule(Runnable task, long nanos) {
        return Holder.SCHEDULER.schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    /** The duration in nanoseconds, saturated at Long.MAX_VALUE (about 292 years) instead of overflowing. */
    static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
