/*
 * What diagnostics cost (issue 29), from `run.sh diagnostics`: docs/benchmarks-diagnostics.md, its JSON summary, and
 * the Diagnostics section of docs/benchmarks.md.
 *
 * - Diagnostics off, before vs after: round i is one JMH fork of the before jar, then one of the after jar, back to
 *   back (before-i.json, after-i.json). As in MergeRounds, a row's ratio is the mean of its per-round ratios
 *   after / before, ± the Student-t half-width over the rounds (99.9% here); before and after are the means of the
 *   rounds' scores with the same half-width. Within error = the interval contains 1.
 * - Diagnostics on: DiagnosticsBenchmark in one JMH run (diagnostics.json); each level / off of the same row, its ±
 *   the two JMH 99.9% errors combined (BenchmarkReport.ratio); bytes/op is JMH's gc.alloc.rate.norm.
 */
package dev.semaphore.benchmarks.report;

import static dev.semaphore.benchmarks.report.BenchmarkReport.fmt;
import static dev.semaphore.benchmarks.report.BenchmarkReport.str;

import com.google.gson.GsonBuilder;
import dev.semaphore.benchmarks.distributed.MergeRounds;
import dev.semaphore.benchmarks.report.BenchmarkReport.Ratio;
import dev.semaphore.benchmarks.report.BenchmarkReport.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Generates the diagnostics cost report from the rounds' and DiagnosticsBenchmark's JMH JSON. */
public final class DiagnosticsReport {
    static final String HEADING = "## Diagnostics";

    private DiagnosticsReport() {
    }

    /** One row over the rounds: its scores before and after, and their ratios, round by round. */
    record Paired(Row row, List<Double> before, List<Double> after, List<Double> ratios) {
        String name() {
            String p = row.paramText();
            return "`" + row.cls() + "." + row.operation() + "` " + row.impl() + (p.isEmpty() ? "" : " (" + p + ")")
                    + (row.isReference() ? ", control" : "");
        }

        double ratio() {
            return mean(ratios);
        }

        double error() {
            return MergeRounds.halfWidth(ratios, 0.999);
        }

        String verdict() {
            double v = ratio();
            double e = error();
            if (Math.abs(v - 1) <= e) return "within error";
            boolean slower = row.lowerIsBetter() == v > 1;
            return String.format(Locale.ROOT, "%s by %.1f%% ± %.1f%%", slower ? "slower" : "faster", 100 * Math.abs(v - 1), 100 * e);
        }
    }

