/*
 * Turns JMH JSON results (one or more files of `-rf json`) and the memory probe's JSON into
 * docs/benchmarks.md and a PNG chart of the ratios ours/peer.
 *
 * Invariants:
 * - A row's "operation" is the benchmark method, or for methods named <operation>_<impl> the part before
 *   the last underscore; its "impl" is that suffix, or else the `impl` @Param. Rows of the same class,
 *   operation and other params form a group.
 * - In a group, rows whose impl is a reference (kotlinx, juc, ibm, floor, plain) are peers; every other row
 *   is ours; each ours row is divided by each peer row. Nothing is dropped: rows without a partner are
 *   still listed in the score table.
 * - In the sections of FLOOR_VS_PEER (where "floor" is the public-API floor, not a bare atomic), the floor row is
 *   also divided by the kotlinx row of its group (floor/kotlinx: what the public API costs against kotlinx).
 *   Against a floor the verdict says "above the floor", not "peer faster": a floor is not a competitor.
 * - The direction is stated per table: for time per operation (avgt, ss) lower is better, so a ratio
 *   below 1 means ours is faster; for throughput (thrpt) it is the other way round.
 * - No number is invented: scores, errors and units come from the JSON as JMH wrote them; an error that
 *   JMH could not compute (one iteration) is shown as "n/a".
 */
package dev.semaphore.benchmarks.report;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.awt.Color;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** Generates the benchmark report (Markdown + PNG) from JMH's JSON output. */
public final class BenchmarkReport {
    /** Impl names that are the references ours is divided by. */
    static final Set<String> REFERENCES = Set.of("kotlinx", "juc", "ibm", "floor", "plain");

    /**
     * Sections whose "floor" rows are a floor of the operation that a peer may be below (the public-API floor of a
     * suspend/resume, the exact-CAS floor of an uncontended cycle, the contract floor of the Java acquire), so the
     * report also divides the floor by each peer there (kotlinx, or IBM and java.util.concurrent for the Java rows).
     */
    static final Set<String> FLOOR_VS_PEER = Set.of("HandoffBenchmark", "ContendedBenchmark", "ContendedLockBenchmark",
            "UncontendedBenchmark", "UncontendedInterfaceBenchmark", "JavaUncontendedBenchmark");

    /** The peers a floor row is divided by, in FLOOR_VS_PEER sections. */
    static final Set<String> FLOOR_PEERS = Set.of("kotlinx", "ibm", "juc");

    /**
     * Benchmark classes in report order, with what each one measures: the Markdown template sections.md beside
     * this class (one "## ClassName" heading per class, then its text).
     */
    static final Map<String, String> SECTIONS = sections("sections.md");

    /** Reads [resource] (beside this class): its "## " headings in order, each with the text up to the next one. */
    static Map<String, String> sections(String resource) {
        Map<String, String> out = new LinkedHashMap<>();
        try (var in = BenchmarkReport.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("no " + resource + " beside " + BenchmarkReport.class.getName());
            String key = null;
            StringBuilder text = new StringBuilder();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1)) {
                if (line.startsWith("## ")) {
                    if (key != null) out.put(key, text.toString().strip());
                    key = line.substring(3).strip();
                    text.setLength(0);
                } else if (key != null) {
                    text.append(line).append('\n');
                }
            }
            if (key != null) out.put(key, text.toString().strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (out.isEmpty()) throw new IllegalStateException(resource + " has no \"## \" section");
        return out;
    }

    private BenchmarkReport() {
    }

    /** One JMH result row. */
    record Row(String cls, String operation, String impl, Map<String, String> params, String mode,
               double score, double error, String unit, Double allocNorm, JsonObject raw) {
        String paramText() {
            if (params.isEmpty()) return "";
            StringBuilder sb = new StringBuilder();
            params.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append('=').append(v));
            return sb.toString();
        }

        String groupKey() {
            return cls + "|" + operation + "|" + paramText();
        }

        boolean isReference() {
            return REFERENCES.contains(impl);
        }

