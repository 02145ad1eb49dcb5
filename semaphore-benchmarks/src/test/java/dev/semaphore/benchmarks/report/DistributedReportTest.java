package dev.semaphore.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.benchmarks.report.DistributedReport.TimeRatio;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distributed report divides the right rows the right way round, fills the tables from the fixture in
 * src/test/resources/distributed (uncontended µs/op: ours 300 ± 30, RSemaphore 400 ± 40, RPermitExpirable
 * 250 ± 50, RedisLock 200 ± NaN, RFairLock 400 ± 20; contended ops/s with permits 8 listed before 1), writes a
 * PNG, and replaces only the distributed section of benchmarks.md.
 */
class DistributedReportTest {
    static Path fixture(Path dir) throws Exception {
        Path src = Path.of(DistributedReportTest.class.getResource("/distributed").toURI());
        Path copy = Files.createDirectories(dir.resolve("run"));
        for (String f : List.of("uncontended.json", "contended.json", "peers.md")) Files.copy(src.resolve(f), copy.resolve(f));
        return copy;
    }

    static void assertRatio(double value, double error, TimeRatio r) {
        assertEquals(value, r.value(), 1e-12, r.toString());
        if (Double.isNaN(error)) assertTrue(Double.isNaN(r.error()), r.toString());
        else assertEquals(error, r.error(), 1e-12, r.toString());
    }

    @Test
    void dividesOursByEachPeerInTime(@TempDir Path dir) throws Exception {
        DistributedReport.Run run = DistributedReport.Run.read(fixture(dir));
        List<TimeRatio> u = run.uncontendedRatios();
        assertEquals(List.of("RSemaphore", "RPermitExpirableSemaphore", "RFairLock"), u.stream().map(TimeRatio::peer).toList());
        assertRatio(0.75, 0.75 * Math.sqrt(0.01 + 0.01), u.get(0));
        assertRatio(1.2, 1.2 * Math.sqrt(0.01 + 0.04), u.get(1));
        assertRatio(0.5, Double.NaN, u.get(2)); // RedisLock / RFairLock: ours has no error

        List<TimeRatio> c = run.contendedRatios();
        assertEquals(List.of("contended, permits=1", "contended, permits=1", "contended, permits=8", "contended, permits=8"),
                c.stream().map(TimeRatio::where).toList());
        // Throughputs: the time ratio is peer / ours.
        assertRatio(500.0 / 1000, 0.5 * Math.sqrt(0.02), c.get(0));
        assertRatio(2000.0 / 1000, 2 * Math.sqrt(0.01 + 0.04), c.get(1));
        assertRatio(1000.0 / 4000, 0.25 * Math.sqrt(0.02), c.get(2));
        assertRatio(800.0 / 4000, 0.2 * Math.sqrt(0.02), c.get(3));
    }

