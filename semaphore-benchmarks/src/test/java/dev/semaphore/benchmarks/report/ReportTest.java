package dev.semaphore.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.benchmarks.MemoryCase;
import dev.semaphore.benchmarks.MemoryPerWaiter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {
    /** One JMH result as JMH writes it (only the fields the report reads, and the settings it prints). */
    static String row(String benchmark, String mode, double score, String error, String unit, String params) {
        return "{\"jmhVersion\": \"1.37\", \"benchmark\": \"dev.semaphore.benchmarks." + benchmark + "\", \"mode\": \"" + mode
                + "\", \"forks\": 2, \"jdkVersion\": \"17\", \"warmupIterations\": 5, \"warmupTime\": \"1 s\", "
                + "\"measurementIterations\": 5, \"measurementTime\": \"1 s\", \"params\": {" + params + "}, "
                + "\"primaryMetric\": {\"score\": " + score + ", \"scoreError\": " + error + ", \"scoreUnit\": \"" + unit + "\"}, "
                + "\"secondaryMetrics\": {\"gc.alloc.rate.norm\": {\"score\": 16.0}, \"gc.count\": {\"score\": 1.0}}}";
    }

    static void write(Path file, String... rows) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "[" + String.join(",\n", rows) + "]");
    }

    static Report.Ratio find(List<Report.Ratio> rs, String a, String b, String param) {
        return rs.stream().filter(r -> r.a().first().axis().equals(a) && r.b().first().axis().equals(b)
                && (param == null || r.a().first().params().toString().contains(param))).findFirst().orElse(null);
    }

    @Test
    void ratiosAreOfTimesWithTheErrorsCombinedAndAVerdictBeyondThem(@TempDir Path dir) throws Exception {
        write(dir.resolve("local/u.json"),
                row("UncontendedBenchmark.cycle_ours", "avgt", 2.0, "0.2", "ns/op", ""),
                row("UncontendedBenchmark.cycle_kotlinx", "avgt", 4.0, "0.4", "ns/op", ""),
                row("UncontendedBenchmark.cycle_floor", "avgt", 2.1, "\"NaN\"", "ns/op", ""),
                row("Thr.run", "thrpt", 100.0, "1.0", "ops/s", "\"impl\": \"ours\""),
                row("Thr.run", "thrpt", 50.0, "1.0", "ops/s", "\"impl\": \"peer\""));
        String template = "# T\n{ratios}\n## U\n<!-- files: local/u.json; select: Uncontended.*; ratios: ours/kotlinx,floor floor/kotlinx -->\ntext\n"
                + "## Thr\n<!-- files: local/u.json; select: Thr; ratios: ours/peer -->\n";
        List<Report.Section> sections = Report.sections(template, dir);
        List<Report.Ratio> rs = Report.ratios(sections, Map.of());
        assertEquals(4, rs.size(), rs.toString());

        Report.Ratio ok = find(rs, "ours", "kotlinx", null);
        assertEquals(0.5, ok.value(), 1e-12);
        assertEquals(0.5 * Math.hypot(0.1, 0.1), ok.error(), 1e-12); // R3: the relative errors combined
        assertEquals("**ours** faster (2.00×)", ok.verdict());

        Report.Ratio floor = find(rs, "ours", "floor", null);
        assertTrue(Double.isNaN(floor.error()), "JMH had no error for the floor: " + floor);
        assertEquals("**ours** faster (1.05×, no error estimate)", floor.verdict());

        Report.Ratio thr = find(rs, "ours", "peer", null); // throughput: the time ratio is the inverse of the scores'
        assertEquals(0.5, thr.value(), 1e-12);
        assertEquals("**ours** faster (2.00×)", thr.verdict());

        Report.Ratio close = Report.Ratio.of(sections.get(0), sections.get(0).cells().get(0), sections.get(0).cells().get(0), null);
        assertEquals("within error", close.verdict());
        assertEquals(16.0, sections.get(0).cells().get(0).extras().get("B/op"));
        assertNull(sections.get(0).cells().get(0).extras().get("gc.count"), "only B/op and aux counters are columns");
    }

    @Test
    void rowsAreComparedOnlyWhereEveryParamBothHaveIsEqual(@TempDir Path dir) throws Exception {
        List<String> rows = new ArrayList<>();
        for (String impl : List.of("ours", "kotlinxMutex")) {
            for (String d : List.of("default", "pool2")) {
                rows.add(row("ReadWriteBenchmark.readWrite", "avgt", impl.equals("ours") ? 10 : 20, "1", "ms/op",
                        "\"impl\": \"" + impl + "\", \"dispatcher\": \"" + d + "\", \"readPercent\": \"90\""));
            }
        }
        rows.add(row("ReadWriteThreadsBenchmark.readWrite", "avgt", 40, "1", "ms/op", "\"impl\": \"juc\", \"readPercent\": \"90\""));
        rows.add(row("ReadWriteThreadsBenchmark.readWrite", "avgt", 80, "1", "ms/op", "\"impl\": \"juc\", \"readPercent\": \"50\""));
        write(dir.resolve("rw/rw.json"), rows.toArray(String[]::new));
        String joined = "## RW\n<!-- files: rw/rw.json; select: ReadWrite.*; same: ReadWriteBenchmark ReadWriteThreadsBenchmark; ratios: ours/kotlinxMutex,juc -->\n";
        List<Report.Ratio> rs = Report.ratios(Report.sections(joined, dir), Map.of());
        // Each dispatcher's ours row against the same dispatcher's mutex, and against the one juc row of its readPercent.
        assertEquals(4, rs.size(), rs.toString());
        for (Report.Ratio r : rs) {
            String d = r.a().first().params().get("dispatcher");
            String other = r.b().first().params().get("dispatcher");
            assertTrue(other == null || other.equals(d), "compared across dispatchers: " + r);
            assertEquals("90", r.b().first().params().get("readPercent"));
        }
        assertEquals(0.25, find(rs, "ours", "juc", "pool2").value(), 1e-12);
        String apart = joined.replace("same: ReadWriteBenchmark ReadWriteThreadsBenchmark; ", "");
        assertEquals(2, Report.ratios(Report.sections(apart, dir), Map.of()).size(), "classes not named by same are not compared");
    }

    @Test
    void roundsArePooledAsTheMeanOfPerRoundRatios(@TempDir Path dir) throws Exception {
        double[] before = {10, 10, 10};
        double[] after = {11, 9, 10};
        for (int i = 0; i < 3; i++) {
            write(dir.resolve("d/before-" + (i + 1) + ".json"), row("UncontendedBenchmark.cycle_ours", "avgt", before[i], "1", "ns/op", ""));
            write(dir.resolve("d/after-" + (i + 1) + ".json"), row("UncontendedBenchmark.cycle_ours", "avgt", after[i], "1", "ns/op", ""));
        }
        String template = "## D\n<!-- files: d/before-*.json d/after-*.json; axis: file; ratios: after/before -->\n";
        List<Report.Section> sections = Report.sections(template, dir);
        assertEquals(2, sections.get(0).cells().size(), "one cell per side, pooled over its rounds");
        List<Report.Ratio> rs = Report.ratios(sections, Map.of());
        assertEquals(1, rs.size());
        assertEquals(1.0, rs.get(0).value(), 1e-12);
        // Per-round ratios 1.1, 0.9, 1.0: sd 0.1; Student's t for 2 degrees of freedom at 0.9995 is 31.5991.
        assertEquals(31.5991 * 0.1 / Math.sqrt(3), rs.get(0).error(), 1e-3);
        assertEquals("within error", rs.get(0).verdict());
        assertEquals(10.0, rs.get(0).a().score(), 1e-12);
        assertEquals("ours", rs.get(0).a().first().params().get("impl"), "the impl names the row when it is not the axis");
    }

    @Test
    void mistakesAreRefusedNamingWhatIsWrong(@TempDir Path dir) throws Exception {
        write(dir.resolve("local/u.json"), row("UncontendedBenchmark.cycle_ours", "avgt", 2.0, "0.2", "ns/op", ""));
        var e1 = assertThrows(IllegalArgumentException.class, () -> Report.sections("## S\n<!-- files: local/u.json; colour: red -->\n", dir));
        assertTrue(e1.getMessage().contains("unknown directive colour"), e1.getMessage());
        var e2 = assertThrows(IllegalArgumentException.class, () -> Report.sections("## S\n<!-- files: local/u.json local/gone.json -->\n", dir));
        assertTrue(e2.getMessage().contains("gone.json"), e2.getMessage());
        List<Report.Section> notYet = Report.sections("## S\n<!-- files: other/gone-*.json -->\n", dir); // R7
        assertTrue(notYet.get(0).cells().isEmpty());
        assertTrue(Report.markdown("", notYet, List.of(), dir.resolve("local")).contains("*Not measured yet: no `results/other/gone-*.json`.*"));
        var e3 = assertThrows(IllegalArgumentException.class, () -> Report.sections("## Typo\n<!-- files local/u.json -->\n", dir));
        assertTrue(e3.getMessage().contains("\"Typo\"") && e3.getMessage().contains("files local/u.json"), e3.getMessage());
        var e4 = assertThrows(IllegalArgumentException.class, () -> Report.sections("## S\n<!-- files: local/u.json; select: Nothing -->\n", dir));
        assertTrue(e4.getMessage().contains("Nothing"), e4.getMessage());
        var e5 = assertThrows(IllegalArgumentException.class, () -> Report.sections("## S\n<!-- files: local/u.json; ratios: ours -->\n", dir));
        assertTrue(e5.getMessage().contains("ours"), e5.getMessage());
    }

    @Test
    void rechecksAreReadFromEveryDirectoryAndListedWithTheirGroupsDirectory(@TempDir Path dir) throws Exception { // R6
        Path results = dir.resolve("results");
        write(results.resolve("cycles/handoff.json"),
                row("HandoffBenchmark.semaphore", "avgt", 30, "1", "ms/op", "\"impl\": \"ours\""),
                row("HandoffBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"kotlinx\""));
        write(results.resolve("cycles/recheck-1.json"), row("HandoffBenchmark.semaphore", "avgt", 21, "1", "ms/op", "\"impl\": \"ours\""));
        write(results.resolve("local/recheck-1.json"), row("ContendedBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"ours\""));
        Map<String, Report.Row> rechecks = Report.rechecks(results);
        assertEquals(Set.of("HandoffBenchmark|semaphore|ours|{}", "ContendedBenchmark|semaphore|ours|{}"), rechecks.keySet());
        assertEquals(21.0, rechecks.get("HandoffBenchmark|semaphore|ours|{}").score());
        List<Report.Section> sections = Report.sections("## H\n<!-- files: cycles/handoff.json; select: Handoff.*; ratios: ours/kotlinx -->\n", results);
        assertEquals(List.of("cycles ^dev\\.semaphore\\.benchmarks\\.HandoffBenchmark\\.semaphore$"),
                Report.recheckSelectors(Report.ratios(sections, Map.of()), List.of("cycles/handoff.json")));
    }

    @Test
    void aRunWritesTheReportWithItsRechecksAndTheirSelectors(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("results");
        write(results.resolve("contended/contended.json"),
                row("ContendedBenchmark.semaphore", "avgt", 30, "1", "ms/op", "\"impl\": \"ours\", \"permits\": \"1\""),
                row("ContendedBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"1\""),
                row("ContendedBenchmark.semaphore", "avgt", 10, "1", "ms/op", "\"impl\": \"ours\", \"permits\": \"8\""),
                row("ContendedBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"8\""));
        write(results.resolve("contended/recheck-1.json"),
                row("ContendedBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"ours\", \"permits\": \"1\""),
                row("ContendedBenchmark.semaphore", "avgt", 20, "1", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"1\""));
        Files.writeString(results.resolve("contended/run.txt"), "`run.sh full`: a test\n");
        Files.writeString(results.resolve("contended/extra.md"), "| an included table |\n");
        List<Report.Section> sections = Report.sections("## C\n<!-- files: contended/contended.json; select: Contended.*; ratios: ours/kotlinx -->\nOne sentence.\n"
                + "## I\n<!-- include: contended/extra.md -->\nIncluded.\n", results);
        List<Report.Ratio> rs = Report.ratios(sections, Map.of());
        assertEquals(List.of("contended ^dev\\.semaphore\\.benchmarks\\.ContendedBenchmark\\.semaphore$ -p permits=1"),
                Report.recheckSelectors(rs, List.of("contended/contended.json")), "only the group where the peer is faster");
        assertEquals(List.of(), Report.recheckSelectors(rs, List.of("contended/other.json")));

        Path md = dir.resolve("benchmarks.md");
        // The real template's contended sections need contended/oversubscribed.json beside contended/contended.json (R7): the
        // entry point refuses, by name.
        var e = assertThrows(IllegalArgumentException.class, () -> Report.main(new String[] {"--results", results.toString(), "--out", md.toString()}));
        assertTrue(e.getMessage().contains("oversubscribed.json"), e.getMessage());

        String text = Report.markdown("# R\n{runs}\n{ratios}\n", sections, Report.ratios(sections, Map.of(
                "ContendedBenchmark|semaphore|ours|{permits=1}", Report.parse(results.resolve("contended/recheck-1.json"), "impl").get(0),
                "ContendedBenchmark|semaphore|kotlinx|{permits=1}", Report.parse(results.resolve("contended/recheck-1.json"), "impl").get(1))), results);
        assertTrue(text.contains("- `contended/`: `run.sh full`: a test"), text);
        assertTrue(text.contains("| [C](#c) | semaphore permits=1 | ours / kotlinx | 1.500 | 0.0901 | **kotlinx** faster (1.50×) | 1.000 ± 0.0707, within error |"), text);
        assertTrue(text.contains("| semaphore permits=8 | ours | 10.000 | 1.000 | ms/op | 16.000 |"), text);
        assertTrue(text.contains("Settings: 2 fork(s) × (5 × 1 s warm-up + 5 × 1 s), mode avgt, JDK 17, JMH 1.37. Unchanged params: none. From `results/contended/contended.json`."), text);
        assertTrue(text.contains("## I\n\nIncluded.\n\n| an included table |"), text);
    }

    @Test
    void theMemoryProbeWritesRowsTheReportReads(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("memory.json");
        MemoryPerWaiter.writeJson(List.of(
                new MemoryCase("bare", "coroutine", "none", 1000, 250.5, null),
                new MemoryCase("ours", "semaphore", "ours", 1000, 300.25, 49.75),
                new MemoryCase("ibm", "future", "ibm", 1000, 56.0, 32.0)), out.toFile());
        List<Report.Row> rows = Report.parse(out, "impl");
        assertEquals(3, rows.size());
        assertEquals("coroutineWaiter", rows.get(0).operation());
        assertEquals("none", rows.get(0).axis());
        assertTrue(Double.isNaN(rows.get(0).extras().get("net")));
        assertEquals(Map.of("primitive", "semaphore", "waiters", "1000"), rows.get(1).params());
        assertEquals(300.25, rows.get(1).score(), 1e-9);
        assertEquals(49.75, rows.get(1).extras().get("net"), 1e-9);
        assertEquals("B/waiter", rows.get(1).unit());
        assertEquals("futureWaiter", rows.get(2).operation());
    }

    @Test
    void theCommittedReportIsTheOneTheCommittedResultsGive() throws Exception {
        Path results = Path.of("../docs/results");
        List<Report.Section> sections = Report.sections(Report.template(), results);
        String expected = Report.markdown(Report.template(), sections, Report.ratios(sections, Report.rechecks(results)), results);
        assertEquals(expected, Files.readString(Path.of("../docs/benchmarks.md")),
                "docs/benchmarks.md is not what docs/results gives: run Report (docs/benchmarking.md says how)");
    }
}
