package dev.semaphore.micrometer;

import static org.junit.jupiter.api.Assertions.fail;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/** Reading meters back from a registry, as the tests compare them. */
final class Meters {
    private static final AtomicInteger NAMES = new AtomicInteger();

    private Meters() {}

    /** A name no other test uses: the list of named primitives is process-wide. */
    static String uniqueName(String base) {
        return base + "-" + NAMES.incrementAndGet();
    }

    static double gauge(MeterRegistry registry, String meter, String name) {
        return registry.get(meter).tag(SemaphoreMetrics.TAG_NAME, name).gauge().value();
    }

    static double requests(MeterRegistry registry, String name, String outcome) {
        return registry.get(SemaphoreMetrics.REQUESTS).tag(SemaphoreMetrics.TAG_NAME, name)
                .tag(SemaphoreMetrics.TAG_OUTCOME, outcome).functionCounter().count();
    }

    static double afterWait(MeterRegistry registry, String name) {
        return registry.get(SemaphoreMetrics.REQUESTS_ACQUIRED_AFTER_WAIT).tag(SemaphoreMetrics.TAG_NAME, name)
                .functionCounter().count();
    }

    /** The meters of the primitive named {@code name}: one line each, "TYPE meter.name {k=v, ...}", sorted. */
    static List<String> describe(MeterRegistry registry, String name) {
        return registry.getMeters().stream()
                .filter(m -> name.equals(m.getId().getTag(SemaphoreMetrics.TAG_NAME)))
                .map(Meters::describe)
                .collect(Collectors.toCollection(TreeSet::new))
                .stream().toList();
    }

    static String describe(Meter meter) {
        Meter.Id id = meter.getId();
        String tags = id.getTags().stream().map(t -> t.getKey() + "=" + t.getValue())
                .collect(Collectors.joining(", ", "{", "}"));
        return id.getType() + " " + id.getName() + " " + tags;
    }

    /** Waits up to 10 s for {@code condition} (a timeout completes on the JDK's timer thread; the Cleaner runs on its own). */
    static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) fail("not within 10 s: " + what);
            Thread.sleep(5);
        }
    }

    /** Runs the garbage collector until {@code gone} is true, for up to 10 s. */
    static void collectUntil(String what, BooleanSupplier gone) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!gone.getAsBoolean()) {
            if (System.nanoTime() > deadline) fail("not collected within 10 s: " + what);
            System.gc();
            Thread.sleep(10);
        }
    }
}