    /**
     * Usage: DiagnosticsReport --dir DIR --before REF --after REF --out FILE.md --json FILE.json [--on REF] [--splice benchmarks.md]
     * [--run TEXT]; --on names the commit DiagnosticsBenchmark was measured at, when not the after one.
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) a.put(args[i], args[i + 1]);
        if (!a.keySet().containsAll(List.of("--dir", "--before", "--after", "--out", "--json")) || args.length % 2 != 0) {
            throw new IllegalArgumentException("usage: DiagnosticsReport --dir DIR --before REF --after REF --out FILE.md "
                    + "--json FILE.json [--on REF] [--splice benchmarks.md] [--run TEXT]; got " + String.join(" ", args));
        }
        Path dir = Paths.get(a.get("--dir"));
        List<Map<String, Row>> before = new ArrayList<>();
        List<Map<String, Row>> after = new ArrayList<>();
        for (int i = 1; Files.exists(dir.resolve("before-" + i + ".json")); i++) {
            before.add(byKey(DistributedReport.rows(dir.resolve("before-" + i + ".json"))));
            after.add(byKey(DistributedReport.rows(dir.resolve("after-" + i + ".json"))));
        }
        if (before.size() < 2) throw new IllegalArgumentException("at least 2 rounds are needed in " + dir + ", found " + before.size());
        List<Paired> paired = new ArrayList<>();
        for (Map.Entry<String, Row> e : before.get(0).entrySet()) {
            Function<List<Map<String, Row>>, List<Double>> scores = side -> side.stream()
                    .map(round -> round.get(e.getKey()).score()).collect(Collectors.toList());
            List<Double> b = scores.apply(before);
            List<Double> f = scores.apply(after);
            List<Double> r = new ArrayList<>();
            for (int i = 0; i < b.size(); i++) r.add(f.get(i) / b.get(i));
            paired.add(new Paired(e.getValue(), b, f, r));
        }
        List<String> order = List.copyOf(BenchmarkReport.SECTIONS.keySet());
        paired.sort(Comparator.comparingInt(p -> order.indexOf(p.row().cls())));
        List<Row> levels = DistributedReport.rows(dir.resolve("diagnostics.json"));

        Path out = Paths.get(a.get("--out")).toAbsolutePath();
        Path json = Paths.get(a.get("--json")).toAbsolutePath();
        Files.createDirectories(out.getParent());
        String run = a.getOrDefault("--run", "");
        String disturbed = Files.exists(dir.resolve("disturbed.txt")) ? Files.readString(dir.resolve("disturbed.txt")) : "";
        String onRef = a.getOrDefault("--on", a.get("--after"));
        Files.writeString(out, markdown(paired, levels, a.get("--before"), a.get("--after"), onRef, run, disturbed,
                out.getParent().relativize(json).toString(), BenchmarkReport.newestModification(List.of(dir.resolve("diagnostics.json")))));
        Files.writeString(json, summary(paired, levels, a.get("--before"), a.get("--after"), onRef, run, disturbed));
        if (a.containsKey("--splice")) {
            Path report = Paths.get(a.get("--splice")).toAbsolutePath();
            String link = report.getParent().relativize(out).toString();
            Files.writeString(report, splice(Files.readString(report), section(paired, levels, a.get("--before"), link)));
        }
        System.out.println("wrote " + out + ", " + json + (a.containsKey("--splice") ? " and the Diagnostics section of " + a.get("--splice") : ""));
    }

    private static Map<String, Row> byKey(List<Row> rows) {
        Map<String, Row> m = new LinkedHashMap<>();
        for (Row r : BenchmarkReport.grouped(rows)) m.put(r.groupKey() + "|" + r.impl(), r);
        return m;
    }

    static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    private static String pm(double v, double e) {
        return fmt(v) + " ± " + fmt(e);
    }

    private static String ratioText(double v, double e) {
        return String.format(Locale.ROOT, "%.3f ± %.3f", v, e);
    }

    /** Each DiagnosticsBenchmark row divided by the off row of its operation. */
    static List<Ratio> toOff(List<Row> levels) {
        List<Ratio> out = new ArrayList<>();
        for (Row r : levels) {
            Row off = levels.stream().filter(o -> o.operation().equals(r.operation()) && o.params().get("diagnostics").equals("off"))
                    .findFirst().orElseThrow(() -> new IllegalArgumentException("no diagnostics=off row for " + r.operation()));
            out.add(BenchmarkReport.ratio(r, off));
        }
        return out;
    }

    /** Bytes per acquire-release: JMH's B/op, divided by the sections of an invocation for the contended row. */
    private static double bytesPerSection(Row r) {
        String sections = r.operation().startsWith("contended") ? r.params().get("sections") : null;
        return r.allocNorm() == null ? Double.NaN : r.allocNorm() / (sections == null ? 1 : Double.parseDouble(sections));
    }

