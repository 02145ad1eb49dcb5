package dev.semaphore.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.semaphore.Diagnostics;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The names and labels a Prometheus scrape shows (Micrometer's {@link PrometheusMeterRegistry}, text format),
 * as docs/diagnostics.md lists them.
 */
class PrometheusFormTest {

    /** The scrape's sample lines of the semaphore named {@code name}, values dropped, sorted. */
    private static List<String> samples(PrometheusMeterRegistry registry, String name) {
        return registry.scrape().lines()
                .filter(line -> !line.startsWith("#") && line.contains("name=\"" + name + "\""))
                .map(line -> line.substring(0, line.lastIndexOf(' ')))
                .sorted()
                .collect(Collectors.toList());
    }

    /** The value of the sample that starts with {@code series}. */
    private static double value(PrometheusMeterRegistry registry, String series) {
        return registry.scrape().lines()
                .filter(line -> line.startsWith(series + " "))
                .map(line -> Double.parseDouble(line.substring(series.length() + 1)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no sample " + series + " in\n" + registry.scrape()));
    }

    @Test
    void theSnapshotMetersAsPrometheusNamesThem() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named("db"));
        SemaphoreMetrics.of(db.asKotlin()).snapshotOnly().bindTo(registry);

        String labels = "{kind=\"Semaphore\",name=\"db\"";
        assertEquals(List.of(
                "semaphore_permits_available" + labels + "}",
                "semaphore_permits_held" + labels + "}",
                "semaphore_permits_limit" + labels + "}",
                "semaphore_requests_acquired_after_wait_total" + labels + "}",
                "semaphore_requests_total" + labels + ",outcome=\"acquired\"}",
                "semaphore_requests_total" + labels + ",outcome=\"cancelled\"}",
                "semaphore_requests_total" + labels + ",outcome=\"failed\"}",
                "semaphore_requests_total" + labels + ",outcome=\"refused\"}",
                "semaphore_requests_total" + labels + ",outcome=\"timed_out\"}",
                "semaphore_requests_waiting" + labels + "}"), samples(registry, "db"));

        Permit six = db.acquire(6).join();
        CompletableFuture<Permit> waiting = db.acquire(3);
        assertEquals(2.0, value(registry, "semaphore_permits_available" + labels + "}"));
        assertEquals(6.0, value(registry, "semaphore_permits_held" + labels + "}"));
        assertEquals(8.0, value(registry, "semaphore_permits_limit" + labels + "}"));
        assertEquals(1.0, value(registry, "semaphore_requests_waiting" + labels + "}"));
        assertEquals(1.0, value(registry, "semaphore_requests_total" + labels + ",outcome=\"acquired\"}"));
        six.close();
        waiting.join().close();
        assertEquals(2.0, value(registry, "semaphore_requests_total" + labels + ",outcome=\"acquired\"}"));
        assertEquals(1.0, value(registry, "semaphore_requests_acquired_after_wait_total" + labels + "}"));
    }

    @Test
    void theEventMetersAsPrometheusNamesThem() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        AsyncSemaphore jobs = AsyncSemaphore.create(1, Diagnostics.named("jobs"));
        SemaphoreMetrics.of(jobs.asKotlin()).tag("region", "eu").bindTo(registry);

        Permit held = jobs.acquire().join();
        CompletableFuture<Permit> timesOut = jobs.acquire(Duration.ofMillis(20));
        timesOut.handle((p, e) -> e).join();
        held.close();

        String labels = "{kind=\"Semaphore\",name=\"jobs\"";
        List<String> events = samples(registry, "jobs").stream()
                .filter(s -> s.startsWith("semaphore_acquire") || s.startsWith("semaphore_hold") || s.startsWith("semaphore_deadlocks"))
                .collect(Collectors.toList());
        assertEquals(List.of(
                "semaphore_acquire_oldest_seconds" + labels + ",region=\"eu\"}",
                "semaphore_acquire_seconds_count" + labels + ",outcome=\"acquired\",region=\"eu\"}",
                "semaphore_acquire_seconds_count" + labels + ",outcome=\"cancelled\",region=\"eu\"}",
                "semaphore_acquire_seconds_count" + labels + ",outcome=\"timed_out\",region=\"eu\"}",
                "semaphore_acquire_seconds_max" + labels + ",outcome=\"acquired\",region=\"eu\"}",
                "semaphore_acquire_seconds_max" + labels + ",outcome=\"cancelled\",region=\"eu\"}",
                "semaphore_acquire_seconds_max" + labels + ",outcome=\"timed_out\",region=\"eu\"}",
                "semaphore_acquire_seconds_sum" + labels + ",outcome=\"acquired\",region=\"eu\"}",
                "semaphore_acquire_seconds_sum" + labels + ",outcome=\"cancelled\",region=\"eu\"}",
                "semaphore_acquire_seconds_sum" + labels + ",outcome=\"timed_out\",region=\"eu\"}",
                "semaphore_deadlocks_total" + labels + ",region=\"eu\"}",
                "semaphore_hold_active" + labels + ",region=\"eu\"}",
                "semaphore_hold_long_total" + labels + ",region=\"eu\"}",
                "semaphore_hold_oldest_seconds" + labels + ",region=\"eu\"}",
                "semaphore_hold_seconds_count" + labels + ",region=\"eu\"}",
                "semaphore_hold_seconds_max" + labels + ",region=\"eu\"}",
                "semaphore_hold_seconds_sum" + labels + ",region=\"eu\"}"), events);
        assertEquals(1.0, value(registry, "semaphore_acquire_seconds_count" + labels + ",outcome=\"timed_out\",region=\"eu\"}"));
        assertEquals(1.0, value(registry, "semaphore_acquire_seconds_count" + labels + ",outcome=\"acquired\",region=\"eu\"}"));
        assertEquals(1.0, value(registry, "semaphore_hold_seconds_count" + labels + ",region=\"eu\"}"));
    }
}
