package dev.semaphore.benchmarks.report;

import static dev.semaphore.benchmarks.report.BenchmarkReportTest.P;
import static dev.semaphore.benchmarks.report.BenchmarkReportTest.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The diagnostics report pairs the rounds (after / before per round, mean ± 99.9% t over 4 rounds), divides each
 * level by off with the JMH errors combined, and splices its section into benchmarks.md once, where
 * BenchmarkReport then keeps it. Fixture: tryAcquireRelease_ours 10 ns before, 10 / 10.1 / 9.9 / 10 after;
 * the contended row 10 ms before, 12 / 12.01 / 11.99 / 12 after; DiagnosticsBenchmark off 10 ± 1 ns, tracking
 * 30 ± 3 ns and 48 B/op; contended8 off with 3,200,000 B/op over 100,000 sections.
 */
class DiagnosticsReportTest {
    private static final double[] FAST_AFTER = {10, 10.1, 9.9, 10};
    private static final double[] SLOW_AFTER = {12, 12.01, 11.99, 12};

    private static String round(double fast, double slow) {
        return "[" + row(P + "UncontendedBenchmark.tryAcquireRelease_ours", null, "avgt", fast, "0.1", "ns/op", null) + ","
                + row(P + "ContendedBenchmark.semaphore", "\"impl\":\"ours\",\"permits\":\"1\"", "avgt", slow, "0.1", "ms/op", null) + "]";
    }

    private static String level(String op, String level, double score, String error, double bytes) {
        return row(P + "DiagnosticsBenchmark." + op, "\"diagnostics\":\"" + level + "\",\"sections\":\"100000\"", "avgt", score, error,
                "ns/op", "\"secondaryMetrics\":{\"gc.alloc.rate.norm\":{\"score\":" + bytes + ",\"scoreError\":\"NaN\",\"scoreUnit\":\"B/op\"}}");
    }

    @Test
    void pairsTheRoundsDividesByOffAndSplicesOnce(@TempDir Path dir) throws Exception {
        for (int i = 0; i < 4; i++) {
            Files.writeString(dir.resolve("before-" + (i + 1) + ".json"), round(10, 10));
            Files.writeString(dir.resolve("after-" + (i + 1) + ".json"), round(FAST_AFTER[i], SLOW_AFTER[i]));
        }
        Files.writeString(dir.resolve("diagnostics.json"), "[" + String.join(",",
                level("tryAcquireRelease", "off", 10, "1", 0), level("tryAcquireRelease", "tracking", 30, "3", 48),
                level("contended8", "off", 1e6, "1e4", 3.2e6)) + "]");
        Path report = dir.resolve("benchmarks.md");
        Files.writeString(report, "# Benchmarks\n\n## Memory per waiter\n\nm\n\n" + ReadWriteReport.HEADING + "\n\nrw\n");
        String[] args = {"--dir", dir.toString(), "--before", "b", "--after", "a", "--out", dir.resolve("d.md").toString(),
                "--json", dir.resolve("d.json").toString(), "--splice", report.toString()};
        DiagnosticsReport.main(args);
        DiagnosticsReport.main(args);

        String md = Files.readString(dir.resolve("d.md"));
        assertTrue(md.contains("| `UncontendedBenchmark.tryAcquireRelease` ours | ns/op | 10.000 ± 0 | 10.000 ± "), md);
        assertTrue(md.contains("| 1.000 ± 0.053 | within error |"), md);
        assertTrue(md.contains("| 1.200 ± 0.005 | slower by 20.0% ± 0.5% |"), md);
        assertTrue(md.contains("| `tryAcquireRelease` | tracking | 30.000 ± 3.000 ns/op | 3.000 ± 0.424 | 48.000 | 48.000 |"), md);
        assertTrue(md.contains("| `contended8` | off | 1000000.0 ± 10000.0 ns/op | 1.000 ± 0.014 | 3200000.0 | 32.000 |"), md);

        String spliced = Files.readString(report);
        assertEquals(1, spliced.split("\n## Diagnostics\n", -1).length - 1, spliced);
        assertTrue(spliced.indexOf("## Diagnostics") < spliced.indexOf(ReadWriteReport.HEADING), spliced);
        assertTrue(spliced.contains("1 of 2 rows of ours are within error of `b`"), spliced);
        assertTrue(spliced.contains("- `tryAcquireRelease`: tracking 3.000 ± 0.424 (48.000 B)"), spliced);
        assertTrue(DiagnosticsReport.kept(report).startsWith("## Diagnostics\n"));
        assertTrue(DiagnosticsReport.kept(report).endsWith("(48.000 B)\n"), DiagnosticsReport.kept(report));
    }
}