    static String markdown(List<Paired> paired, List<Row> levels, String beforeRef, String afterRef, String onRef, String run,
                           String disturbed, String jsonLink, String measuredUntil) {
        Row any = levels.get(0);
        int n = paired.get(0).ratios().size();
        StringBuilder md = new StringBuilder("# What diagnostics cost\n\n");
        md.append("Generated by `semaphore-benchmarks/run.sh diagnostics` from JMH's JSON results (summary: [")
                .append(jsonLink).append("](").append(jsonLink).append(")); do not edit by hand.\n\n");
        md.append("- Before: `").append(beforeRef).append("`; after: `").append(afterRef).append('`')
                .append(onRef.equals(afterRef) ? "" : "; DiagnosticsBenchmark measured again at `" + onRef + "`, a change of the observed path only")
                .append('\n');
        md.append("- Measured until (UTC): ").append(measuredUntil).append('\n');
        md.append("- CPU: ").append(BenchmarkReport.cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores; JDK: ").append(str(any.raw(), "vmName")).append(' ').append(str(any.raw(), "jdkVersion")).append("; JMH ")
                .append(str(any.raw(), "jmhVersion")).append('\n');
        if (!run.isEmpty()) md.append("- Run: ").append(run).append('\n');
        long redone = disturbed.lines().filter(l -> l.startsWith("redone")).count();
        long kept = disturbed.lines().filter(l -> l.startsWith("kept")).count();
        md.append("- JMH runs during which another java or Maven process used the machine, and whose round was measured again: ")
                .append(redone).append("; rounds kept although disturbed: ").append(kept)
                .append(redone + kept == 0 ? "" : " (run.sh's log of them is in the JSON summary)").append('\n');
        long resumed = disturbed.lines().filter(l -> l.startsWith("== resuming")).count();
        if (resumed > 0) {
            md.append("- The run was stopped from outside and resumed (RESUME=1) ").append(resumed)
                    .append(resumed == 1 ? " time" : " times").append(": the same jars, the round it was in measured again whole\n");
        }
        md.append('\n');

        md.append("## Diagnostics off: before and after\n\n");
        md.append("Method: ").append(n).append(" paired rounds, each one JMH run of the before jar then one of the after jar (")
                .append(DistributedReport.jmhSettings(paired.get(0).row()).replaceAll("\\.$", ""))
                .append("); before and after are the means of the rounds' scores, after / before the mean of the rounds' "
                        + "ratios, each ± the 99.9% Student-t half-width over the rounds; within error when that interval contains 1 "
                        + "(every row is a time: above 1 is slower). Control rows are the peers, which the change cannot move.\n\n");
        md.append("| row | unit | before | after | after / before | verdict |\n|---|---|---|---|---|---|\n");
        for (Paired p : paired) {
            md.append("| ").append(p.name()).append(" | ").append(p.row().unit()).append(" | ")
                    .append(pm(mean(p.before()), MergeRounds.halfWidth(p.before(), 0.999))).append(" | ")
                    .append(pm(mean(p.after()), MergeRounds.halfWidth(p.after(), 0.999))).append(" | ")
                    .append(ratioText(p.ratio(), p.error())).append(" | ").append(p.verdict()).append(" |\n");
        }

        md.append("\n## Diagnostics on: DiagnosticsBenchmark\n\n");
        md.append("Method: one JMH run of `").append(onRef).append("`'s jar with -prof gc (").append(DistributedReport.jmhSettings(any).replaceAll("\\.$", ""))
                .append("); each level divided by diagnostics=off of the same row, ± the two JMH 99.9% errors combined; "
                        + "B/op is JMH's gc.alloc.rate.norm, and B per acquire-release divides the contended row's by its sections.\n\n");
        md.append("| row | diagnostics | score | ratio to off | B/op | B per acquire-release |\n|---|---|---|---|---|---|\n");
        for (Ratio r : toOff(levels)) {
            Row l = r.ours();
            md.append("| `").append(l.operation()).append("` | ").append(l.params().get("diagnostics")).append(" | ")
                    .append(pm(l.score(), l.error())).append(' ').append(l.unit()).append(" | ")
                    .append(ratioText(r.value(), r.error())).append(" | ").append(fmt(l.allocNorm() == null ? Double.NaN : l.allocNorm()))
                    .append(" | ").append(fmt(bytesPerSection(l))).append(" |\n");
        }
        return md.toString();
    }

    /** The short section of docs/benchmarks.md: one paragraph and the headline figures. */
    static String section(List<Paired> paired, List<Row> levels, String beforeRef, String link) {
        List<Paired> ours = paired.stream().filter(p -> !p.row().isReference()).toList();
        List<String> outside = paired.stream().filter(p -> !p.verdict().equals("within error"))
                .map(p -> p.name() + " " + p.verdict()).toList();
        Paired narrow = ours.stream().min(Comparator.comparingDouble(Paired::error)).orElseThrow();
        Paired wide = ours.stream().max(Comparator.comparingDouble(Paired::error)).orElseThrow();
        StringBuilder md = new StringBuilder(HEADING + "\n\n");
        md.append("What the diagnostics (issue 29) cost, from `run.sh diagnostics`; the tables, method and machine are in [")
                .append(link).append("](").append(link).append("). With diagnostics off, ")
                .append(ours.stream().filter(p -> p.verdict().equals("within error")).count()).append(" of ").append(ours.size())
                .append(" rows of ours are within error of `").append(beforeRef).append("`, the commit before the work: after / before ")
                .append(String.format(Locale.ROOT, "from %.3f to %.3f over %d paired rounds, their 99.9%% half-widths from %.3f (%s) to %.3f (%s)",
                        ours.stream().mapToDouble(Paired::ratio).min().orElse(Double.NaN), ours.stream().mapToDouble(Paired::ratio).max().orElse(Double.NaN),
                        paired.get(0).ratios().size(), narrow.error(), narrow.name(), wide.error(), wide.name()))
                .append(outside.isEmpty() ? "" : "; outside it: " + String.join("; ", outside))
                .append(". With diagnostics on, our Semaphore against off in the same run (ratio of time, bytes per acquire-release):\n\n");
        Map<String, List<Ratio>> byOp = new LinkedHashMap<>();
        for (Ratio r : toOff(levels)) {
            if (!r.ours().params().get("diagnostics").equals("off")) byOp.computeIfAbsent(r.ours().operation(), k -> new ArrayList<>()).add(r);
        }
        byOp.forEach((op, rs) -> md.append("- `").append(op).append("`: ").append(rs.stream()
                .map(r -> r.ours().params().get("diagnostics") + " " + ratioText(r.value(), r.error()) + " (" + fmt(bytesPerSection(r.ours())) + " B)")
                .collect(Collectors.joining(", "))).append('\n'));
        return md.toString();
    }

    /** [report] with [section] in place of its Diagnostics section, or else before the ReadWriteLock or distributed one, or at the end. */
    static String splice(String report, String section) {
        int[] own = bounds(report);
        String kept = own[0] < 0 ? report : report.substring(0, own[0]) + report.substring(own[1]);
        for (String h : List.of(ReadWriteReport.HEADING, DistributedReport.HEADING)) {
            Matcher m = Pattern.compile("^" + Pattern.quote(h) + "$", Pattern.MULTILINE).matcher(kept);
            if (m.find()) return kept.substring(0, m.start()) + section + "\n" + kept.substring(m.start());
        }
        return kept.stripTrailing() + "\n\n" + section;
    }

    /** The Diagnostics section of the report at [path] ("" without one), for BenchmarkReport to carry along. */
    static String kept(Path path) throws IOException {
        String report = Files.exists(path) ? Files.readString(path) : "";
        int[] own = bounds(report);
        return own[0] < 0 ? "" : report.substring(own[0], own[1]).stripTrailing() + "\n";
    }

    /** Where the Diagnostics section of [report] starts and ends (up to the next "## " heading); -1s without one. */
    private static int[] bounds(String report) {
        Matcher own = Pattern.compile("^" + Pattern.quote(HEADING) + "$", Pattern.MULTILINE).matcher(report);
        if (!own.find()) return new int[] {-1, -1};
        Matcher next = Pattern.compile("^## ", Pattern.MULTILINE).matcher(report);
        return new int[] {own.start(), next.find(own.end()) ? next.start() : report.length()};
    }

    record OffRow(String benchmark, String impl, String params, String unit, List<Double> before, List<Double> after,
                  List<Double> ratios, double ratio, double ratioError999, String verdict) {
    }

    record OnRow(String benchmark, String diagnostics, double score, double scoreError999, String unit, double ratioToOff,
                 double ratioError999, Double bytesPerOp, double bytesPerAcquireRelease) {
    }

    record Summary(String before, String after, String diagnosticsOnMeasuredAt, String run, List<String> disturbances, List<OffRow> diagnosticsOff,
                   List<OnRow> diagnosticsOn) {
    }

    static String summary(List<Paired> paired, List<Row> levels, String beforeRef, String afterRef, String onRef, String run,
                          String disturbed) {
        List<OffRow> off = paired.stream().map(p -> new OffRow(p.row().cls() + "." + p.row().operation(), p.row().impl(),
                p.row().paramText(), p.row().unit(), p.before(), p.after(), p.ratios(), p.ratio(), p.error(), p.verdict())).toList();
        List<OnRow> on = toOff(levels).stream().map(x -> new OnRow(x.ours().operation(), x.ours().params().get("diagnostics"),
                x.ours().score(), x.ours().error(), x.ours().unit(), x.value(), x.error(), x.ours().allocNorm(), bytesPerSection(x.ours()))).toList();
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().serializeSpecialFloatingPointValues().create()
                .toJson(new Summary(beforeRef, afterRef, onRef, run, disturbed.lines().toList(), off, on)) + "\n";
    }
}
