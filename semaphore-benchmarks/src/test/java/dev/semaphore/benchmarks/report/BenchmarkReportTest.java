package dev.semaphore.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report pairs the right rows, divides the right way round and writes both files. */
class BenchmarkReportTest {
    /** A minimal JMH JSON row. */
    static String row(String benchmark, String params, String mode, double score, String error, String unit, String extra) {
        return "{\"jmhVersion\":\"1.37\",\"benchmark\":\"" + benchmark + "\",\"mode\":\"" + mode + "\",\"threads\":1,\"forks\":1,"
                + "\"jdkVersion\":\"17\",\"vmName\":\"VM\",\"vmVersion\":\"17\",\"warmupIterations\":1,\"warmupTime\":\"1 s\","
                + "\"measurementIterations\":2,\"measurementTime\":\"1 s\","
                + (params == null ? "" : "\"params\":{" + params + "},")
                + "\"primaryMetric\":{\"score\":" + score + ",\"scoreError\":" + error + ",\"scoreUnit\":\"" + unit + "\"}"
                + (extra == null ? "" : "," + extra) + "}";
    }

    static final String P = "dev.semaphore.benchmarks.";

    static String sample() {
        return "[" + String.join(",",
                row(P + "UncontendedBenchmark.tryAcquireRelease_ours", null, "avgt", 10, "1.0", "ns/op",
                        "\"secondaryMetrics\":{\"gc.alloc.rate.norm\":{\"score\":0.0001,\"scoreError\":\"NaN\",\"scoreUnit\":\"B/op\"}}"),
                row(P + "UncontendedBenchmark.tryAcquireRelease_kotlinx", null, "avgt", 20, "2.0", "ns/op", null),
                row(P + "UncontendedBenchmark.tryAcquireRelease_floor", null, "avgt", 5, "\"NaN\"", "ns/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\",\"permits\":\"1\"", "avgt", 30, "3", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"kotlinx\",\"permits\":\"1\"", "avgt", 15, "3", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\",\"permits\":\"8\"", "avgt", 10, "1", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"kotlinx\",\"permits\":\"8\"", "avgt", 10.5, "1", "ms/op", null),
                row(P + "PriorityBenchmark.contended", "\"impl\":\"priority-4\"", "avgt", 12, "0.1", "ms/op", null),
                row(P + "PriorityBenchmark.contended", "\"impl\":\"plain\"", "avgt", 10, "0.1", "ms/op", null))
                + "]";
    }

    @Test
    void theSectionTextsComeFromTheMarkdownTemplateInReportOrderOnePerBenchmarkClass() throws Exception {
        List<String> classes = List.copyOf(BenchmarkReport.SECTIONS.keySet());
        assertEquals("UncontendedBenchmark", classes.get(0), "the template's first section first");
        assertEquals(classes.size(), new java.util.HashSet<>(classes).size(), "one section per class");
        for (String cls : classes) {
            Class.forName("dev.semaphore.benchmarks." + cls); // a heading that names no benchmark class fails here
            String text = BenchmarkReport.SECTIONS.get(cls);
            assertTrue(!text.isBlank() && !text.startsWith("\n") && !text.endsWith("\n") && !text.contains("## "),
                    cls + ": one trimmed text, no heading inside: " + text);
        }
        assertTrue(BenchmarkReport.SECTIONS.get("ThreadsBenchmark").contains("parks/section"), "the template's text, as written");
        assertTrue(BenchmarkReport.SECTIONS.get("UncontendedBenchmark").contains("\n\n`floor` is the **exact-CAS floor**"),
                "paragraphs kept");
        IllegalStateException missing = assertThrows(IllegalStateException.class, () -> BenchmarkReport.sections("no-such.md"));
        assertTrue(missing.getMessage().contains("no-such.md"), missing.getMessage());
    }

