package dev.semaphore.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.AsyncSemaphore;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The examples of docs/diagnostics.md ("Metrics (Micrometer)"), as compiled and running code: the Java one
 * and the histogram filter below, the Kotlin one in {@code KotlinUsageTest}. Each is the text between an "// example: NAME" line and
 * the next "// end" line, and {@link #theDocumentShowsTheseExamplesVerbatim()} checks that the document
 * shows exactly that text.
 */
class DocExamplesTest {

    @Test
    void java() {
        // example: metrics-java
        MeterRegistry registry = new SimpleMeterRegistry();                // your application's registry
        AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named("db"));
        SemaphoreMetrics.of(db).bindTo(registry);                          // gauges, counters and timers

        AsyncLock cache = AsyncLock.create(Diagnostics.named("cache"));   // on a hot path:
        SemaphoreMetrics.of(cache).snapshotOnly().bindTo(registry);        // gauges and counters only

        NamedSemaphoreMetrics all = SemaphoreMetrics.allNamed().refreshEvery(Duration.ofSeconds(30));
        all.bindTo(registry);              // every named primitive: those alive now, the others within 30 s
        // end
        try {
            assertEquals(8.0, registry.get(SemaphoreMetrics.PERMITS_AVAILABLE).tag("name", "db").gauge().value());
            assertEquals(1.0, registry.get(SemaphoreMetrics.PERMITS_LIMIT).tag("name", "cache").gauge().value());
            assertEquals(List.of(), registry.find(SemaphoreMetrics.ACQUIRE).tag("name", "cache").timers(),
                    "snapshotOnly wins over allNamed");
            db.acquire().join().close();
            assertEquals(1, registry.get(SemaphoreMetrics.ACQUIRE).tag("name", "db").tag("outcome", "acquired")
                    .timer().count());
        } finally {
            all.close();
        }
    }

    @Test
    void histogram() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // example: metrics-histogram
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                return id.getName().equals(SemaphoreMetrics.ACQUIRE)
                        ? DistributionStatisticConfig.builder().percentilesHistogram(true).build().merge(config)
                        : config;
            }
        });
        // end
        AsyncSemaphore jobs = AsyncSemaphore.create(1, Diagnostics.named("histogram-jobs"));
        SemaphoreMetrics.of(jobs).bindTo(registry);
        jobs.acquire().join().close();
        String scrape = registry.scrape();
        assertTrue(scrape.contains("semaphore_acquire_seconds_bucket{kind=\"Semaphore\",name=\"histogram-jobs\","
                + "outcome=\"acquired\",le=\"0.001\"} 1"), scrape);
        assertTrue(!scrape.contains("semaphore_hold_seconds_bucket"), "only the waits have buckets");
    }

    /** An example: its name and its text, dedented. */
    record Example(String name, String text) {}

    /** The examples in {@code source}, in order. */
    static List<Example> examples(Path source) throws IOException {
        List<String> lines = Files.readAllLines(source);
        List<Example> examples = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (!line.startsWith("// example: ")) continue;
            String name = line.substring("// example: ".length());
            int indent = lines.get(i).indexOf("//");
            List<String> body = new ArrayList<>();
            for (i++; !lines.get(i).trim().equals("// end"); i++) {
                String l = lines.get(i);
                body.add(l.length() >= indent ? l.substring(indent) : l.strip());
            }
            examples.add(new Example(name, body.stream().collect(Collectors.joining("\n", "", "\n"))));
        }
        return examples;
    }

    @Test
    void theDocumentShowsTheseExamplesVerbatim() throws IOException {
        String doc = Files.readString(Path.of("../docs/diagnostics.md"));
        String section = doc.substring(doc.indexOf("## Metrics (Micrometer)"));
        List<Example> examples = new ArrayList<>(examples(Path.of("src/test/java/dev/semaphore/micrometer/DocExamplesTest.java")));
        examples.addAll(examples(Path.of("src/test/kotlin/dev/semaphore/micrometer/KotlinUsageTest.kt")));
        assertEquals(List.of("metrics-java", "metrics-histogram", "metrics-kotlin"), examples.stream().map(Example::name).toList());
        for (Example e : examples) {
            assertTrue(section.contains(e.text()), e.name() + " is not shown as compiled in docs/diagnostics.md:\n" + e.text());
        }
    }
}
