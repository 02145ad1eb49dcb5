package dev.semaphore.benchmarks.report;

import static dev.semaphore.benchmarks.report.BenchmarkReportTest.P;
import static dev.semaphore.benchmarks.report.BenchmarkReportTest.row;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.benchmarks.report.ReadWriteReport.Pair;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ReadWriteLock report divides ours by each peer of the same workload (the coroutine peers of the same
 * dispatcher, the threads' ReentrantReadWriteLock for every dispatcher), judges the goal per row, fills the
 * table from the JSON, writes a PNG, and splices its section into benchmarks.md without touching the rest.
 *
 * The fixture (ms/op): read-mostly: default ours 40 ± 4, Mutex 50 ± 5, Semaphore RW 200 ± 20; pool2 ours 60 ± 6,
 * Mutex 50 ± 5, Semaphore RW 200 ± 20; threads 1000 ± 100. Write-heavy: default ours 70 ± 7, Mutex 70 ± 7,
 * Semaphore RW 500 ± 50; pool2 ours 90 ± 9, Mutex 60 ± 3, Semaphore RW 500 ± 50; threads 1200 ± NaN. The
 * Semaphore RW lock with K = 16: 30 ± 3 read-mostly, 80 ± 8 write-heavy, on both dispatchers. All of these are
 * short sections (workInside 50); the same JSON has long sections (workInside 1000), with other figures:
 * read-mostly: default ours 100 ± 10, Mutex 250 ± 25, Semaphore RW 300 ± 30, K = 16 200 ± 20; pool2 ours 120 ± 12,
 * Mutex 240 ± 24, Semaphore RW 360 ± 36, K = 16 240 ± 24; threads 2000 ± 200. Write-heavy: default ours 200 ± 20,
 * Mutex 250 ± 25, Semaphore RW 800 ± 80, K = 16 260 ± 26; pool2 ours 300 ± 30, Mutex 250 ± 25, Semaphore RW 900 ± 90,
 * K = 16 250 ± 25; threads 2500 ± 250. Every row has workOutside 50.
 */
class ReadWriteReportTest {
    static String coroutineRow(String impl, String dispatcher, int readPercent, double score, String error) {
        return coroutineRow(impl, dispatcher, readPercent, 50, score, error);
    }

    static String coroutineRow(String impl, String dispatcher, int readPercent, int workInside, double score, String error) {
        return row(P + "ReadWriteBenchmark.readWrite", "\"coroutines\":\"1000\",\"dispatcher\":\"" + dispatcher + "\",\"impl\":\"" + impl
                + "\",\"readPercent\":\"" + readPercent + "\",\"sections\":\"50000\",\"workInside\":\"" + workInside
                + "\",\"workOutside\":\"50\"", "avgt", score, error, "ms/op", null);
    }

    static String threadRow(int readPercent, double score, String error) {
        return threadRow(readPercent, 50, score, error);
    }

    static String threadRow(int readPercent, int workInside, double score, String error) {
        return row(P + "ReadWriteThreadsBenchmark.readWrite", "\"impl\":\"juc\",\"readPercent\":\"" + readPercent
                + "\",\"sections\":\"50000\",\"threads\":\"1000\",\"workInside\":\"" + workInside + "\",\"workOutside\":\"50\"",
                "avgt", score, error, "ms/op", null);
    }

    static List<String> fixtureRows() {
        return new ArrayList<>(List.of(
                coroutineRow("ours", "default", 90, 40, "4"), coroutineRow("ours", "default", 50, 70, "7"),
                coroutineRow("ours", "pool2", 90, 60, "6"), coroutineRow("ours", "pool2", 50, 90, "9"),
                coroutineRow("kotlinxMutex", "default", 90, 50, "5"), coroutineRow("kotlinxMutex", "default", 50, 70, "7"),
                coroutineRow("kotlinxMutex", "pool2", 90, 50, "5"), coroutineRow("kotlinxMutex", "pool2", 50, 60, "3"),
                coroutineRow("kotlinxSemaphore", "default", 90, 200, "20"), coroutineRow("kotlinxSemaphore", "default", 50, 500, "50"),
                coroutineRow("kotlinxSemaphore", "pool2", 90, 200, "20"), coroutineRow("kotlinxSemaphore", "pool2", 50, 500, "50"),
                coroutineRow("kotlinxSemaphore-16", "default", 90, 30, "3"), coroutineRow("kotlinxSemaphore-16", "default", 50, 80, "8"),
                coroutineRow("kotlinxSemaphore-16", "pool2", 90, 30, "3"), coroutineRow("kotlinxSemaphore-16", "pool2", 50, 80, "8"),
                threadRow(90, 1000, "100"), threadRow(50, 1200, "\"NaN\""),
                // Long sections, listed first on purpose: the report puts the short ones first.
                coroutineRow("ours", "default", 90, 1000, 100, "10"), coroutineRow("ours", "default", 50, 1000, 200, "20"),
                coroutineRow("ours", "pool2", 90, 1000, 120, "12"), coroutineRow("ours", "pool2", 50, 1000, 300, "30"),
                coroutineRow("kotlinxMutex", "default", 90, 1000, 250, "25"), coroutineRow("kotlinxMutex", "default", 50, 1000, 250, "25"),
                coroutineRow("kotlinxMutex", "pool2", 90, 1000, 240, "24"), coroutineRow("kotlinxMutex", "pool2", 50, 1000, 250, "25"),
                coroutineRow("kotlinxSemaphore", "default", 90, 1000, 300, "30"), coroutineRow("kotlinxSemaphore", "default", 50, 1000, 800, "80"),
                coroutineRow("kotlinxSemaphore", "pool2", 90, 1000, 360, "36"), coroutineRow("kotlinxSemaphore", "pool2", 50, 1000, 900, "90"),
                coroutineRow("kotlinxSemaphore-16", "default", 90, 1000, 200, "20"),
                coroutineRow("kotlinxSemaphore-16", "default", 50, 1000, 260, "26"),
                coroutineRow("kotlinxSemaphore-16", "pool2", 90, 1000, 240, "24"), coroutineRow("kotlinxSemaphore-16", "pool2", 50, 1000, 250, "25"),
                threadRow(90, 1000, 2000, "200"), threadRow(50, 1000, 2500, "250"),
                // Another benchmark in the same file is not ours to report.
                row(P + "ContendedLockBenchmark.lock", "\"impl\":\"ours\"", "avgt", 1, "0.1", "ms/op", null)));
    }

    static Path fixture(Path dir, List<String> rows) throws Exception {
        Path json = dir.resolve("readwrite.json");
        Files.writeString(json, "[" + String.join(",", rows) + "]");
        return json;
    }

    static void assertPair(String readPercent, String dispatcher, String peer, double value, double error, Pair p) {
        String what = p.ours().params() + " / " + p.peer().impl() + " " + p.peer().params();
        assertEquals(readPercent, p.ours().params().get("readPercent"), what);
        assertEquals(readPercent, p.peer().params().get("readPercent"), what);
        assertEquals(dispatcher, p.dispatcher(), what);
        assertEquals(peer, p.peer().impl(), what);
        assertEquals(value, p.ratio().value(), 1e-12, what);
        if (Double.isNaN(error)) assertTrue(Double.isNaN(p.ratio().error()), what);
        else assertEquals(error, p.ratio().error(), 1e-12, what);
    }

    @Test
    void dividesOursByEachPeerOfTheSameWorkloadAndJudgesTheGoal(@TempDir Path dir) throws Exception {
        List<Pair> pairs = ReadWriteReport.Run.read(fixture(dir, fixtureRows())).pairs();
        assertEquals(32, pairs.size());
        for (int i = 0; i < 32; i++) {
            Pair p = pairs.get(i);
            assertEquals(i < 16 ? 50 : 1000, p.workInside(), "short sections first, then long: row " + i);
            assertEquals(p.ours().params().get("workInside"), p.peer().params().get("workInside"), "a peer of the same length: row " + i);
        }
        double r2 = Math.sqrt(0.02); // two relative errors of 10%
        assertPair("90", "default", "kotlinxMutex", 0.8, 0.8 * r2, pairs.get(0));
        assertPair("90", "default", "kotlinxSemaphore", 0.2, 0.2 * r2, pairs.get(1));
        assertPair("90", "default", "kotlinxSemaphore-16", 40.0 / 30, 40.0 / 30 * r2, pairs.get(2));
        assertPair("90", "default", "juc", 0.04, 0.04 * r2, pairs.get(3));
        assertPair("90", "pool2", "kotlinxMutex", 1.2, 1.2 * r2, pairs.get(4));
        assertPair("90", "pool2", "juc", 0.06, 0.06 * r2, pairs.get(7));
        assertPair("50", "default", "kotlinxMutex", 1.0, r2, pairs.get(8));
        assertPair("50", "default", "juc", 70.0 / 1200, Double.NaN, pairs.get(11));
        assertPair("50", "pool2", "kotlinxMutex", 1.5, 1.5 * Math.sqrt(0.01 + 0.0025), pairs.get(12));
        assertPair("50", "pool2", "kotlinxSemaphore", 0.18, 0.18 * r2, pairs.get(13));
        assertPair("50", "pool2", "kotlinxSemaphore-16", 1.125, 1.125 * r2, pairs.get(14));
        // Long sections: the same order, their own figures.
        assertPair("90", "default", "kotlinxMutex", 0.4, 0.4 * r2, pairs.get(16));
        assertPair("90", "default", "kotlinxSemaphore", 1.0 / 3, 1.0 / 3 * r2, pairs.get(17));
        assertPair("90", "default", "juc", 0.05, 0.05 * r2, pairs.get(19));
        assertPair("90", "pool2", "kotlinxSemaphore-16", 0.5, 0.5 * r2, pairs.get(22));
        assertPair("50", "default", "kotlinxSemaphore-16", 200.0 / 260, 200.0 / 260 * r2, pairs.get(26));
        assertPair("50", "pool2", "kotlinxMutex", 1.2, 1.2 * r2, pairs.get(28));
        assertPair("50", "pool2", "juc", 0.12, 0.12 * r2, pairs.get(31));

        List<Boolean> goals = pairs.stream().map(Pair::goalMet).toList();
        // Read-mostly needs ours faster beyond the error; write-heavy, at or below within the error.
        assertEquals(List.of(true, true, false, true, false, true, false, true, true, true, true, true, false, true, true, true,
                true, true, true, true, true, true, true, true, true, true, true, true, false, true, false, true), goals);
        assertEquals("met (faster)", ReadWriteReport.goalText(pairs.get(0)));
        assertEquals("**not met** (faster)", ReadWriteReport.goalText(pairs.get(4)));
        assertEquals("met (at or below)", ReadWriteReport.goalText(pairs.get(8)));
        assertEquals("**not met** (at or below)", ReadWriteReport.goalText(pairs.get(12)));
        assertEquals("met (at or below)", ReadWriteReport.goalText(pairs.get(14)), "1.125 ± 0.159: within the error of parity");
        assertEquals("**not met** (at or below)", ReadWriteReport.goalText(pairs.get(28)), "1.2 ± 0.17: slower beyond the error");
    }

    @Test
    void writesTheTableAndThePngAndSplicesTheSectionBeforeTheDistributedOne(@TempDir Path dir) throws Exception {
        Path json = fixture(dir, fixtureRows());
        Path docs = Files.createDirectories(dir.resolve("docs"));
        // Odd whitespace on purpose: the splice must not normalize it.
        String local = "# Benchmarks\n\nlocal rows: 1.5 µs × 2, ± 3\n\n## Memory per waiter\n\n| a | b |  \n\n";
        String distributed = DistributedReport.HEADING + "\n\ndistributed rows: 2.34 ± 1.57\n\n### Contended\n\nmore  \n";
        Path report = docs.resolve("benchmarks.md");
        Files.writeString(report, local + distributed);
        Path md = docs.resolve("benchmarks-readwrite.md");
        Path png = docs.resolve("benchmarks-readwrite.png");
        String[] args = {"--json", json.toString(), "--out", md.toString(), "--chart", png.toString(), "--run", "unit test",
                "--splice", report.toString()};
        ReadWriteReport.main(args);

        String text = Files.readString(md);
        List<String> lines = text.lines().toList();
        assertTrue(text.startsWith(ReadWriteReport.HEADING + "\n\n"), text);
        assertTrue(text.contains("JMH 1 fork × (1 × 1 s warm-up + 2 × 1 s measured) iterations, mode avgt, 99.9% errors. Run: unit test."), text);
        assertTrue(text.contains("50,000 critical sections split over 1,000 callers, the same number for every section length"), text);
        assertTrue(text.contains("Each caller does geometric work (xorshift steps) of mean 50 before each section, outside the lock, and inside "
                + "the section work of mean 50 (**short sections**, the work per section of `ContendedBenchmark`) or 1,000 (**long sections**). "
                + "The work outside is the same for every length"), text);
        assertTrue(text.contains("What the two lengths show. With short sections (mean 50), the work inside is shorter than"), text);
        assertTrue(text.contains("With long sections (mean 1,000), the work inside dominates"), text);
        assertTrue(text.contains("- **kotlinx `Semaphore` RW lock, K = 1,000**, the recipe kotlinx's maintainers suggest: a kotlinx `Semaphore` "
                + "of K = 1,000 permits, one per coroutine, so a reader never waits for other readers (as with ours); a read takes 1 permit;"), text);
        assertTrue(text.contains("**Not the same semantics as ours**: waiting writers wait on that `Mutex`, outside the semaphore's line, "), text);
        assertTrue(text.contains("So readers that arrive after a waiting writer still get in ahead of it, there is no FIFO order between readers "
                + "and writers, and a steady stream of readers can starve the writers; ours is strict FIFO (a queued writer holds back later "
                + "readers);"), text);
        assertTrue(text.contains("**FIFO** (the default), strict FIFO between readers and writers, a queued writer holds back every reader that arrives after it;"), text);
        assertTrue(text.contains("**What this machine does not measure.**"), text);
        assertFalse(text.contains("Phase-fair against FIFO"), "no phase-fair rows, no policy table: " + text);
        assertTrue(text.contains("- **kotlinx `Semaphore` RW lock, K = 16**: the same with K = 16 permits, a bound: at most 16 readers at once, "
                + "and a write costs 16 acquisitions instead of one per coroutine;"), text);
        assertTrue(text.contains("1,000 platform threads in a fixed pool, one per caller"), text);
        assertTrue(text.contains("![time ratios ours / peer](benchmarks-readwrite.png)"), text);
        int first = lines.indexOf("| short (mean 50) | read-mostly (90% reads) | default | FIFO | kotlinx `Mutex` | 40.0 ± 4.0 | 50.0 ± 5.0 | 0.800 | 0.113 "
                + "| ours faster (1.25x) | met (faster) |");
        assertTrue(first > 0, text);
        assertEquals(List.of(
                "| short (mean 50) | read-mostly (90% reads) | default | FIFO | kotlinx `Semaphore` RW lock, K = 1,000 | 40.0 ± 4.0 | 200.0 ± 20.0 | 0.200 | 0.028 "
                        + "| ours faster (5.00x) | met (faster) |",
                "| short (mean 50) | read-mostly (90% reads) | default | FIFO | kotlinx `Semaphore` RW lock, K = 16 | 40.0 ± 4.0 | 30.0 ± 3.0 | 1.333 | 0.189 "
                        + "| peer faster (1.33x) | **not met** (faster) |",
                "| short (mean 50) | read-mostly (90% reads) | default | FIFO | `ReentrantReadWriteLock(true)`, 1,000 threads | 40.0 ± 4.0 | 1000.0 ± 100.0 | 0.040 "
                        + "| 0.006 | ours faster (25.00x) | met (faster) |",
                "| short (mean 50) | read-mostly (90% reads) | pool2 | FIFO | kotlinx `Mutex` | 60.0 ± 6.0 | 50.0 ± 5.0 | 1.200 | 0.170 | peer faster (1.20x) "
                        + "| **not met** (faster) |"), lines.subList(first + 1, first + 5));
        assertTrue(lines.contains("| short (mean 50) | write-heavy (50% reads) | default | FIFO | `ReentrantReadWriteLock(true)`, 1,000 threads | 70.0 ± 7.0 "
                + "| 1200.0 ± n/a | 0.058 | n/a | ours faster (no error estimate) | met (at or below) |"), text);
        assertTrue(lines.contains("| section work | workload | ours on | policy | peer | ours (ms/op) | peer (ms/op) | ours / peer | ± | verdict | goal |"),
                text);
        int firstLong = lines.indexOf("| long (mean 1,000) | read-mostly (90% reads) | default | FIFO | kotlinx `Mutex` | 100.0 ± 10.0 | 250.0 ± 25.0 "
                + "| 0.400 | 0.057 | ours faster (2.50x) | met (faster) |");
        assertEquals(first + 16, firstLong, "the 16 long rows after the 16 short ones: " + text);
        assertTrue(lines.contains("| long (mean 1,000) | write-heavy (50% reads) | pool2 | FIFO | kotlinx `Mutex` | 300.0 ± 30.0 | 250.0 ± 25.0 | 1.200 "
                + "| 0.170 | peer faster (1.20x) | **not met** (at or below) |"), text);
        assertTrue(lines.contains("| long (mean 1,000) | write-heavy (50% reads) | pool2 | FIFO | `ReentrantReadWriteLock(true)`, 1,000 threads "
                + "| 300.0 ± 30.0 | 2500.0 ± 250.0 | 0.120 | 0.017 | ours faster (8.33x) | met (at or below) |"), text);
        assertEquals(1 + 32, lines.stream().filter(l -> l.startsWith("| ")).count(), "the header and 32 rows: " + text);
        assertTrue(text.contains("In this run, with short sections (mean 50), the goal is met in 12 of 16 rows; not met against kotlinx `Semaphore` RW lock, K = 16 "
                + "(read-mostly (90% reads), ours on default: 1.33 ± 0.19); kotlinx `Mutex` (read-mostly (90% reads), ours on pool2: "
                + "1.20 ± 0.17); kotlinx `Semaphore` RW lock, K = 16 (read-mostly (90% reads), ours on pool2: 2.00 ± 0.28); "
                + "kotlinx `Mutex` (write-heavy (50% reads), ours on pool2: 1.50 ± 0.17).\n\nIn this run, with long sections (mean 1,000), "
                + "the goal is met in 14 of 16 rows; not met against kotlinx `Mutex` (write-heavy (50% reads), ours on pool2: 1.20 ± 0.17); "
                + "kotlinx `Semaphore` RW lock, K = 16 (write-heavy (50% reads), ours on pool2: 1.20 ± 0.17).\n"), text);
        assertFalse(text.contains("ContendedLock"), "other benchmarks of the file are left out");

        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, "a PNG file");
        assertTrue(Files.size(png) > 10_000, "a drawn chart, not an empty image: " + Files.size(png));
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(2 * 560, image.getWidth(), "two charts across: read-mostly, write-heavy");
        assertEquals(2 * 760, image.getHeight(), "two charts down: short sections, long sections");
        assertFalse(Files.exists(docs.resolve("benchmarks-readwrite.png.png")));

        String spliced = Files.readString(report);
        assertEquals(local + text + "\n" + distributed, spliced, "the section (same directory, same link) before the distributed one, "
                + "a blank line after it, everything else byte for byte");

        // Again, with other figures: the section is replaced in place, nothing else changes.
        List<String> rows = fixtureRows();
        rows.set(0, coroutineRow("ours", "default", 90, 45, "4"));
        ReadWriteReport.main(new String[] {"--json", fixture(dir, rows).toString(), "--out", md.toString(), "--chart", png.toString(),
                "--splice", report.toString()});
        String again = Files.readString(md);
        assertTrue(again.contains("| 45.0 ± 4.0 | 50.0 ± 5.0 | 0.900 |"), again);
        assertFalse(again.contains("Run: "), "no --run, no run line");
        assertEquals(local + again + "\n" + distributed, Files.readString(report));
    }

    @Test
    void judgesEachPolicyOnItsOwnAndComparesPhaseFairWithFifo(@TempDir Path dir) throws Exception {
        List<String> rows = fixtureRows();
        // Phase-fair: read-mostly short sections 20 ± 2 on default (half of FIFO's 40), everything else 1.1x FIFO's figure.
        rows.add(coroutineRow("oursPhaseFair", "default", 90, 20, "2"));
        rows.add(coroutineRow("oursPhaseFair", "default", 50, 77, "7.7"));
        rows.add(coroutineRow("oursPhaseFair", "pool2", 90, 66, "6.6"));
        rows.add(coroutineRow("oursPhaseFair", "pool2", 50, 99, "9.9"));
        rows.add(coroutineRow("oursPhaseFair", "default", 90, 1000, 110, "11"));
        rows.add(coroutineRow("oursPhaseFair", "default", 50, 1000, 220, "22"));
        rows.add(coroutineRow("oursPhaseFair", "pool2", 90, 1000, 132, "13.2"));
        rows.add(coroutineRow("oursPhaseFair", "pool2", 50, 1000, 330, "33"));
        ReadWriteReport.Run run = ReadWriteReport.Run.read(fixture(dir, rows));
        assertEquals(List.of("FIFO", "phase-fair"), run.policies());
        assertEquals(List.of("kotlinxMutex", "kotlinxSemaphore", "kotlinxSemaphore-16", "juc"), run.peers(), "phase-fair is ours, not a peer");
        List<Pair> pairs = run.pairs();
        assertEquals(64, pairs.size());
        // Within a length and workload: FIFO's rows (both dispatchers), then phase-fair's.
        for (int i = 0; i < 64; i++) {
            assertEquals((i / 8) % 2 == 0 ? "FIFO" : "phase-fair", pairs.get(i).policy(), "row " + i);
        }
        assertPair("90", "default", "kotlinxMutex", 0.8, 0.8 * Math.sqrt(0.02), pairs.get(0));
        assertPair("90", "default", "kotlinxMutex", 0.4, 0.4 * Math.sqrt(0.02), pairs.get(8));
        assertEquals("oursPhaseFair", pairs.get(8).ours().impl());
        assertTrue(pairs.get(8).goalMet(), "0.4 ± 0.06 is faster beyond the error");

        String text = ReadWriteReport.markdown(run, null, "chart.png");
        assertTrue(text.contains("| short (mean 50) | read-mostly (90% reads) | default | phase-fair | kotlinx `Mutex` | 20.0 ± 2.0 | 50.0 ± 5.0 "
                + "| 0.400 | 0.057 | ours faster (2.50x) | met (faster) |"), text);
        assertTrue(text.contains("In this run, with short sections (mean 50), ours FIFO: the goal is met in 12 of 16 rows;"), text);
        assertTrue(text.contains("In this run, with short sections (mean 50), ours phase-fair: the goal is met in "), text);
        assertTrue(text.contains("In this run, with long sections (mean 1,000), ours phase-fair: the goal is met in "), text);
        List<String> lines = text.lines().toList();
        assertTrue(lines.contains("| short (mean 50) | read-mostly (90% reads) | default | 40.0 ± 4.0 | 20.0 ± 2.0 | 0.500 | 0.071 "
                + "| phase-fair faster (2.00x) |"), text);
        assertTrue(lines.contains("| long (mean 1,000) | write-heavy (50% reads) | pool2 | 300.0 ± 30.0 | 330.0 ± 33.0 | 1.100 | 0.156 "
                + "| within error |"), text);
        int policyTable = lines.indexOf("| section work | workload | on | FIFO | phase-fair | phase-fair / FIFO | ± | verdict |");
        assertTrue(policyTable > 0, text);
        assertEquals(2 + 8, lines.subList(policyTable, lines.size()).stream().takeWhile(l -> l.startsWith("|")).count(),
                "the header, the separator and one line per FIFO row: " + text);

        Path png = dir.resolve("rw.png");
        ReadWriteReport.writeChart(pairs, run, png);
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(2 * (120 + 55 * 16), image.getWidth(), "16 bars per chart: 2 dispatchers x 2 policies x 4 peers");
    }

    @Test
    void splicesAtTheEndWithoutADistributedSectionAndReplacesALastSection() {
        String section = ReadWriteReport.HEADING + "\n\nnew rows\n";
        assertEquals("# Benchmarks\n\n" + section, ReadWriteReport.splice("# Benchmarks\n", section));
        assertEquals("# Benchmarks\n\n" + section, ReadWriteReport.splice("# Benchmarks", section));
        assertEquals("# B\n\n" + section, ReadWriteReport.splice("# B\n\n", section));
        String old = "# B\n\n## Memory\n\nm\n\n" + ReadWriteReport.HEADING + "\n\nold rows\n\n### sub\n\nold\n";
        assertEquals("# B\n\n## Memory\n\nm\n\n" + section, ReadWriteReport.splice(old, section));
        String middle = "# B\n\n" + ReadWriteReport.HEADING + "\n\nold\n\n## Later\n\nl\n";
        assertEquals("# B\n\n" + section + "\n## Later\n\nl\n", ReadWriteReport.splice(middle, section));
        assertEquals(ReadWriteReport.splice(middle, section), ReadWriteReport.splice(ReadWriteReport.splice(middle, section), section),
                "splicing twice is splicing once");
    }

    @Test
    void namesAMissingPeerAndRefusesBadArguments(@TempDir Path dir) throws Exception {
        List<String> rows = fixtureRows();
        rows.remove(threadRow(50, 1200, "\"NaN\""));
        Path json = fixture(dir, rows);
        Path md = dir.resolve("x.md");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", json.toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("juc") && e.getMessage().contains("readPercent=50") && e.getMessage().contains("workInside=50"),
                e.getMessage());
        assertFalse(Files.exists(md), "nothing written");

        rows = fixtureRows();
        rows.remove(coroutineRow("kotlinxMutex", "pool2", 50, 60, "3"));
        Path json2 = fixture(dir, rows);
        e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", json2.toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("kotlinxMutex") && e.getMessage().contains("dispatcher=pool2"), e.getMessage());

        // The long rows have their own peers: a short one does not stand in for a missing long one.
        rows = fixtureRows();
        rows.remove(coroutineRow("kotlinxSemaphore-16", "default", 50, 1000, 260, "26"));
        Path json3 = fixture(dir, rows);
        e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", json3.toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("kotlinxSemaphore-16") && e.getMessage().contains("workInside=1000"), e.getMessage());

        // The JSON of a run before the section length was a parameter.
        Path old = dir.resolve("old.json");
        Files.writeString(old, "[" + row(P + "ReadWriteBenchmark.readWrite", "\"coroutines\":\"1000\",\"dispatcher\":\"default\","
                + "\"impl\":\"ours\",\"readPercent\":\"90\",\"sections\":\"100000\"", "avgt", 1, "0.1", "ms/op", null) + "]");
        e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", old.toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("workInside"), e.getMessage());
        assertFalse(Files.exists(md), "still nothing written");

        e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", dir.resolve("nope.json").toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("nope.json"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {"--json", json.toString()}));
        assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {"--json", json.toString(), "--out", "a.md",
                "--chart", "a.png", "--splize", "b.md"}));
        Files.writeString(json, "[" + row(P + "ContendedLockBenchmark.lock", "\"impl\":\"ours\"", "avgt", 1, "0.1", "ms/op", null) + "]");
        e = assertThrows(IllegalArgumentException.class, () -> ReadWriteReport.main(new String[] {
                "--json", json.toString(), "--out", md.toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("ReadWriteBenchmark"), e.getMessage());
    }

    @Test
    void theFullReportCarriesTheSectionBeforeTheDistributedOne(@TempDir Path dir) throws Exception {
        Path docs = Files.createDirectories(dir.resolve("docs"));
        Path results = dir.resolve("results.json");
        Files.writeString(results, BenchmarkReportTest.sample());
        Files.writeString(docs.resolve("benchmarks-readwrite.md"), ReadWriteReport.HEADING + "\n\nrw rows\n");
        Files.writeString(docs.resolve("benchmarks-distributed.md"), DistributedReport.HEADING + "\n\ndistributed rows\n");
        Path md = docs.resolve("benchmarks.md");
        BenchmarkReport.main(new String[] {"--out", md.toString(), "--chart", docs.resolve("r.png").toString(), results.toString()});
        String text = Files.readString(md, StandardCharsets.UTF_8);
        assertTrue(text.endsWith("\n\n" + ReadWriteReport.HEADING + "\n\nrw rows\n\n" + DistributedReport.HEADING + "\n\ndistributed rows\n"), text);
    }
}