    @Test
    void pairsOursWithEachPeerOfTheSameParameters() {
        List<BenchmarkReport.Row> rows = BenchmarkReport.parse(JsonParser.parseString(sample()).getAsJsonArray());
        assertEquals(9, rows.size());
        List<BenchmarkReport.Ratio> unc = BenchmarkReport.ratios(rows.subList(0, 3));
        assertEquals(3, unc.size(), "ours/kotlinx, ours/floor, floor/kotlinx");
        assertEquals("kotlinx", unc.get(0).peer().impl());
        assertEquals(0.5, unc.get(0).value(), 1e-12, "ours / kotlinx = 10 / 20");
        assertEquals(0.5 * Math.sqrt(0.01 + 0.01), unc.get(0).error(), 1e-12, "relative errors combined");
        assertEquals("floor", unc.get(1).peer().impl());
        assertEquals(2.0, unc.get(1).value(), 1e-12);
        assertTrue(Double.isNaN(unc.get(1).error()), "no error estimate when JMH has none");
        assertEquals("floor/kotlinx", unc.get(2).ours().impl() + "/" + unc.get(2).peer().impl());
        assertEquals(0.25, unc.get(2).value(), 1e-12);

        List<BenchmarkReport.Ratio> cont = BenchmarkReport.ratios(rows.subList(3, 7));
        assertEquals(2, cont.size(), "permits=1 pairs with permits=1 only, 8 with 8");
        assertArrayEquals(new double[] {2.0, 10 / 10.5},
                cont.stream().mapToDouble(BenchmarkReport.Ratio::value).toArray(), 1e-12);
        assertEquals("1", cont.get(0).ours().params().get("permits"));
        assertEquals("1", cont.get(0).peer().params().get("permits"));

        List<BenchmarkReport.Ratio> prio = BenchmarkReport.ratios(rows.subList(7, 9));
        assertEquals(1, prio.size());
        assertEquals("priority-4", prio.get(0).ours().impl());
        assertEquals(1.2, prio.get(0).value(), 1e-12);
    }