    @Test
    void writesTheTablesThePngAndSplicesTheSection(@TempDir Path dir) throws Exception {
        Path run = fixture(dir);
        Path docs = Files.createDirectories(dir.resolve("docs"));
        // Odd whitespace on purpose: the splice must not normalize it.
        String local = "# Benchmarks\n\nlocal rows: 1.5 µs × 2, ± 3\n\n## Memory per waiter\n\n| a | b |  \n\n\n";
        byte[] before = local.getBytes(StandardCharsets.UTF_8);
        Path report = docs.resolve("benchmarks.md");
        Files.writeString(report, local + DistributedReport.HEADING + "\n\nold hand-written rows: 2.34 ± 1.57\n");
        Path md = docs.resolve("benchmarks-distributed.md");
        Path png = docs.resolve("benchmarks-distributed.png");
        DistributedReport.main(new String[] {"--dir", run.toString(), "--out", md.toString(), "--chart", png.toString(),
                "--server", "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64", "--splice", report.toString()});

        String text = Files.readString(md);
        List<String> lines = text.lines().toList();
        assertTrue(text.startsWith(DistributedReport.HEADING + "\n\n"), text);
        assertTrue(text.contains("JDK OpenJDK 64-Bit Server VM 17.0.15; `redis-server` 7.0.15 on a loopback port;"), text);
        assertTrue(text.contains("- one fresh server per JMH fork, 2 forks;"), text);
        assertTrue(text.contains("- ours with its defaults: lease 30s, heartbeat 2s."), text);
        assertTrue(text.contains("![time ratios ours / peer, with their errors](benchmarks-distributed.png)"), text);
        assertTrue(text.contains("2 forks × (5 warm-up + 10 measured) iterations of 1 s."), text);
        int first = lines.indexOf("| ours `RedisSemaphore` | 300.0 | 30.0 |  |");
        assertTrue(first > 0, text);
        assertEquals(List.of("| Redisson `RSemaphore` (not fair) | 400.0 | 40.0 | 0.75 ± 0.11 |",
                "| Redisson `RPermitExpirableSemaphore` (not fair) | 250.0 | 50.0 | 1.20 ± 0.27 |",
                "| ours `RedisLock` | 200.0 | n/a |  |",
                "| Redisson `RFairLock` | 400.0 | 20.0 | 0.50 ± n/a (vs ours `RedisLock`) |"), lines.subList(first + 1, first + 5));
        assertTrue(text.contains("In this run ours takes less time than `RSemaphore` beyond the error; is within error of parity with "
                + "`RPermitExpirableSemaphore`; has no error estimate (too few iterations) against `RFairLock`."), text);
        assertTrue(text.contains("in µs: ours 62.1 (`RedisSemaphore`) and 50.7 (`RedisLock`); `RSemaphore` 14.4"), text);
        assertTrue(text.contains("favours Redisson's semaphore scripts"), "ours' 50.7 and 62.1 exceed Redisson's 14.4 and 27.8");

        assertTrue(text.contains("### Contended, 2 processes × 100 workers on one semaphore"), text);
        assertTrue(text.contains("2 forks × (5 warm-up + 10 measured) iterations of 2 s."), text);
        int one = lines.indexOf("| 1 | 1000.0 ± 100.0 | 500.0 ± 50.0 | 2000.0 ± 400.0 | 0.50 ± 0.07 | 2.00 ± 0.45 |");
        assertTrue(one > 0, text);
        assertEquals("| 8 | 4000.0 ± 400.0 | 1000.0 ± 100.0 | 800.0 ± 80.0 | 0.25 ± 0.04 | 0.20 ± 0.03 |", lines.get(one + 1));
        assertTrue(text.contains("In this run ours takes less time than `RSemaphore` (contended, permits=1), `RSemaphore` "
                + "(contended, permits=8), `RPermitExpirableSemaphore` (contended, permits=8) beyond the error; "
                + "takes more time than `RPermitExpirableSemaphore` (contended, permits=1) beyond the error."), text);

        List<String> peers = Files.readAllLines(run.resolve("peers.md")).subList(0, 7);
        int table = lines.indexOf(peers.get(0));
        assertEquals(peers, lines.subList(table, table + 7), "RedisPeersReport's table verbatim");
        assertTrue(text.contains("`RSemaphore` sends 3.42 commands per acquisition (EVALSHA 3.00, SUBSCRIBE 0.42)"), text);
        assertTrue(text.contains("`RPermitExpirableSemaphore` 3.41 (EVALSHA 3.00, SUBSCRIBE 0.41, UNSUBSCRIBE < 0.01)"), text);
        assertTrue(text.contains("- `RSemaphore` did not serve the 20 queued in request order; `RPermitExpirableSemaphore` did not serve"), text);
        assertTrue(text.contains("**Redisson's fair lock.**\n- It served the 20 queued in request order.\n- With 20 workers on 1 permit "
                + "it sends 8.09 commands per acquisition (EVALSHA 4.00, SUBSCRIBE 2.05, UNSUBSCRIBE 2.05) and the server runs 77.08."), text);
        assertTrue(text.contains("- It sends 2.00 commands per acquisition uncontended (EVALSHA 2.00) and 2.00 with 20 workers"), text);
        assertTrue(text.contains("the server runs 11.00 commands per acquisition"), text);
        for (String stale : List.of("2.34", "50 to 60", "25 to 31", "at or below every peer", "4.7.0 on")) {
            assertFalse(text.contains(stale), stale);
        }

        byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head, "a PNG file");
        assertTrue(Files.size(png) > 10_000, "a drawn chart, not an empty image: " + Files.size(png));
        assertFalse(Files.exists(docs.resolve("benchmarks-distributed.png.png")));

        byte[] spliced = Files.readAllBytes(report);
        assertArrayEquals(before, Arrays.copyOf(spliced, before.length), "everything before the heading, byte for byte");
        assertEquals(text, new String(spliced, before.length, spliced.length - before.length, StandardCharsets.UTF_8),
                "then the new section (same directory, so the same chart link), and the old one is gone");
    }

    @Test
    void appendsTheSectionToAReportWithoutOneAndNamesWhatIsMissing(@TempDir Path dir) throws Exception {
        Path run = fixture(dir);
        Path report = dir.resolve("docs/benchmarks.md");
        Files.createDirectories(report.getParent());
        Files.writeString(report, "# Benchmarks\n");
        DistributedReport.main(new String[] {"--dir", run.toString(), "--out", dir.resolve("out/d.md").toString(),
                "--chart", dir.resolve("charts/d.png").toString(), "--splice", report.toString()});
        String spliced = Files.readString(report);
        assertTrue(spliced.startsWith("# Benchmarks\n\n" + DistributedReport.HEADING + "\n"), spliced);
        assertTrue(spliced.contains("](../charts/d.png)"), "the link is relative to benchmarks.md, not to d.md");
        assertTrue(Files.readString(dir.resolve("out/d.md")).contains("](../charts/d.png)"));
        assertTrue(spliced.contains("`redis-server` (version not given)"), spliced);

        Files.writeString(run.resolve("uncontended.json"), Files.readString(run.resolve("uncontended.json"))
                .replace("acquireRelease_redissonFairLock", "acquireRelease_somethingElse"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DistributedReport.main(new String[] {
                "--dir", run.toString(), "--out", dir.resolve("x.md").toString(), "--chart", dir.resolve("x.png").toString()}));
        assertTrue(e.getMessage().contains("redissonFairLock"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DistributedReport.main(new String[] {"--dir", run.toString()}));
    }
}