        boolean lowerIsBetter() {
            return !mode.equals("thrpt");
        }
    }

    /** A ratio ours/peer. */
    record Ratio(Row ours, Row peer, double value, double error) {
        String label() {
            String p = ours.paramText();
            return ours.operation + (p.isEmpty() ? "" : " [" + p + "]") + " " + ours.impl + "/" + peer.impl;
        }
    }

    /**
     * Usage: BenchmarkReport --out docs/benchmarks.md --chart docs/benchmarks-ratios.png [--memory memory.json]
     * [--run "description of the run"] [--recheck-list FILE] [--recheck recheck.json ...] results.json [more.json ...]
     *
     * --recheck-list writes one JMH selector per group where a peer is faster (see {@link #recheckSelectors}), for
     * run.sh to measure again in a JMH invocation of its own; --recheck gives those second measurements back, and the
     * "Where a peer is faster" table then shows each row's second ratio beside the first.
     */
    public static void main(String[] args) throws IOException {
        Path out = null;
        Path chart = null;
        Path memory = null;
        String run = "unspecified";
        Path recheckList = null;
        List<Path> rechecks = new ArrayList<>();
        List<Path> inputs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Paths.get(args[++i]);
                case "--chart" -> chart = Paths.get(args[++i]);
                case "--memory" -> memory = Paths.get(args[++i]);
                case "--run" -> run = args[++i];
                case "--recheck-list" -> recheckList = Paths.get(args[++i]);
                case "--recheck" -> rechecks.add(Paths.get(args[++i]));
                default -> inputs.add(Paths.get(args[i]));
            }
        }
        if (out == null || chart == null || inputs.isEmpty()) {
            throw new IllegalArgumentException("usage: BenchmarkReport --out FILE.md --chart FILE.png [--memory memory.json] "
                    + "[--run TEXT] results.json...; got " + String.join(" ", args));
        }
        List<Row> rows = new ArrayList<>();
        for (Path p : inputs) {
            if (!Files.exists(p)) throw new IllegalArgumentException("no such results file: " + p);
            rows.addAll(parse(JsonParser.parseString(Files.readString(p)).getAsJsonArray()));
        }
        if (rows.isEmpty()) throw new IllegalArgumentException("no benchmark results in " + inputs);
        JsonArray mem = memory != null && Files.exists(memory)
                ? JsonParser.parseString(Files.readString(memory)).getAsJsonArray() : null;

        List<Row> recheckRows = new ArrayList<>();
        for (Path p : rechecks) {
            if (!Files.exists(p)) throw new IllegalArgumentException("no such recheck results file: " + p);
            recheckRows.addAll(parse(JsonParser.parseString(Files.readString(p)).getAsJsonArray()));
        }

        List<Path> measured = new ArrayList<>(inputs);
        measured.addAll(rechecks);
        if (memory != null && Files.exists(memory)) measured.add(memory);
        String measuredUntil = newestModification(measured);

        Map<String, List<Row>> byClass = groupByClass(rows);
        Map<String, List<Ratio>> ratios = new LinkedHashMap<>();
        byClass.forEach((cls, list) -> ratios.put(cls, ratios(list)));
        if (recheckList != null) {
            if (recheckList.toAbsolutePath().getParent() != null) Files.createDirectories(recheckList.toAbsolutePath().getParent());
            Files.write(recheckList, recheckSelectors(ratios), StandardCharsets.UTF_8);
        }

        if (out.toAbsolutePath().getParent() != null) Files.createDirectories(out.toAbsolutePath().getParent());
        if (chart.toAbsolutePath().getParent() != null) Files.createDirectories(chart.toAbsolutePath().getParent());
        writeChart(ratios, chart);
        String chartLink = out.toAbsolutePath().getParent().relativize(chart.toAbsolutePath()).toString().replace('\\', '/');
        String md = markdown(byClass, ratios, mem, rows.get(0).raw(), run, chartLink, rechecks.isEmpty() ? null : recheckRows,
                measuredUntil);
        // The ReadWriteLock rows are written by ReadWriteReport into their own file (by `run.sh readwrite`, and by
        // `run.sh full` before this report); the report carries them along, before the distributed rows, so
        // regenerating the other local rows does not drop them. Same directory, so its chart link works here too.
        // The Diagnostics section is written into this file by `run.sh diagnostics` (DiagnosticsReport); kept as it is.
        String diagnostics = DiagnosticsReport.kept(out);
        if (!diagnostics.isEmpty()) md += "\n" + diagnostics;
        Path readWrite = out.toAbsolutePath().resolveSibling("benchmarks-readwrite.md");
        if (Files.exists(readWrite)) md += "\n" + Files.readString(readWrite);
        // The distributed rows (semaphore-redis vs Redisson) are measured by `run.sh distributed` and written by
        // DistributedReport into their own file; the report carries them along, so regenerating the local rows does
        // not drop them. That file sits next to this one, so its relative chart link works here too.
        Path distributed = out.toAbsolutePath().resolveSibling("benchmarks-distributed.md");
        if (Files.exists(distributed)) md += "\n" + Files.readString(distributed);
        Files.writeString(out, md, StandardCharsets.UTF_8);
        System.out.println("wrote " + out + " and " + chart);
    }

    /** Parses JMH's JSON array into rows. */
    static List<Row> parse(JsonArray results) {
        List<Row> rows = new ArrayList<>();
        for (JsonElement e : results) {
            JsonObject o = e.getAsJsonObject();
            String full = o.get("benchmark").getAsString();
            String[] parts = full.split("\\.");
            String cls = parts[parts.length - 2];
            String method = parts[parts.length - 1];
            Map<String, String> params = new TreeMap<>();
            if (o.has("params")) {
                for (Map.Entry<String, JsonElement> p : o.getAsJsonObject("params").entrySet()) {
                    params.put(p.getKey(), p.getValue().getAsString());
                }
            }
            String operation = method;
            String impl = params.remove("impl");
            int us = method.lastIndexOf('_');
            if (us > 0) {
                operation = method.substring(0, us);
                impl = method.substring(us + 1);
            }
            if (impl == null) impl = "ours";
            JsonObject pm = o.getAsJsonObject("primaryMetric");
            double score = pm.get("score").getAsDouble();
            double error = parseDouble(pm.get("scoreError"));
            Double alloc = null;
            if (o.has("secondaryMetrics")) {
                JsonObject sm = o.getAsJsonObject("secondaryMetrics");
                if (sm.has("gc.alloc.rate.norm")) alloc = sm.getAsJsonObject("gc.alloc.rate.norm").get("score").getAsDouble();
            }
            rows.add(new Row(cls, operation, impl, params, o.get("mode").getAsString(), score, error,
                    pm.get("scoreUnit").getAsString(), alloc, o));
        }
        return rows;
    }

    /** The park probe's secondary result (ManyThreads.Parks): the pool threads' parks per section. */
    static final String PARKS = "parksPerSection";

    /** The score of JMH secondary result [name] of [r], or null when the row has none. */
    static Double secondary(Row r, String name) {
        JsonObject sm = r.raw() == null ? null : r.raw().getAsJsonObject("secondaryMetrics");
        if (sm == null || !sm.has(name)) return null;
        double v = parseDouble(sm.getAsJsonObject(name).get("score"));
        return Double.isNaN(v) ? null : v;
    }

    private static double parseDouble(JsonElement e) {
        if (e == null || e.isJsonNull()) return Double.NaN;
        try {
            return e.getAsDouble();
        } catch (NumberFormatException | UnsupportedOperationException ex) {
            return Double.NaN; // JMH writes "NaN" when it has too few samples
        }
    }

    private static Map<String, List<Row>> groupByClass(List<Row> rows) {
        Map<String, List<Row>> byClass = new LinkedHashMap<>();
        for (String cls : SECTIONS.keySet()) {
            for (Row r : rows) if (r.cls().equals(cls)) byClass.computeIfAbsent(cls, k -> new ArrayList<>()).add(r);
        }
        for (Row r : rows) if (!SECTIONS.containsKey(r.cls())) byClass.computeIfAbsent(r.cls(), k -> new ArrayList<>()).add(r);
        return byClass;
    }

    /** Every ours/peer pair within each group of [rows]. */
    static List<Ratio> ratios(List<Row> rows) {
        Map<String, List<Row>> groups = new LinkedHashMap<>();
        for (Row r : rows) groups.computeIfAbsent(r.groupKey(), k -> new ArrayList<>()).add(r);
        List<Ratio> out = new ArrayList<>();
        for (List<Row> g : groups.values()) {
            for (Row ours : g) {
                if (ours.isReference()) continue;
                for (Row peer : g) {
                    if (!peer.isReference() || !peer.unit().equals(ours.unit())) continue;
                    out.add(ratio(ours, peer));
                }
            }
            for (Row floor : g) {
                if (!floor.impl().equals("floor") || !FLOOR_VS_PEER.contains(floor.cls())) continue;
                for (Row peer : g) {
                    if (FLOOR_PEERS.contains(peer.impl()) && peer.unit().equals(floor.unit())) out.add(ratio(floor, peer));
                }
            }
        }
        return out;
    }

    /** ours / peer, its error the two relative JMH errors combined (NaN when either has none). */
    static Ratio ratio(Row ours, Row peer) {
        double v = ours.score() / peer.score();
        double rel = Math.sqrt(sq(ours.error() / ours.score()) + sq(peer.error() / peer.score()));
        return new Ratio(ours, peer, v, v * rel);
    }

    private static double sq(double x) {
        return x * x;
    }

    static String fmt(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) return "n/a";
        double a = Math.abs(v);
        if (a == 0) return "0";
        if (a >= 100) return String.format(Locale.ROOT, "%.1f", v);
        if (a >= 1) return String.format(Locale.ROOT, "%.3f", v);
        if (a >= 0.001) return String.format(Locale.ROOT, "%.4f", v);
        return String.format(Locale.ROOT, "%.2e", v);
    }

    /** When the newest of [files] was last written, to the minute (UTC): when the run that made them ended. */
    static String newestModification(List<Path> files) throws IOException {
        long newest = Long.MIN_VALUE;
        for (Path p : files) newest = Math.max(newest, Files.getLastModifiedTime(p).toMillis());
        return minute(ZonedDateTime.ofInstant(java.time.Instant.ofEpochMilli(newest), ZoneOffset.UTC));
    }

    private static String minute(ZonedDateTime t) {
        return t.format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm"));
    }

    private static String markdown(Map<String, List<Row>> byClass, Map<String, List<Ratio>> ratios, JsonArray mem,
                                   JsonObject anyRow, String run, String chartLink, List<Row> recheckRows,
                                   String measuredUntil) {
        StringBuilder md = new StringBuilder();
        md.append("# Benchmarks\n\n");
        md.append("Generated by `semaphore-benchmarks/run.sh` (JMH ").append(str(anyRow, "jmhVersion"))
                .append(") from JMH's JSON results; do not edit by hand.\n\n");
        md.append("## Machine and run\n\n");
        md.append("- Run: ").append(run).append('\n');
        md.append("- Measured until (UTC): ").append(measuredUntil)
                .append(" (the newest results file); report written ").append(minute(ZonedDateTime.now(ZoneOffset.UTC))).append('\n');
        md.append("- CPU: ").append(cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores available to the JVM (nproc)\n");
        md.append("- JDK: ").append(str(anyRow, "vmName")).append(' ').append(str(anyRow, "jdkVersion"))
                .append(" (VM ").append(str(anyRow, "vmVersion")).append(")\n");
        md.append("- OS: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version")).append('\n');
        md.append("\nThe machine has 2 cores and is shared with other work, so absolute figures are noisy and "
                + "contended results on 2 cores say little about many-core behaviour; compare the ratios, which come "
                + "from ours and the peers measured in the same run, and mind the error columns.\n\n");
        md.append("**How to read the ratios**: every score below is a time per operation (lower is better) unless "
                + "the unit says ops/time. The ratio is ours / peer: **below 1 means ours is faster**, above 1 means "
                + "the peer is faster. The ratio's ± is the two relative JMH errors (99.9% intervals) combined; "
                + "n/a when a run had too few iterations to compute one.\n\n");
        md.append("![ratios ours/peer](").append(chartLink).append(")\n\n");
        md.append("Why the rows are what they are (allocation and CPU profiles of the hand-off and the contended case, "
                + "ours next to kotlinx, and the machine code of the uncontended cycles): [profiles.md](profiles.md).\n\n");
        summaryTable(md, ratios, recheckRows);

        for (Map.Entry<String, List<Row>> e : byClass.entrySet()) {
            String cls = e.getKey();
            List<Row> rows = e.getValue();
            Row first = rows.get(0);
            md.append("## ").append(cls).append("\n\n");
            md.append(SECTIONS.getOrDefault(cls, "")).append("\n\n");
            md.append("JMH: mode ").append(first.mode()).append(", forks ").append(str(first.raw(), "forks"))
                    .append(", warm-up ").append(str(first.raw(), "warmupIterations")).append(" x ").append(str(first.raw(), "warmupTime"))
                    .append(", measurement ").append(str(first.raw(), "measurementIterations")).append(" x ")
                    .append(str(first.raw(), "measurementTime")).append(". ")
                    .append(first.lowerIsBetter() ? "Lower score is better." : "Higher score is better.").append("\n\n");
            boolean alloc = rows.stream().anyMatch(r -> r.allocNorm() != null);
            boolean parks = rows.stream().anyMatch(r -> secondary(r, PARKS) != null);
            md.append("| operation | params | impl | score | error (99.9%) | unit |").append(alloc ? " B/op |" : "")
                    .append(parks ? " parks/section |" : "").append('\n');
            md.append("|---|---|---|---:|---:|---|").append(alloc ? "---:|" : "").append(parks ? "---:|" : "").append('\n');
            for (Row r : grouped(rows)) {
                md.append("| ").append(r.operation()).append(" | ").append(r.paramText()).append(" | ").append(r.impl())
                        .append(" | ").append(fmt(r.score())).append(" | ").append(fmt(r.error())).append(" | ").append(r.unit()).append(" |");
                if (alloc) md.append(' ').append(r.allocNorm() == null ? "" : fmt(r.allocNorm())).append(" |");
                if (parks) md.append(' ').append(secondary(r, PARKS) == null ? "" : fmt(secondary(r, PARKS))).append(" |");
                md.append('\n');
            }
            List<Ratio> rs = ratios.get(cls);
            if (!rs.isEmpty()) {
                md.append("\n| operation | params | ours | peer | ratio ours/peer | ± | verdict |\n");
                md.append("|---|---|---|---|---:|---:|---|\n");
                for (Ratio r : rs) {
                    md.append("| ").append(r.ours().operation()).append(" | ").append(r.ours().paramText()).append(" | ")
                            .append(r.ours().impl()).append(" | ").append(r.peer().impl()).append(" | ").append(fmt(r.value()))
                            .append(" | ").append(fmt(r.error())).append(" | ").append(verdict(r)).append(" |\n");
                }
            }
            if (cls.equals("UncontendedInterfaceBenchmark")) shapeTable(md, ratios);
            md.append('\n');
        }

        md.append("## Memory per waiter\n\n");
        if (mem == null) {
            md.append("No memory probe output was given (run `MemoryPerWaiter`).\n");
        } else {
            md.append("A plain program (`dev.semaphore.benchmarks.MemoryPerWaiter`, not JMH, on Serial GC with a fixed "
                    + "heap) queues N waiters on a primitive whose only permit is held and reads the used heap (MemoryMXBean, "
                    + "the least of 8 successive full GCs) before and after. For coroutines, bytes per waiter include the "
                    + "suspended coroutine itself and \"net\" subtracts a bare suspended coroutine with no primitive; for "
                    + "Java futures, \"net\" subtracts a bare incomplete CompletableFuture. Net is what the primitive adds "
                    + "(it can be negative when a primitive suspends more cheaply than the bare baseline). Lower is better; "
                    + "a ratio below 1 means ours retains less.\n\n");
            md.append("| case | group | impl | waiters | bytes/waiter | net of baseline |\n|---|---|---|---:|---:|---:|\n");
            for (JsonElement el : mem) {
                JsonObject o = el.getAsJsonObject();
                md.append("| ").append(str(o, "name")).append(" | ").append(str(o, "group")).append(" | ").append(str(o, "impl"))
                        .append(" | ").append(str(o, "waiters")).append(" | ").append(fmt(parseDouble(o.get("bytesPerWaiter"))))
                        .append(" | ").append(o.get("netOfBaseline").isJsonNull() ? "" : fmt(parseDouble(o.get("netOfBaseline")))).append(" |\n");
            }
            md.append("\n| group | ours/peer (bytes/waiter) | ours/peer (net) |\n|---|---:|---:|\n");
            for (JsonElement a : mem) {
                JsonObject ours = a.getAsJsonObject();
                if (!str(ours, "impl").equals("ours")) continue;
                for (JsonElement b : mem) {
                    JsonObject peer = b.getAsJsonObject();
                    if (!str(peer, "group").equals(str(ours, "group")) || str(peer, "impl").equals("ours")) continue;
                    double t = parseDouble(ours.get("bytesPerWaiter")) / parseDouble(peer.get("bytesPerWaiter"));
                    String net;
                    if (ours.get("netOfBaseline").isJsonNull() || peer.get("netOfBaseline").isJsonNull()) {
                        net = "n/a";
                    } else if (parseDouble(peer.get("netOfBaseline")) <= 0) {
                        net = "n/a (peer adds nothing over the baseline)";
                    } else {
                        net = fmt(parseDouble(ours.get("netOfBaseline")) / parseDouble(peer.get("netOfBaseline")));
                    }
                    md.append("| ").append(str(ours, "group")).append(": ours/").append(str(peer, "impl")).append(" | ")
                            .append(fmt(t)).append(" | ").append(net).append(" |\n");
                }
            }
            floorShareTable(md, mem);
        }
        return md.toString();
    }

    /**
     * Every row of this run where a peer is faster than ours beyond the error, with what its section's floor says
     * about it (the floor of the same operation and parameters, when the section has one).
     */
    static void summaryTable(StringBuilder md, Map<String, List<Ratio>> ratios, List<Row> recheckRows) {
        List<Ratio> all = new ArrayList<>();
        ratios.values().forEach(all::addAll);
        List<Ratio> slower = slowerThanAPeer(ratios);
        md.append("## Where a peer is faster\n\n");
        if (slower.isEmpty()) {
            md.append("In this run no peer is faster than ours beyond the error.\n\n");
            return;
        }
        md.append("Every row of this run where a peer is faster than ours beyond the error. Where the section has a "
                + "floor of the same operation (the least the operation can cost under the constraint its section states), "
                + "`ours/floor` says how far ours is above it and `floor/peer` whether the floor itself is above the peer: "
                + "**explained by the floor** when ours is at or below the floor (within error) and the floor is above "
                + "the peer beyond error; **above the floor** when ours costs more than the floor beyond error.");
        boolean recheck = recheckRows != null;
        if (recheck) {
            md.append(" `recheck` is the same ratio measured again after the run, in a JMH invocation of its own that runs "
                    + "only that group (the same JMH settings, fresh JVMs): a row whose recheck is within error of 1 or "
                    + "below it was caught in a slow phase of this shared machine, not slower every time: its reading then "
                    + "ends in **not confirmed by the recheck**.");
        }
        md.append("\n\n| section | operation | params | peer | ours/peer | ± | ")
                .append(recheck ? "recheck ours/peer | ± | " : "")
                .append("ours/floor | ± | floor/peer | ± | reading |\n");
        md.append("|---|---|---|---|---:|---:|").append(recheck ? "---:|---:|" : "").append("---:|---:|---:|---:|---|\n");
        for (Ratio r : slower) {
            Ratio toFloor = null;
            Ratio floorToPeer = null;
            for (Ratio o : all) {
                if (!o.ours().groupKey().equals(r.ours().groupKey())) continue;
                if (o.ours() == r.ours() && o.peer().impl().equals("floor")) toFloor = o;
                if (o.ours().impl().equals("floor") && o.peer() == r.peer()) floorToPeer = o;
            }
            String reading;
            if (toFloor == null) {
                reading = "no floor in this section";
            } else if (!verdict(toFloor).startsWith("above the floor")
                    && floorToPeer != null && verdict(floorToPeer).startsWith("peer below the floor")) {
                reading = "explained by the floor";
            } else if (verdict(toFloor).startsWith("above the floor")) {
                reading = "above the floor";
            } else {
                reading = "at the floor, but the floor is not above the peer beyond error";
            }
            Ratio again = recheck ? recheckOf(r, recheckRows) : null;
            if (again != null && !verdict(again).startsWith("peer faster")) reading += "; not confirmed by the recheck";
            md.append("| ").append(r.ours().cls()).append(" | ").append(r.ours().operation()).append(" | ")
                    .append(r.ours().paramText()).append(" | ").append(r.peer().impl()).append(" | ").append(fmt(r.value()))
                    .append(" | ").append(fmt(r.error())).append(" | ");
            if (recheck) {
                md.append(again == null ? "not measured" : fmt(again.value())).append(" | ")
                        .append(again == null ? "" : fmt(again.error())).append(" | ");
            }
            md.append(toFloor == null ? "" : fmt(toFloor.value()))
                    .append(" | ").append(toFloor == null ? "" : fmt(toFloor.error())).append(" | ")
                    .append(floorToPeer == null ? "" : fmt(floorToPeer.value())).append(" | ")
                    .append(floorToPeer == null ? "" : fmt(floorToPeer.error())).append(" | ").append(reading).append(" |\n");
        }
        md.append('\n');
    }

    /** Every ours/peer ratio of the run where the peer (not a floor) is faster than ours beyond the error. */
    static List<Ratio> slowerThanAPeer(Map<String, List<Ratio>> ratios) {
        List<Ratio> slower = new ArrayList<>();
        for (List<Ratio> rs : ratios.values()) {
            for (Ratio r : rs) {
                if (r.ours().impl().equals("ours") && !r.peer().impl().equals("floor") && verdict(r).startsWith("peer faster")) slower.add(r);
            }
        }
        return slower;
    }

    /**
     * One JMH command-line selector per group of {@link #slowerThanAPeer} rows, each on a line of its own: an anchored
     * regex of the benchmark method (every impl of the operation when the impl is part of the method's name), then
     * "-p name=value" for each parameter of the row except impl, so that ours, the peer and the floor of exactly that
     * group run again. Parameter values are JMH's, which hold no spaces.
     */
    static List<String> recheckSelectors(Map<String, List<Ratio>> ratios) {
        Set<String> lines = new LinkedHashSet<>();
        for (Ratio r : slowerThanAPeer(ratios)) {
            String benchmark = r.ours().raw().get("benchmark").getAsString();
            String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            boolean implInName = method.lastIndexOf('_') > 0;
            String regex = implInName
                    ? "^" + benchmark.substring(0, benchmark.lastIndexOf('_') + 1).replace(".", "\\.") + "[A-Za-z0-9]+$"
                    : "^" + benchmark.replace(".", "\\.") + "$";
            StringBuilder line = new StringBuilder(regex);
            r.ours().params().forEach((k, v) -> line.append(" -p ").append(k).append('=').append(v));
            lines.add(line.toString());
        }
        return new ArrayList<>(lines);
    }

    /** The recheck of [r]: the same ours/peer ratio from the recheck rows of the same group, or null if not measured. */
    static Ratio recheckOf(Ratio r, List<Row> recheckRows) {
        Row ours = null;
        Row peer = null;
        for (Row x : recheckRows) {
            if (!x.groupKey().equals(r.ours().groupKey())) continue;
            if (x.impl().equals(r.ours().impl())) ours = x;
            if (x.impl().equals(r.peer().impl())) peer = x;
        }
        return ours == null || peer == null ? null : ratio(ours, peer);
    }

    /**
     * Direct call (UncontendedBenchmark) vs one-method interface (UncontendedInterfaceBenchmark): ours/kotlinx and
     * ours/floor of each operation measured in both shapes, side by side.
     */
    static void shapeTable(StringBuilder md, Map<String, List<Ratio>> ratios) {
        List<Ratio> direct = ratios.getOrDefault("UncontendedBenchmark", List.of());
        List<Ratio> iface = ratios.getOrDefault("UncontendedInterfaceBenchmark", List.of());
        List<String> ops = new ArrayList<>();
        for (Ratio r : iface) if (!ops.contains(r.ours().operation())) ops.add(r.ours().operation());
        if (ops.isEmpty()) return;
        md.append("\nThe two shapes side by side (each ratio from rows of one run; a shape missing from this run is n/a):\n\n");
        md.append("| operation | shape | ours/kotlinx | ± | ours/floor | ± |\n|---|---|---:|---:|---:|---:|\n");
        for (String op : ops) {
            for (Map.Entry<String, List<Ratio>> shape : List.of(Map.entry("direct call", direct), Map.entry("one-method interface", iface))) {
                Ratio kx = find(shape.getValue(), op, "kotlinx");
                Ratio fl = find(shape.getValue(), op, "floor");
                md.append("| ").append(op).append(" | ").append(shape.getKey()).append(" | ")
                        .append(kx == null ? "n/a" : fmt(kx.value())).append(" | ").append(kx == null ? "" : fmt(kx.error())).append(" | ")
                        .append(fl == null ? "n/a" : fmt(fl.value())).append(" | ").append(fl == null ? "" : fmt(fl.error())).append(" |\n");
            }
        }
    }

    private static Ratio find(List<Ratio> rs, String operation, String peer) {
        for (Ratio r : rs) {
            if (r.ours().impl().equals("ours") && r.ours().operation().equals(operation) && r.peer().impl().equals(peer)) return r;
        }
        return null;
    }

    /** The public-API floor of a queued waiter (impl "floor") divided by each coroutine waiter of ours and kotlinx. */
    static void floorShareTable(StringBuilder md, JsonArray mem) {
        JsonObject floor = null;
        for (JsonElement e : mem) if (str(e.getAsJsonObject(), "impl").equals("floor")) floor = e.getAsJsonObject();
        if (floor == null) return;
        double f = parseDouble(floor.get("bytesPerWaiter"));
        md.append("\n**Public-API floor of a queued waiter.** The `floor` case is the least a coroutine primitive that waits "
                + "in kotlinx.coroutines' public `suspendCancellableCoroutine` must retain per queued waiter (`PublicApiFloor.kt`, `QueueFloor`): the "
                + "suspended coroutine, a `suspendCancellableCoroutine` continuation with its parent-job handle, the wrapper of "
                + "one `invokeOnCancellation` handler (the handler itself shared by all waiters) and the continuation's "
                + "reference in a plain array; no node of its own. \"floor share\" = floor / bytes per waiter: the part of "
                + "a waiter's bytes that waiting in a CancellableContinuation forces; \"above the floor\" is what the "
                + "implementation adds. kotlinx can be below the floor: its waiters reuse internal machinery (reusable "
                + "continuation, segment cells) that the public API does not offer. Ours can be below it too: its waiter "
                + "does not wait in a CancellableContinuation (`Suspending.kt`: it is its own continuation and Job handler).\n\n");
        md.append("| group | impl | bytes/waiter | floor | floor share | above the floor (B) |\n|---|---|---:|---:|---:|---:|\n");
        for (JsonElement e : mem) {
            JsonObject o = e.getAsJsonObject();
            String group = str(o, "group");
            if (!(group.equals("semaphore") || group.equals("lock"))) continue;
            double b = parseDouble(o.get("bytesPerWaiter"));
            md.append("| ").append(group).append(" | ").append(str(o, "impl")).append(" | ").append(fmt(b)).append(" | ")
                    .append(fmt(f)).append(" | ").append(fmt(f / b)).append(" | ").append(fmt(b - f)).append(" |\n");
        }
    }

    /** The rows with each group together (groups in order of first appearance), ours before the peers. */
    static List<Row> grouped(List<Row> rows) {
        Map<String, List<Row>> groups = new LinkedHashMap<>();
        for (Row r : rows) groups.computeIfAbsent(r.groupKey(), k -> new ArrayList<>()).add(r);
        List<Row> out = new ArrayList<>();
        for (List<Row> g : groups.values()) {
            for (Row r : g) if (!r.isReference()) out.add(r);
            for (Row r : g) if (r.isReference()) out.add(r);
        }
        return out;
    }

    static String verdict(Ratio r) {
        boolean lower = r.ours().lowerIsBetter();
        double v = r.value();
        if (Double.isNaN(v)) return "n/a";
        boolean oursBetter = lower ? v < 1 : v > 1;
        double factor = v >= 1 ? v : 1 / v;
        boolean withinError = !Double.isNaN(r.error()) && Math.abs(v - 1) <= r.error();
        String size = String.format(Locale.ROOT, " (%.2fx%s)", factor, Double.isNaN(r.error()) ? "; no error estimate" : "");
        if (r.peer().impl().equals("floor")) {
            // A floor is the least the operation can cost: ours is at it or above it (below it only by noise).
            if (withinError) return "at the floor (within error)";
            return (oursBetter ? "below the floor" : "above the floor") + size;
        }
        if (r.ours().impl().equals("floor")) {
            // floor/peer: how the floor compares with the peer (the peer can be below a public-API floor).
            if (withinError) return "floor and peer within error";
            return (oursBetter ? "floor faster" : "peer below the floor") + size;
        }
        if (withinError) return "within error";
        return (oursBetter ? "ours faster" : "peer faster") + size;
    }

    static String str(JsonObject o, String key) {
        JsonElement e = o.get(key);
        return e == null || e.isJsonNull() ? "?" : e.getAsString();
    }

    /**
     * The CPU's model name with its family and model numbers (a cloud CPU's name, "AMD EPYC", can stand for several
     * generations whose atomics cost very differently, so two runs on different machines can be told apart).
     */
    static String cpuModel() {
        try {
            return cpuModel(Files.readAllLines(Paths.get("/proc/cpuinfo")));
        } catch (IOException e) {
            return System.getProperty("os.arch") + " (CPU model unknown)";
        }
    }

    /** {@link #cpuModel()} from the lines of /proc/cpuinfo (its first processor). */
    static String cpuModel(List<String> cpuinfo) {
        String name = null;
        String family = null;
        String model = null;
        for (String line : cpuinfo) {
            if (line.isBlank() && name != null) break; // the end of the first processor's block
            int colon = line.indexOf(':');
            if (colon < 0) continue;
            String key = line.substring(0, colon).trim();
            String value = line.substring(colon + 1).trim();
            switch (key) {
                case "model name" -> name = value;
                case "cpu family" -> family = value;
                case "model" -> model = value;
                default -> { }
            }
        }
        if (name == null) return System.getProperty("os.arch") + " (CPU model unknown)";
        return family == null || model == null ? name : name + " (family " + family + ", model " + model + ")";
    }

    /** One bar chart per benchmark class, ratios ours/peer, with a line at 1. */
    private static void writeChart(Map<String, List<Ratio>> ratios, Path file) throws IOException {
        List<CategoryChart> charts = new ArrayList<>();
        // The grid writer draws every chart in a cell the size of the first: give them all the widest width.
        int most = ratios.values().stream().mapToInt(List::size).max().orElse(0);
        int width = Math.max(800, 80 + 40 * most);
        for (Map.Entry<String, List<Ratio>> e : ratios.entrySet()) {
            if (e.getValue().isEmpty()) continue;
            List<String> labels = new ArrayList<>();
            List<Double> values = new ArrayList<>();
            for (Ratio r : e.getValue()) {
                labels.add(shortLabel(r));
                values.add(Double.isNaN(r.value()) || r.value() <= 0 ? 1.0 : r.value());
            }
            CategoryChart c = new CategoryChartBuilder().width(width).height(520).title(e.getKey() + ": ours / peer (time; < 1 = ours faster)")
                    .xAxisTitle("").yAxisTitle("ratio ours / peer").build();
            // Log scale: a ratio of 2 and one of 1/2 are the same distance from the line at 1.
            c.getStyler().setYAxisLogarithmic(true);
            c.getStyler().setYAxisMin(Math.min(0.5, min(values) / 1.5));
            c.getStyler().setYAxisMax(Math.max(2.0, max(values) * 1.5));
            styleRatioChart(c);
            c.addSeries("ours/peer", labels, values);
            charts.add(c);
        }
        if (charts.isEmpty()) {
            CategoryChart c = new CategoryChartBuilder().width(width).height(200).title("no ours/peer pairs in these results").build();
            c.addSeries("none", List.of("none"), List.of(0.0));
            charts.add(c);
        }
        // Two charts per row, all in one PNG.
        String name = file.toString();
        String base = name.endsWith(".png") ? name.substring(0, name.length() - 4) : name;
        int cols = charts.size() > 1 ? 2 : 1;
        int rows = (charts.size() + cols - 1) / cols;
        while (charts.size() < rows * cols) {
            CategoryChart blank = new CategoryChartBuilder().width(charts.get(0).getWidth()).height(charts.get(0).getHeight()).title("").build();
            blank.addSeries(" ", List.of(" "), List.of(1.0));
            blank.getStyler().setLegendVisible(false);
            blank.getStyler().setChartBackgroundColor(Color.WHITE);
            blank.getStyler().setSeriesColors(new Color[] {Color.WHITE});
            blank.getStyler().setAxisTicksVisible(false);
            blank.getStyler().setPlotBorderVisible(false);
            blank.getStyler().setPlotGridLinesVisible(false);
            blank.getStyler().setPlotBackgroundColor(Color.WHITE);
            charts.add(blank);
        }
        BitmapEncoder.saveBitmap(charts, rows, cols, base, BitmapEncoder.BitmapFormat.PNG);
    }

    /** The look of a ratio chart (one blue series, values on the bars, rotated labels) and its red line at 1. */
    static void styleRatioChart(CategoryChart c) {
        c.getStyler().setLegendVisible(false);
        c.getStyler().setXAxisLabelRotation(45);
        c.getStyler().setYAxisDecimalPattern("0.###");
        c.getStyler().setLabelsVisible(true);
        c.getStyler().setLabelsRotation(90);
        c.getStyler().setLabelsFontColorAutomaticEnabled(false);
        c.getStyler().setLabelsFontColor(Color.BLACK);
        c.getStyler().setChartBackgroundColor(Color.WHITE);
        c.getStyler().setPlotGridVerticalLinesVisible(false);
        c.getStyler().setSeriesColors(new Color[] {new Color(60, 110, 180)});
        c.getStyler().setAxisTickLabelsFont(c.getStyler().getAxisTickLabelsFont().deriveFont(10f));
        c.getStyler().setChartTitleFont(c.getStyler().getChartTitleFont().deriveFont(13f));
        c.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        c.getStyler().setAnnotationLineColor(Color.RED);
        c.addAnnotation(new AnnotationLine(1.0, false, false));
    }

    private static double min(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).min().orElse(1.0);
    }

    private static double max(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).max().orElse(1.0);
    }

    private static String shortLabel(Ratio r) {
        StringBuilder sb = new StringBuilder(r.ours().operation());
        for (Map.Entry<String, String> p : r.ours().params().entrySet()) {
            String k = p.getKey();
            if (k.equals("sections") || k.equals("iterations")) continue; // constant per run: clutter
            sb.append(' ').append(abbreviate(k)).append('=').append(p.getValue());
        }
        if (!r.ours().impl().equals("ours") || !r.peer().impl().equals("kotlinx")) {
            sb.append(" (").append(r.ours().impl()).append('/').append(r.peer().impl()).append(')');
        }
        return sb.toString();
    }

    private static String abbreviate(String key) {
        return switch (key) {
            case "coroutines" -> "c";
            case "dispatcher" -> "d";
            case "permits" -> "p";
            case "waiters" -> "N";
            default -> key;
        };
    }
}
