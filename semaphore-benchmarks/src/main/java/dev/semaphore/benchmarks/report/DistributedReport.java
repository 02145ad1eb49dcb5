/*
 * Turns what `run.sh distributed` writes (uncontended.json and contended.json from JMH, peers.md from
 * RedisPeersReport) into docs/benchmarks-distributed.md and a PNG of the time ratios ours/peer, and with
 * --splice replaces the distributed section at the end of docs/benchmarks.md with it.
 *
 * Invariants:
 * - Every figure comes from those files; the prose around them is either generic or built from them.
 * - Every time ratio is ours/peer, below 1 = ours takes less time per acquisition. Uncontended rows are
 *   times, so it is ours/peer; contended rows are throughputs, so it is peer/ours. Its error is
 *   BenchmarkReport.ratio's: the two relative JMH errors combined, n/a when JMH had none.
 * - A missing result is an error naming it, not a blank row.
 * - The splice keeps everything before the line HEADING byte for byte (the local rows, from a 40-minute run).
 */
package dev.semaphore.benchmarks.report;

import static dev.semaphore.benchmarks.report.BenchmarkReport.ratio;
import static dev.semaphore.benchmarks.report.BenchmarkReport.str;

import com.google.gson.JsonParser;
import dev.semaphore.benchmarks.distributed.DistributedContendedBenchmark;
import dev.semaphore.benchmarks.distributed.RedisPeersKt;
import dev.semaphore.benchmarks.report.BenchmarkReport.Ratio;
import dev.semaphore.benchmarks.report.BenchmarkReport.Row;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/** Generates the distributed section (Markdown + PNG) from the output of `run.sh distributed`. */
public final class DistributedReport {
    static final String HEADING = "## Distributed: semaphore-redis vs Redisson";
    /** RedisPeersReport measures batches of 1,000 acquisitions. */
    private static final double BATCH = 1000;
    /** Benchmark method suffixes, as the tables name them. */
    static final Map<String, String> NAMES = new LinkedHashMap<>();

    static {
        NAMES.put("ours", "ours `RedisSemaphore`");
        NAMES.put("redissonSemaphore", "Redisson `RSemaphore` (not fair)");
        NAMES.put("redissonPermitExpirable", "Redisson `RPermitExpirableSemaphore` (not fair)");
        NAMES.put("oursLock", "ours `RedisLock`");
        NAMES.put("redissonFairLock", "Redisson `RFairLock`");
    }

    private DistributedReport() {
    }

    /** A time ratio ours/peer: where it was measured, against whom, and its value. */
    record TimeRatio(String where, String peer, double value, double error) {
        static TimeRatio of(String where, String peer, Ratio r) {
            return new TimeRatio(where, peer, r.value(), r.error());
        }

        String text() {
            return f(value, 2) + " ± " + f(error, 2);
        }
    }