    @Test
    void writesTheMarkdownAndThePng(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("results.json");
        Files.writeString(results, sample());
        Path memory = dir.resolve("memory.json");
        Files.writeString(memory, "[{\"name\":\"bare\",\"group\":\"coroutine\",\"impl\":\"none\",\"waiters\":1000,\"bytesPerWaiter\":250.0,\"netOfBaseline\":null},"
                + "{\"name\":\"ours\",\"group\":\"semaphore\",\"impl\":\"ours\",\"waiters\":1000,\"bytesPerWaiter\":300.0,\"netOfBaseline\":50.0},"
                + "{\"name\":\"kx\",\"group\":\"semaphore\",\"impl\":\"kotlinx\",\"waiters\":1000,\"bytesPerWaiter\":200.0,\"netOfBaseline\":-50.0},"
                + "{\"name\":\"ol\",\"group\":\"lock\",\"impl\":\"ours\",\"waiters\":1000,\"bytesPerWaiter\":310.0,\"netOfBaseline\":60.0},"
                + "{\"name\":\"km\",\"group\":\"lock\",\"impl\":\"kotlinx\",\"waiters\":1000,\"bytesPerWaiter\":280.0,\"netOfBaseline\":30.0}]");
        Path md = dir.resolve("docs/benchmarks.md");
        Path png = dir.resolve("docs/ratios.png");
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", png.toString(), "--memory", memory.toString(),
                "--run", "unit test", results.toString()});
        String text = Files.readString(md);
        assertTrue(text.contains("](ratios.png)"), "the chart is linked relative to the report");
        assertTrue(text.contains("| tryAcquireRelease |  | ours | kotlinx | 0.5000 |"), text);
        assertTrue(text.contains("ours faster (2.00x)"), text);
        assertTrue(text.contains("| semaphore | permits=1 | ours | kotlinx | 2.000 |"), text);
        assertTrue(text.contains("peer faster (2.00x)"), text);
        assertTrue(text.contains("The machine has 2 cores and is shared"), text);
        assertTrue(text.contains("| semaphore: ours/kotlinx | 1.500 | n/a (peer adds nothing over the baseline) |"), text);
        assertTrue(text.contains("| lock: ours/kotlinx | 1.107 | 2.000 |"), text);
        assertTrue(text.contains("Run: unit test"), text);
        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, "a PNG file");
    }

    static String floorSample() {
        String it = "\"iterations\":\"1000000\"";
        return "[" + String.join(",",
                row(P + "UncontendedBenchmark.tryAcquireRelease_ours", null, "avgt", 6, "0.3", "ns/op", null),
                row(P + "UncontendedBenchmark.tryAcquireRelease_kotlinx", null, "avgt", 5, "0.25", "ns/op", null),
                row(P + "UncontendedBenchmark.tryAcquireRelease_floor", null, "avgt", 5, "0.25", "ns/op", null),
                row(P + "UncontendedInterfaceBenchmark.tryAcquireRelease", "\"impl\":\"ours\"", "avgt", 7, "0.35", "ns/op", null),
                row(P + "UncontendedInterfaceBenchmark.tryAcquireRelease", "\"impl\":\"kotlinx\"", "avgt", 5, "0.25", "ns/op", null),
                row(P + "UncontendedInterfaceBenchmark.tryAcquireRelease", "\"impl\":\"floor\"", "avgt", 5, "0.25", "ns/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"ours\"," + it, "avgt", 150, "15", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"kotlinx\"," + it, "avgt", 100, "10", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"floor\"," + it, "avgt", 120, "12", "ms/op", null),
                row(P + "JavaUncontendedBenchmark.acquireRelease_ours", null, "avgt", 12, "0.6", "ns/op", null),
                row(P + "JavaUncontendedBenchmark.acquireRelease_ibm", null, "avgt", 5, "0.1", "ns/op", null),
                row(P + "JavaUncontendedBenchmark.acquireRelease_juc", null, "avgt", 5, "0.1", "ns/op", null),
                row(P + "JavaUncontendedBenchmark.acquireRelease_floor", null, "avgt", 10, "0.5", "ns/op", null))
                + "]";
    }

    @Test
    void dividesOursAndThePublicApiFloorByKotlinxAndOursByTheFloor() {
        List<BenchmarkReport.Row> rows = BenchmarkReport.parse(JsonParser.parseString(floorSample()).getAsJsonArray());
        List<BenchmarkReport.Ratio> handoff = BenchmarkReport.ratios(rows.subList(6, 9));
        assertEquals(3, handoff.size(), "ours/kotlinx, ours/floor, floor/kotlinx");
        assertEquals("ours/kotlinx", handoff.get(0).ours().impl() + "/" + handoff.get(0).peer().impl());
        assertEquals(1.5, handoff.get(0).value(), 1e-12);
        assertEquals("ours/floor", handoff.get(1).ours().impl() + "/" + handoff.get(1).peer().impl());
        assertEquals(1.25, handoff.get(1).value(), 1e-12);
        assertEquals("above the floor (1.25x)", BenchmarkReport.verdict(handoff.get(1)));
        assertEquals("floor/kotlinx", handoff.get(2).ours().impl() + "/" + handoff.get(2).peer().impl());
        assertEquals(1.2, handoff.get(2).value(), 1e-12);
        assertEquals("peer below the floor (1.20x)", BenchmarkReport.verdict(handoff.get(2)));
        // The uncontended rows' floor (the exact-CAS floor) is divided by kotlinx too, in both shapes.
        for (List<BenchmarkReport.Row> shape : List.of(rows.subList(0, 3), rows.subList(3, 6))) {
            List<BenchmarkReport.Ratio> r = BenchmarkReport.ratios(shape);
            assertEquals(3, r.size(), "ours/kotlinx, ours/floor, floor/kotlinx");
            assertEquals("floor/kotlinx", r.get(2).ours().impl() + "/" + r.get(2).peer().impl());
            assertEquals(1.0, r.get(2).value(), 1e-12);
        }
        // The Java contract floor is divided by both Java peers, IBM and java.util.concurrent.
        List<BenchmarkReport.Ratio> java = BenchmarkReport.ratios(rows.subList(9, 13));
        assertEquals(5, java.size(), "ours/ibm, ours/juc, ours/floor, floor/ibm, floor/juc");
        assertEquals("floor/ibm", java.get(3).ours().impl() + "/" + java.get(3).peer().impl());
        assertEquals(2.0, java.get(3).value(), 1e-12);
        assertEquals("peer below the floor (2.00x)", BenchmarkReport.verdict(java.get(3)));
        assertEquals("floor/juc", java.get(4).ours().impl() + "/" + java.get(4).peer().impl());
        assertEquals(2.0, java.get(4).value(), 1e-12);
    }

    @Test
    void namesTheCpuWithItsFamilyAndModelFromTheFirstProcessor() {
        List<String> cpuinfo = List.of("processor\t: 0", "vendor_id\t: AuthenticAMD", "cpu family\t: 26", "model\t\t: 2",
                "model name\t: AMD EPYC", "stepping\t: 1", "", "processor\t: 1", "cpu family\t: 25", "model\t\t: 1",
                "model name\t: Other");
        assertEquals("AMD EPYC (family 26, model 2)", BenchmarkReport.cpuModel(cpuinfo));
        assertEquals("Some CPU", BenchmarkReport.cpuModel(List.of("model name : Some CPU")), "no family line: the name alone");
    }

    @Test
    void summarizesTheRowsWhereAPeerIsFasterWithWhatTheirFloorSays(@TempDir Path dir) throws Exception {
        String c = "\"coroutines\":\"1000\",\"permits\":\"1\"";
        String rows = "[" + String.join(",",
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\"," + c, "avgt", 110, "1", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"kotlinx\"," + c, "avgt", 100, "1", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"floor\"," + c, "avgt", 110, "1", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"ours\",\"iterations\":\"1000000\"", "avgt", 150, "1", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"kotlinx\",\"iterations\":\"1000000\"", "avgt", 100, "1", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"floor\",\"iterations\":\"1000000\"", "avgt", 90, "1", "ms/op", null),
                row(P + "PriorityBenchmark.contended", "\"impl\":\"priority-4\"", "avgt", 12, "0.1", "ms/op", null),
                row(P + "PriorityBenchmark.contended", "\"impl\":\"plain\"", "avgt", 10, "0.1", "ms/op", null),
                row(P + "FuturesContendedBenchmark.contended", "\"impl\":\"ours\",\"permits\":\"1\"", "avgt", 12, "0.1", "ms/op", null),
                row(P + "FuturesContendedBenchmark.contended", "\"impl\":\"ibm\",\"permits\":\"1\"", "avgt", 10, "0.1", "ms/op", null),
                row(P + "JavaUncontendedBenchmark.tryAcquireRelease_ours", null, "avgt", 5, "0.1", "ns/op", null),
                row(P + "JavaUncontendedBenchmark.tryAcquireRelease_ibm", null, "avgt", 6, "0.1", "ns/op", null))
                + "]";
        Path results = dir.resolve("results.json");
        Files.writeString(results, rows);
        Files.setLastModifiedTime(results, java.nio.file.attribute.FileTime.from(java.time.Instant.parse("2026-01-02T03:04:59Z")));
        Path md = dir.resolve("benchmarks.md");
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", dir.resolve("r.png").toString(), "--run", "unit test",
                results.toString()});
        String text = Files.readString(md);
        assertTrue(text.contains("- Measured until (UTC): 2026-01-02 03:04 (the newest results file); report written "),
                "the run's time comes from its results, not from when the report was written\n" + text.substring(0, 600));
        String summary = text.substring(text.indexOf("## Where a peer is faster"), text.indexOf("## UncontendedBenchmark") < 0
                ? text.indexOf("## ContendedBenchmark") : text.indexOf("## UncontendedBenchmark"));
        assertTrue(summary.contains("| ContendedBenchmark | semaphore | coroutines=1000, permits=1 | kotlinx | 1.100 |"), summary);
        assertTrue(summary.contains("| explained by the floor |"), summary);
        assertTrue(summary.contains("| HandoffBenchmark | semaphore | iterations=1000000 | kotlinx | 1.500 |"), summary);
        assertTrue(summary.contains("| above the floor |"), summary);
        assertTrue(summary.contains("| FuturesContendedBenchmark | contended | permits=1 | ibm | 1.200 |"), summary);
        assertTrue(summary.contains("| no floor in this section |"), summary);
        assertTrue(!summary.contains("PriorityBenchmark"), "a comparison of ours with ours is not a peer's row\n" + summary);
        assertTrue(!summary.contains("JavaUncontendedBenchmark"), "ours is faster there: not listed\n" + summary);
    }

    @Test
    void listsTheGroupsWhereAPeerIsFasterForARecheckAndShowsTheRecheckBesideTheFirstRatio(@TempDir Path dir) throws Exception {
        String c = "\"coroutines\":\"1000\",\"permits\":\"2\"";
        String first = "[" + String.join(",",
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\"," + c, "avgt", 24, "0.5", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"kotlinx\"," + c, "avgt", 18, "0.5", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"floor\"," + c, "avgt", 26, "9", "ms/op", null),
                row(P + "UncontendedBenchmark.tryAcquireRelease_ours", null, "avgt", 11, "0.1", "ns/op", null),
                row(P + "UncontendedBenchmark.tryAcquireRelease_kotlinx", null, "avgt", 10, "0.1", "ns/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"ours\",\"iterations\":\"1000\"", "avgt", 90, "1", "ms/op", null),
                row(P + "HandoffBenchmark.semaphore", "\"impl\":\"kotlinx\",\"iterations\":\"1000\"", "avgt", 100, "1", "ms/op", null))
                + "]";
        Path results = dir.resolve("results.json");
        Files.writeString(results, first);
        Path list = dir.resolve("recheck.txt");
        Path md = dir.resolve("benchmarks.md");
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", dir.resolve("r.png").toString(),
                "--recheck-list", list.toString(), results.toString()});
        assertEquals(List.of(
                "^dev\\.semaphore\\.benchmarks\\.UncontendedBenchmark\\.tryAcquireRelease_[A-Za-z0-9]+$",
                "^dev\\.semaphore\\.benchmarks\\.ContendedBenchmark\\.semaphore$ -p coroutines=1000 -p permits=2"),
                Files.readAllLines(list), "one line per group where the peer is faster, in the report's order; not the hand-off, "
                        + "where ours is faster");
        assertTrue(!Files.readString(md).contains("recheck ours/peer"), "no recheck column without rechecks");

        String again = "[" + String.join(",",
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\"," + c, "avgt", 18, "0.36", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"kotlinx\"," + c, "avgt", 18, "0.36", "ms/op", null),
                row(P + "ContendedBenchmark.semaphore", "\"impl\":\"floor\"," + c, "avgt", 28, "12", "ms/op", null))
                + "]";
        Path recheck = dir.resolve("recheck-1.json");
        Files.writeString(recheck, again);
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", dir.resolve("r.png").toString(),
                "--recheck", recheck.toString(), results.toString()});
        String text = Files.readString(md);
        String summary = text.substring(text.indexOf("## Where a peer is faster"), text.indexOf("## UncontendedBenchmark"));
        assertTrue(summary.contains("| recheck ours/peer | ± |"), summary);
        assertTrue(summary.contains("| ContendedBenchmark | semaphore | coroutines=1000, permits=2 | kotlinx | 1.333 | 0.0463 | 1.000 | 0.0283 | "),
                summary);
        assertTrue(summary.contains("| at the floor, but the floor is not above the peer beyond error; not confirmed by the recheck |"),
                "a recheck within error of 1 says so in the reading\n" + summary);
        assertTrue(summary.contains("| UncontendedBenchmark | tryAcquireRelease |  | kotlinx | 1.100 | 0.0149 | not measured |  | "), summary);
        assertTrue(!summary.contains("| no floor in this section; not confirmed"), "a row without a recheck keeps its reading\n" + summary);
        assertThrows(IllegalArgumentException.class, () -> BenchmarkReport.main(new String[] {"--out", md.toString(),
                "--chart", dir.resolve("r.png").toString(), "--recheck", dir.resolve("missing.json").toString(), results.toString()}));
    }

    @Test
    void printsBothShapesSideBySideAndTheFloorShareOfAWaiter(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("results.json");
        Files.writeString(results, floorSample());
        Path memory = dir.resolve("memory.json");
        Files.writeString(memory, "[{\"name\":\"bare\",\"group\":\"coroutine\",\"impl\":\"none\",\"waiters\":1000,\"bytesPerWaiter\":256.0,\"netOfBaseline\":null},"
                + "{\"name\":\"ours\",\"group\":\"semaphore\",\"impl\":\"ours\",\"waiters\":1000,\"bytesPerWaiter\":280.0,\"netOfBaseline\":24.0},"
                + "{\"name\":\"kx\",\"group\":\"semaphore\",\"impl\":\"kotlinx\",\"waiters\":1000,\"bytesPerWaiter\":224.5,\"netOfBaseline\":-31.5},"
                + "{\"name\":\"fl\",\"group\":\"floor\",\"impl\":\"floor\",\"waiters\":1000,\"bytesPerWaiter\":236.0,\"netOfBaseline\":-20.0}]");
        Path md = dir.resolve("benchmarks.md");
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", dir.resolve("r.png").toString(), "--memory", memory.toString(),
                results.toString()});
        String text = Files.readString(md);
        assertTrue(text.indexOf("## UncontendedBenchmark") < text.indexOf("## UncontendedInterfaceBenchmark"), text);
        assertTrue(text.contains("| tryAcquireRelease | direct call | 1.200 | "), text);
        assertTrue(text.contains("| tryAcquireRelease | one-method interface | 1.400 | "), text);
        assertTrue(text.contains("| semaphore | iterations=1000000 | ours | floor | 1.250 | "), text);
        assertTrue(text.contains("| semaphore | iterations=1000000 | floor | kotlinx | 1.200 | "), text);
        assertTrue(text.contains("public-API floor"), text);
        assertTrue(text.contains("| semaphore | ours | 280.0 | 236.0 | 0.8429 | 44.000 |"), text);
        assertTrue(text.contains("| semaphore | kotlinx | 224.5 | 236.0 | 1.051 | -11.500 |"), text);
    }

    @Test
    void refusesMissingInputsNamingThem(@TempDir Path dir) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BenchmarkReport.main(new String[] {
                "--out", dir.resolve("a.md").toString(), "--chart", dir.resolve("a.png").toString(), dir.resolve("nope.json").toString()}));
        assertTrue(e.getMessage().contains("nope.json"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BenchmarkReport.main(new String[] {"--out", "x.md"}));
    }
}