    /** The parsed inputs. */
    record Run(List<Row> uncontended, List<Row> contended, List<String> peers, String date) {
        static Run read(Path dir) throws IOException {
            return new Run(rows(dir.resolve("uncontended.json")), rows(dir.resolve("contended.json")),
                    Files.readAllLines(dir.resolve("peers.md")), Files.getLastModifiedTime(dir.resolve("uncontended.json"))
                    .toInstant().atZone(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")));
        }

        Row row(List<Row> rows, String impl, String permits) {
            return rows.stream().filter(r -> r.impl().equals(impl) && (permits == null || permits.equals(r.params().get("permits"))))
                    .findFirst().orElseThrow(() -> new IllegalArgumentException("no result for " + impl
                            + (permits == null ? "" : " with permits=" + permits) + " in the JMH JSON"));
        }

        List<String> permits() {
            return contended.stream().map(r -> r.params().get("permits")).distinct().sorted((a, b) -> Integer.parseInt(a) - Integer.parseInt(b)).toList();
        }

        List<TimeRatio> uncontendedRatios() {
            Row ours = row(uncontended, "ours", null);
            return List.of(TimeRatio.of("uncontended", "RSemaphore", ratio(ours, row(uncontended, "redissonSemaphore", null))),
                    TimeRatio.of("uncontended", "RPermitExpirableSemaphore", ratio(ours, row(uncontended, "redissonPermitExpirable", null))),
                    TimeRatio.of("uncontended", "RFairLock", ratio(row(uncontended, "oursLock", null), row(uncontended, "redissonFairLock", null))));
        }

        /** Per permits: ours/RSemaphore and ours/RPermitExpirableSemaphore in time, that is peer/ours in acquisitions/s. */
        List<TimeRatio> contendedRatios() {
            List<TimeRatio> out = new ArrayList<>();
            for (String p : permits()) {
                Row ours = row(contended, "ours", p);
                out.add(TimeRatio.of("contended, permits=" + p, "RSemaphore", ratio(row(contended, "redissonSemaphore", p), ours)));
                out.add(TimeRatio.of("contended, permits=" + p, "RPermitExpirableSemaphore", ratio(row(contended, "redissonPermitExpirable", p), ours)));
            }
            return out;
        }

        /** RedisPeersReport's table: implementation -> its cells after the name. */
        Map<String, List<String>> peerTable() {
            Map<String, List<String>> t = new LinkedHashMap<>();
            peers.stream().filter(l -> l.startsWith("| ") && !l.startsWith("| implementation")).forEach(l -> {
                List<String> cells = List.of(l.substring(1, l.length() - 1).split("\\|")).stream().map(String::trim).toList();
                t.put(cells.get(0), cells.subList(1, cells.size()));
            });
            for (String impl : NAMES.keySet()) if (!t.containsKey(impl)) throw new IllegalArgumentException("no row for " + impl + " in peers.md");
            return t;
        }

        /** What [impl] sent per acquisition in RedisPeersReport's batch [batch] ("uncontended" or "20 workers"). */
        String sent(String impl, String batch) {
            String line = peers.stream().filter(l -> l.startsWith(impl + ", ") && l.contains(batch)).findFirst().orElse("");
            Matcher m = Pattern.compile("(\\w+)=(\\d+)").matcher(line.contains("; executed") ? line.substring(0, line.indexOf("; executed")) : "");
            List<String> parts = new ArrayList<>();
            while (m.find()) {
                double n = Long.parseLong(m.group(2)) / BATCH;
                parts.add(m.group(1).toUpperCase(Locale.ROOT) + (n < 0.005 ? " < 0.01" : " " + f(n, 2)));
            }
            return parts.isEmpty() ? "n/a" : String.join(", ", parts);
        }
    }

    /**
     * Usage: DistributedReport --dir target/distributed --out docs/benchmarks-distributed.md
     * --chart docs/benchmarks-distributed.png [--server "`redis-server --version`"] [--splice docs/benchmarks.md]
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) a.put(args[i], args[i + 1]);
        if (!a.keySet().containsAll(List.of("--dir", "--out", "--chart")) || args.length % 2 != 0) {
            throw new IllegalArgumentException("usage: DistributedReport --dir DIR --out FILE.md --chart FILE.png [--server TEXT] "
                    + "[--splice benchmarks.md]; got " + String.join(" ", args));
        }
        Run run = Run.read(Paths.get(a.get("--dir")));
        Path out = Paths.get(a.get("--out")).toAbsolutePath();
        Path chart = Paths.get(a.get("--chart")).toAbsolutePath();
        Matcher v = Pattern.compile("v=(\\S+)").matcher(a.getOrDefault("--server", ""));
        String server = v.find() ? "`redis-server` " + v.group(1) : a.getOrDefault("--server", "`redis-server` (version not given)");
        Files.createDirectories(out.getParent());
        Files.createDirectories(chart.getParent());
        writeChart(run, chart);
        Files.writeString(out, markdown(run, server, out.getParent().relativize(chart).toString().replace('\\', '/')));
        if (a.containsKey("--splice")) {
            Path report = Paths.get(a.get("--splice")).toAbsolutePath();
            if (!Files.exists(report)) throw new IllegalArgumentException("no such report to splice into: " + report);
            String old = Files.readString(report);
            Matcher m = Pattern.compile("^" + Pattern.quote(HEADING) + "$", Pattern.MULTILINE).matcher(old);
            String before = m.find() ? old.substring(0, m.start()) : old + "\n";
            Files.writeString(report, before + markdown(run, server, report.getParent().relativize(chart).toString().replace('\\', '/')));
        }
        System.out.println("wrote " + out + " and " + chart + (a.containsKey("--splice") ? ", and the end of " + a.get("--splice") : ""));
    }

    static List<Row> rows(Path p) throws IOException {
        if (!Files.exists(p)) throw new IllegalArgumentException("no such results file: " + p);
        List<Row> rows = BenchmarkReport.parse(JsonParser.parseString(Files.readString(p)).getAsJsonArray());
        if (rows.isEmpty()) throw new IllegalArgumentException("no benchmark results in " + p);
        return rows;
    }

    static String f(double v, int decimals) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    static String jmhSettings(Row r) {
        String wt = str(r.raw(), "warmupTime");
        String mt = str(r.raw(), "measurementTime");
        return forks(r) + " × (" + str(r.raw(), "warmupIterations") + " warm-up" + (wt.equals(mt) ? "" : " of " + wt)
                + " + " + str(r.raw(), "measurementIterations") + " measured) iterations of " + mt + ".";
    }

    private static String forks(Row r) {
        String n = str(r.raw(), "forks");
        return n + (n.equals("1") ? " fork" : " forks");
    }

    /** "In this run ours takes less time than A beyond the error; is within error of parity with B; ..." */
    static String standing(List<TimeRatio> rs) {
        Map<String, List<String>> by = new LinkedHashMap<>();
        for (String k : List.of("takes less time than %s beyond the error", "is within error of parity with %s",
                "takes more time than %s beyond the error", "has no error estimate (too few iterations) against %s")) {
            by.put(k, new ArrayList<>());
        }
        for (TimeRatio r : rs) {
            int k = Double.isNaN(r.error()) ? 3 : r.value() + r.error() < 1 ? 0 : r.value() - r.error() > 1 ? 2 : 1;
            by.get(List.copyOf(by.keySet()).get(k)).add("`" + r.peer() + "`" + (r.where().equals("uncontended") ? "" : " (" + r.where() + ")"));
        }
        return "In this run ours " + by.entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .map(e -> String.format(e.getKey(), String.join(", ", e.getValue()))).collect(Collectors.joining("; ")) + ".";
    }

    static String markdown(Run run, String server, String chartLink) {
        Row u = run.uncontended().get(0);
        Row c = run.contended().get(0);
        Map<String, List<String>> t = run.peerTable();
        StringBuilder md = new StringBuilder(HEADING + "\n\n");
        md.append("Generated by `semaphore-benchmarks/run.sh distributed` (`DistributedReport`) from the run of ").append(run.date())
                .append(" UTC, whose output is in `semaphore-benchmarks/target/distributed/`; do not edit by hand. Setup:\n")
                .append("- ").append(BenchmarkReport.cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores, shared with other work; JDK ").append(str(u.raw(), "vmName")).append(' ').append(str(u.raw(), "jdkVersion"))
                .append("; ").append(server).append(" on a loopback port;\n")
                .append("- one fresh server per JMH fork, ").append(forks(u)).append(";\n")
                .append("- Redisson ").append(redissonVersion()).append(", with its defaults;\n")
                .append("- ours with its defaults: ").append(RedisPeersKt.oursDefaults()).append(".\n\n");
        md.append("""
                Ours and Redisson's ran in the same JMH invocation, with 99.9% errors. **The errors are wide**: on a \
                shared machine a loopback round trip varies a lot from one minute to the next, so absolute times from two \
                runs do not compare. Compare the ratios, which come from one run: a time ratio ours / peer below 1 means \
                ours takes less time per acquisition; its ± is the two relative errors combined.

                """);
        md.append("![time ratios ours / peer, with their errors](").append(chartLink).append(")\n\n");

        md.append("### Uncontended acquire + release, one thread (`DistributedUncontendedBenchmark`, ").append(u.unit().replace("us/", "µs/"))
                .append(", lower is better)\n\n").append(jmhSettings(u)).append(" Most of the time is the round trips to the server.\n\n");
        md.append("| implementation | ").append(u.unit().replace("us/", "µs/")).append(" | ± | ours / peer (time) |\n|---|---:|---:|---|\n");
        List<TimeRatio> ur = run.uncontendedRatios();
        String[] ratioCells = {"", ur.get(0).text(), ur.get(1).text(), "", ur.get(2).text() + " (vs ours `RedisLock`)"};
        int i = 0;
        for (Map.Entry<String, String> e : NAMES.entrySet()) {
            Row r = run.row(run.uncontended(), e.getKey(), null);
            md.append("| ").append(e.getValue()).append(" | ").append(f(r.score(), 1)).append(" | ").append(f(r.error(), 1))
                    .append(" | ").append(ratioCells[i++]).append(" |\n");
        }
        md.append('\n').append(standing(ur)).append("\n\n");
        md.append("Server time in scripts per uncontended acquisition (`INFO commandstats`, the table at the end), in µs: ours ")
                .append(t.get("ours").get(2)).append(" (`RedisSemaphore`) and ").append(t.get("oursLock").get(2)).append(" (`RedisLock`); `RSemaphore` ")
                .append(t.get("redissonSemaphore").get(2)).append(", `RPermitExpirableSemaphore` ").append(t.get("redissonPermitExpirable").get(2))
                .append(", `RFairLock` ").append(t.get("redissonFairLock").get(2)).append('.');
        double oursMin = Math.min(Double.parseDouble(t.get("ours").get(2)), Double.parseDouble(t.get("oursLock").get(2)));
        double theirsMax = Math.max(Double.parseDouble(t.get("redissonSemaphore").get(2)), Double.parseDouble(t.get("redissonPermitExpirable").get(2)));
        if (oursMin > theirsMax) {
            md.append(" The server's own cost favours Redisson's semaphore scripts: ours do the bookkeeping that leases, fencing "
                    + "tokens, idempotent replies and a FIFO line cost. On a machine with faster round trips that difference would weigh more.");
        }
        md.append("\n\n");

        int w = DistributedContendedBenchmark.WORKERS;
        md.append("### Contended, 2 processes × ").append(w).append(" workers on one semaphore (`DistributedContendedBenchmark`, acquisitions/s "
                + "of the measured JVM, higher is better)\n\n").append(jmhSettings(c)).append(" This JVM runs ").append(w)
                .append(" workers: coroutines for ours, threads on Redisson's blocking API. A second JVM runs ").append(w)
                .append(" more of the same implementation on the same semaphore the whole time.\n\n");
        md.append("| permits | ours | Redisson `RSemaphore` | Redisson `RPermitExpirableSemaphore` | ours / RSemaphore (time) | ours / RPermitExpirable (time) |\n"
                + "|---|---:|---:|---:|---|---|\n");
        List<TimeRatio> cr = run.contendedRatios();
        List<String> permits = run.permits();
        for (int k = 0; k < permits.size(); k++) {
            md.append("| ").append(permits.get(k));
            for (String impl : List.of("ours", "redissonSemaphore", "redissonPermitExpirable")) {
                Row r = run.row(run.contended(), impl, permits.get(k));
                md.append(" | ").append(f(r.score(), 1)).append(" ± ").append(f(r.error(), 1));
            }
            md.append(" | ").append(cr.get(2 * k).text()).append(" | ").append(cr.get(2 * k + 1).text()).append(" |\n");
        }
        md.append("\nTime ratio = Redisson's acquisitions/s ÷ ours. Below 1 means ours takes less time per acquisition. ")
                .append(standing(cr)).append("\n\n");

        md.append("""
                ### Commands per acquisition, server time, and fairness (`RedisPeersReport`)

                Each implementation gets a fresh server. The work is 1,000 uncontended cycles, then 20 workers × 50
                cycles on 1 permit, each batch run twice:
                - **First pass.** Counts the commands that clients sent, with `MONITOR`.
                - **Second pass, without `MONITOR`** (it slows the server down). Reads `INFO commandstats`:
                  - the commands the server ran, where the calls that scripts make count too;
                  - the microseconds spent in `EVALSHA`/`EVAL`.

                For fairness, 1 permit is held while 20 workers queue one after another, 100 ms apart; then the
                permit is released.

                """);
        run.peers().stream().filter(l -> l.startsWith("|")).forEach(l -> md.append(l).append('\n'));
        md.append("\n**Redisson's semaphores.**\n- They wake every waiter to retry. With 20 workers on 1 permit `RSemaphore` sends ")
                .append(t.get("redissonSemaphore").get(3)).append(" commands per acquisition (").append(run.sent("redissonSemaphore", "20 workers"))
                .append(") and `RPermitExpirableSemaphore` ").append(t.get("redissonPermitExpirable").get(3)).append(" (")
                .append(run.sent("redissonPermitExpirable", "20 workers")).append(").\n- `RSemaphore` ").append(fifo(t.get("redissonSemaphore")))
                .append("; `RPermitExpirableSemaphore` ").append(fifo(t.get("redissonPermitExpirable"))).append(".\n\n");
        md.append("**Redisson's fair lock.**\n- It ").append(fifo(t.get("redissonFairLock"))).append(".\n- With 20 workers on 1 permit it sends ")
                .append(t.get("redissonFairLock").get(3)).append(" commands per acquisition (").append(run.sent("redissonFairLock", "20 workers"))
                .append(") and the server runs ").append(t.get("redissonFairLock").get(4)).append(".\n\n");
        md.append("**Ours.**\n- It sends ").append(t.get("ours").get(0)).append(" commands per acquisition uncontended (")
                .append(run.sent("ours", "uncontended")).append(") and ").append(t.get("ours").get(3)).append(" with 20 workers on 1 permit (")
                .append(run.sent("ours", "20 workers")).append("), plus the waiters' heartbeats (one script per JVM and semaphore per heartbeat interval).\n")
                .append("- Uncontended, the server runs ").append(t.get("ours").get(1))
                .append(" commands per acquisition: the ones sent, and the calls its scripts make.\n")
                .append("- It ").append(fifo(t.get("ours"))).append("; `RedisLock` ").append(fifo(t.get("oursLock"))).append(".\n");
        return md.toString();
    }

    private static String fifo(List<String> cells) {
        String c = cells.get(cells.size() - 1);
        return c.startsWith("yes") ? "served the 20 queued in request order" : "did not serve the 20 queued in request order";
    }

    private static String redissonVersion() {
        try (InputStream in = DistributedReport.class.getResourceAsStream("/META-INF/maven/org.redisson/redisson/pom.properties")) {
            if (in == null) return "(version unknown)";
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "(version unknown)");
        } catch (IOException e) {
            return "(version unknown)";
        }
    }

    /** One bar per time ratio ours/peer, with its error, and the line at 1. */
    static void writeChart(Run run, Path file) throws IOException {
        List<TimeRatio> rs = new ArrayList<>(run.uncontendedRatios());
        rs.addAll(run.contendedRatios());
        // The figures go into the labels: a value printed on a bar would collide with its error bar.
        List<String> labels = rs.stream().map(r -> r.where().replace("contended, permits=", "contended p=") + ": "
                + (r.peer().equals("RFairLock") ? "RedisLock" : "ours") + " / " + r.peer().replace("RPermitExpirableSemaphore", "RPermitExpirable") + "  " + r.text()).toList();
        List<Double> values = rs.stream().map(r -> Double.isNaN(r.value()) ? 0 : r.value()).toList();
        List<Double> errors = rs.stream().map(r -> Double.isNaN(r.error()) ? 0 : r.error()).toList();
        double top = 0;
        for (int i = 0; i < rs.size(); i++) top = Math.max(top, values.get(i) + errors.get(i));
        CategoryChart c = new CategoryChartBuilder().width(1000).height(640)
                .title("semaphore-redis vs Redisson: time ratio ours / peer (< 1 = ours takes less time)").yAxisTitle("ratio ours / peer (time)").build();
        BenchmarkReport.styleRatioChart(c);
        // Linear from 0: an error bar can reach below 0, which a log axis cannot draw.
        c.getStyler().setYAxisMin(0.0);
        c.getStyler().setYAxisMax(Math.max(1.5, top * 1.15));
        c.getStyler().setErrorBarsColor(java.awt.Color.BLACK);
        c.getStyler().setLabelsVisible(false);
        c.addSeries("ours/peer", labels, values, errors);
        BitmapEncoder.saveBitmap(c, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
