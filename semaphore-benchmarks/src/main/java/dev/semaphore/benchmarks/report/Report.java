/*
 * The benchmark report: docs/benchmarks.md, from the JMH JSON files kept in docs/results/, laid out by the Markdown
 * template report.md beside this class. One generator for every section.
 *
 * The template: {runs} becomes the list of runs (each directory of results has a run.txt: one line that says which run
 * wrote it, on what) and {ratios} the table of every ratio. Each "## " heading opens a section; one whose first line is
 * a comment of directives,
 *     <!-- files: local/a.json diagnostics/before-*.json; select: ClassRegex; ratios: a,b/c d/e; axis: impl -->
 * (files, relative to the results directory, and a glob only in the file name; select, a regex that the benchmark
 * class must match whole; ratios, the axis values divided, each side a comma list; axis: impl, the default, a param's
 * name, or "file"; same: classes compared as one (R2); include: a Markdown file of the results directory copied in;
 * chart: the A/B of `ratios` that its chart draws, by default all, R8), has its other lines copied, then its chart, then
 * its table of scores and the settings they were measured with; any other section is text, copied as it is.
 *
 * Rules:
 * R1 A row is one result: its benchmark class, its operation (the method, or for a method named <operation>_<x> the
 *    part before the last underscore), its params, and its axis value, what the section compares: x, else the param
 *    "impl" (default); the param named by `axis`; or, for axis "file", the last word of its file's name before the
 *    round ("before" in before-3.json).
 * R2 Two rows are divided only if they have the same class (or two classes that the directive `same` names), the same
 *    operation and every param that both have equal: a param that only one of them has does not matter
 *    (ReentrantReadWriteLock's rows have no dispatcher, so they stand beside every dispatcher's).
 * R3 A ratio A / B is of times: of the scores for time per operation, of their inverses for throughput; below 1 means
 *    A is faster. Its ± is the two relative 99.9% errors of JMH combined; "n/a" when JMH had none (one iteration).
 * R4 Rounds: a file whose name ends in -N.json is round N. A row measured in two or more rounds is their mean
 *    ± the Student-t half-width at 99.9%, and a ratio of two such rows is the mean of the per-round ratios
 *    (rows of the same round number) ± the same half-width.
 * R5 The verdict: "within error" when |ratio - 1| <= ±; else "A faster (k×)" or "B faster (k×)" ("lower" for units
 *    that are not times). No figure is typed by hand: scores, errors, units, settings and params come from the files.
 * R6 Rechecks: recheck-*.json, in the directory of the file a group came from, hold groups where a peer was faster,
 *    measured a second time; the ratio table shows such a group's second ratio beside its first. --recheck-list writes
 *    for run.sh, per such group, that directory and the group's selector.
 * R7 A section none of whose files exist says so ("not measured yet") instead of failing: the state of a clone before
 *    the run that writes them; one with only some of its files is an error that names the missing ones.
 * R8 Charts: each section with ratios gets an SVG chart, charts/<its anchor>.svg beside the report, written in the same run
 *    and embedded under its heading; it draws the Ratio objects of the table, nothing computed again (Charts.java, C1-C5).
 *    The directory holds only those: any other .svg in it is deleted.
 */
package dev.semaphore.benchmarks.report;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.commons.math3.distribution.TDistribution;

/** Generates docs/benchmarks.md from the JMH JSON in a results directory and the template report.md. */
public final class Report {
    private Report() {}

    /** One result (R1), in round [round] (0 when its file is not a round). */
    record Row(String cls, String operation, String axis, Map<String, String> params, String mode, double score,
               double error, String unit, Map<String, Double> extras, int round, JsonObject raw) {
        String key() { return cls + "|" + operation + "|" + axis + "|" + params; }

        boolean comparable(Row o) { // R2
            if (!operation.equals(o.operation) || !unit.equals(o.unit)) return false;
            for (Map.Entry<String, String> p : params.entrySet()) {
                String v = o.params.get(p.getKey());
                if (v != null && !v.equals(p.getValue())) return false;
            }
            return true;
        }

        double time() { return mode.equals("thrpt") ? 1 / score : score; } // R3: throughput is inverted
    }

    /** A row pooled over its rounds (R4); [rounds] maps a round number to that round's row. */
    record Cell(Row first, double score, double error, Map<String, Double> extras, Map<Integer, Row> rounds) {
        static Cell of(List<Row> rows) {
            Map<Integer, Row> rounds = new TreeMap<>();
            for (Row r : rows) rounds.put(r.round(), r);
            Row first = rows.get(0);
            if (rows.size() == 1) return new Cell(first, first.score(), first.error(), first.extras(), rounds);
            List<Double> scores = rows.stream().map(Row::score).toList();
            Map<String, Double> extras = new TreeMap<>();
            for (String k : first.extras().keySet()) extras.put(k, mean(rows.stream().map(r -> r.extras().getOrDefault(k, Double.NaN)).toList()));
            return new Cell(first, mean(scores), halfWidth(scores), extras, rounds);
        }
    }

    /** A / B of two cells (R3, R4), and its recheck (R6) or null. */
    record Ratio(Section section, Cell a, Cell b, double value, double error, Ratio recheck) {
        static Ratio of(Section s, Cell a, Cell b, Ratio recheck) {
            List<Double> perRound = new ArrayList<>();
            for (Map.Entry<Integer, Row> e : a.rounds().entrySet()) {
                Row rb = b.rounds().get(e.getKey());
                if (e.getKey() > 0 && rb != null) perRound.add(e.getValue().time() / rb.time());
            }
            if (perRound.size() >= 2) return new Ratio(s, a, b, mean(perRound), halfWidth(perRound), recheck);
            double v = a.first().time() / b.first().time();
            double rel = Math.hypot(a.error() / a.score(), b.error() / b.score());
            return new Ratio(s, a, b, v, v * rel, recheck);
        }

        /** -1: A is faster (or lower), 1: B is, 0: within error or n/a (R5). */
        int side() {
            if (Double.isNaN(value)) return 0;
            if (!Double.isNaN(error) && Math.abs(value - 1) <= error) return 0;
            return value < 1 ? -1 : 1;
        }

        /** True if the scores are times or throughputs, so that below 1 means A is faster; else it means lower (R5). */
        boolean times() { return a.first().unit().matches("(ns|us|µs|ms|s)/op|ops/.*"); }

        String verdict() { // R5
            if (Double.isNaN(value)) return "n/a";
            if (side() == 0) return "within error";
            String winner = side() < 0 ? a.first().axis() : b.first().axis();
            String how = String.format(Locale.ROOT, " (%.2f×%s)", value < 1 ? 1 / value : value,
                    Double.isNaN(error) ? ", no error estimate" : "");
            return "**" + winner + "** " + (times() ? "faster" : "lower") + how;
        }
    }

    /** A "## " section of the template and its rows. */
    record Section(String title, String text, List<String> files, Pattern select, String axis, List<List<String>[]> ratios,
                   Set<String> same, String include, List<Cell> cells, List<List<String>[]> chart) {
        String anchor() { return title.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 -]", "").replace(' ', '-'); }

        /** The params that differ between this section's rows: the ones that name a row (the others are in the run line). */
        Set<String> varying() {
            Map<String, Set<String>> values = new TreeMap<>();
            for (Cell c : cells) c.first().params().forEach((k, v) -> values.computeIfAbsent(k, x -> new LinkedHashSet<>()).add(v));
            Set<String> out = new LinkedHashSet<>();
            values.forEach((k, v) -> { if (v.size() > 1 || cells.stream().anyMatch(c -> !c.first().params().containsKey(k))) out.add(k); });
            return out;
        }

        String rowName(Row r) {
            boolean classes = cells.stream().map(c -> c.first().cls()).distinct().count() > 1;
            StringBuilder sb = new StringBuilder(classes ? r.cls() + "." + r.operation() : r.operation());
            for (String k : varying()) if (r.params().containsKey(k)) sb.append(' ').append(k).append('=').append(r.params().get(k));
            return sb.toString();
        }
    }

    static final Pattern DIRECTIVES = Pattern.compile("<!--(.*)-->");
    static final Pattern ROUND = Pattern.compile("(.*?)-(\\d+)\\.json");

    /**
     * Usage: Report --results docs/results --out docs/benchmarks.md [--recheck-list FILE local/a.json,local/b.json]:
     * the last writes a directory and a JMH selector per group of those files where a peer is faster (R6).
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) throw new IllegalArgumentException("usage: Report "
                    + "--results DIR --out FILE.md [--recheck-list FILE FILES]; got " + String.join(" ", args));
            a.put(args[i], args[++i]);
            if (args[i - 1].equals("--recheck-list")) a.put("--recheck-files", i + 1 < args.length ? args[++i] : "");
        }
        if (!a.containsKey("--results") || !a.containsKey("--out")) throw new IllegalArgumentException("--results and --out are required");
        Path results = Path.of(a.get("--results"));
        List<Section> sections = sections(template(), results);
        List<Ratio> ratios = ratios(sections, rechecks(results));
        if (a.containsKey("--recheck-list")) {
            Files.write(Path.of(a.get("--recheck-list")), recheckSelectors(ratios, List.of(a.get("--recheck-files").split(","))));
        }
        Path out = Path.of(a.get("--out")).toAbsolutePath();
        Map<String, String> charts = charts(sections, ratios);
        Files.writeString(out, markdown(template(), sections, ratios, results), StandardCharsets.UTF_8);
        writeCharts(out.getParent(), charts);
        System.out.println("wrote " + out + " and " + charts.size() + " charts in " + out.getParent().resolve("charts"));
    }

    /** The SVG of every section's chart (R8) by its path relative to the report, in the order of the sections. */
    static Map<String, String> charts(List<Section> sections, List<Ratio> ratios) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Section s : sections) {
            List<Ratio> rs = Charts.charted(s, ratios);
            if (s.chart() != null && !s.cells().isEmpty()) {
                for (List<String>[] p : s.chart()) {
                    if (rs.stream().noneMatch(r -> p[0].contains(r.a().first().axis()) && p[1].contains(r.b().first().axis()))) {
                        throw new IllegalArgumentException("section \"" + s.title() + "\": chart " + String.join(",", p[0]) + "/"
                                + String.join(",", p[1]) + " names no ratio of the section");
                    }
                }
            }
            if (!rs.isEmpty() && out.put(Charts.file(s), Charts.svg(s, rs)) != null) {
                throw new IllegalArgumentException("two sections would write " + Charts.file(s));
            }
        }
        return out;
    }

    /** Writes [charts] under [dir], and deletes any other .svg of their directory (R8). */
    static void writeCharts(Path dir, Map<String, String> charts) throws IOException {
        Path folder = dir.resolve("charts");
        Files.createDirectories(folder);
        for (Path old : glob(folder, "*.svg")) {
            if (!charts.containsKey("charts/" + old.getFileName())) Files.delete(old);
        }
        for (Map.Entry<String, String> c : charts.entrySet()) Files.writeString(dir.resolve(c.getKey()), c.getValue(), StandardCharsets.UTF_8);
    }

    static String template() throws IOException {
        try (var in = Objects.requireNonNull(Report.class.getResourceAsStream("report.md"), "no report.md beside Report")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The rows of every directory's recheck-*.json (R6) by key, the first of each kept. */
    static Map<String, Row> rechecks(Path results) throws IOException {
        Map<String, Row> out = new LinkedHashMap<>();
        if (!Files.isDirectory(results)) return out;
        try (var dirs = Files.list(results)) {
            for (Path dir : dirs.filter(Files::isDirectory).sorted().toList()) {
                for (Path p : glob(dir, "recheck-*.json")) for (Row r : parse(p, "impl")) out.putIfAbsent(r.key(), r);
            }
        }
        return out;
    }

    /** The sections of [template], each with its rows read from [results]. */
    static List<Section> sections(String template, Path results) throws IOException {
        List<Section> out = new ArrayList<>();
        String[] parts = template.split("(?m)^## ");
        for (int i = 1; i < parts.length; i++) {
            String title = parts[i].substring(0, parts[i].indexOf('\n')).strip();
            String body = parts[i].substring(parts[i].indexOf('\n') + 1).strip();
            Matcher m = DIRECTIVES.matcher(body);
            if (!m.lookingAt()) { // a section of text only
                out.add(new Section(title, body, List.of(), null, "impl", List.of(), Set.of(), null, List.of(), null));
                continue;
            }
            Map<String, String> d = new LinkedHashMap<>();
            for (String kv : m.group(1).split(";")) {
                int colon = kv.indexOf(':');
                if (colon < 0) throw new IllegalArgumentException("section \"" + title + "\": directive without a colon: " + kv.strip());
                String key = kv.substring(0, colon).strip();
                if (!Set.of("files", "select", "ratios", "axis", "same", "include", "chart").contains(key)) {
                    throw new IllegalArgumentException("section \"" + title + "\": unknown directive " + key);
                }
                d.put(key, kv.substring(colon + 1).strip());
            }
            List<List<String>[]> ratios = pairs(title, d.getOrDefault("ratios", ""));
            List<List<String>[]> chart = d.containsKey("chart") ? pairs(title, d.get("chart")) : null;
            List<String> files = d.containsKey("files") ? List.of(d.get("files").split("\\s+")) : List.of();
            Pattern select = Pattern.compile(d.getOrDefault("select", ".*"));
            String axis = d.getOrDefault("axis", "impl");
            Map<String, List<Row>> byKey = new LinkedHashMap<>();
            List<String> missing = new ArrayList<>();
            for (String f : files) {
                List<Path> found = glob(results, f);
                if (found.isEmpty()) missing.add(f);
                for (Path p : found) {
                    for (Row r : parse(p, axis)) if (select.matcher(r.cls()).matches()) byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
                }
            }
            if (!missing.isEmpty() && missing.size() < files.size()) {
                throw new IllegalArgumentException("section \"" + title + "\": no results file " + missing + " under " + results);
            }
            if (!files.isEmpty() && missing.isEmpty() && byKey.isEmpty()) {
                throw new IllegalArgumentException("section \"" + title + "\": no row of " + select + " in " + files + " under " + results);
            }
            List<Cell> cells = byKey.values().stream().map(Cell::of).toList();
            Set<String> same = Set.copyOf(List.of(d.getOrDefault("same", "").split("\\s+")));
            out.add(new Section(title, body.substring(m.end()).strip(), files, select, axis, ratios, same, d.get("include"), cells, chart));
        }
        return out;
    }

    /** The A/B pairs of a `ratios` or `chart` directive, each side a comma list. */
    static List<List<String>[]> pairs(String title, String directive) {
        List<List<String>[]> out = new ArrayList<>();
        for (String r : directive.split("\\s+")) {
            if (r.isEmpty()) continue;
            String[] ab = r.split("/");
            if (ab.length != 2) throw new IllegalArgumentException("section \"" + title + "\": a ratio is A/B, was " + r);
            @SuppressWarnings("unchecked") List<String>[] pair = new List[] {List.of(ab[0].split(",")), List.of(ab[1].split(","))};
            out.add(pair);
        }
        return out;
    }

    /** The files of [dir] that [pattern] (a glob in its last part) names, sorted. */
    static List<Path> glob(Path dir, String pattern) throws IOException {
        Path full = dir.resolve(pattern);
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(full.getParent())) return out;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(full.getParent(), full.getFileName().toString())) {
            ds.forEach(out::add);
        }
        out.sort(null);
        return out;
    }

    /** The rows of a JMH JSON file (R1). */
    static List<Row> parse(Path file, String axisName) throws IOException {
        String name = file.getFileName().toString();
        Matcher round = ROUND.matcher(name);
        int n = round.matches() ? Integer.parseInt(round.group(2)) : 0;
        String base = round.matches() ? round.group(1) : name.replaceFirst("\\.json$", "");
        List<Row> rows = new ArrayList<>();
        for (JsonElement e : JsonParser.parseString(Files.readString(file)).getAsJsonArray()) {
            JsonObject o = e.getAsJsonObject();
            String benchmark = o.get("benchmark").getAsString();
            String[] parts = benchmark.split("\\.");
            String method = parts[parts.length - 1];
            Map<String, String> params = new TreeMap<>();
            if (o.has("params")) o.getAsJsonObject("params").entrySet().forEach(p -> params.put(p.getKey(), p.getValue().getAsString()));
            int us = method.lastIndexOf('_');
            String operation = us > 0 ? method.substring(0, us) : method;
            String impl = us > 0 ? method.substring(us + 1) : params.getOrDefault("impl", "ours");
            if (!axisName.equals("impl")) params.put("impl", impl); // then a part of the row's name
            String axis = switch (axisName) {
                case "file" -> base.substring(base.lastIndexOf('-') + 1);
                case "impl" -> impl;
                default -> params.get(axisName);
            };
            if (axis == null) throw new IllegalArgumentException(benchmark + " in " + file + " has no param " + axisName);
            params.remove(axisName);
            JsonObject pm = o.getAsJsonObject("primaryMetric");
            Map<String, Double> extras = new TreeMap<>();
            if (o.has("secondaryMetrics")) {
                for (Map.Entry<String, JsonElement> s : o.getAsJsonObject("secondaryMetrics").entrySet()) {
                    String k = s.getKey().equals("gc.alloc.rate.norm") ? "B/op" : s.getKey();
                    if (k.equals("B/op") || !k.matches(".*[.·].*")) extras.put(k, number(s.getValue().getAsJsonObject().get("score")));
                }
            }
            rows.add(new Row(parts[parts.length - 2], operation, axis, params, o.get("mode").getAsString(),
                    number(pm.get("score")), number(pm.get("scoreError")), pm.get("scoreUnit").getAsString(), extras, n, o));
        }
        return rows;
    }

    static double number(JsonElement e) {
        try {
            return e == null || e.isJsonNull() ? Double.NaN : e.getAsDouble();
        } catch (NumberFormatException | UnsupportedOperationException x) {
            return Double.NaN; // JMH writes "NaN" when it has too few iterations
        }
    }

    /** Every ratio of every section, in the order of its sections, their ratio directives and their rows. */
    static List<Ratio> ratios(List<Section> sections, Map<String, Row> rechecks) {
        List<Ratio> out = new ArrayList<>();
        for (Section s : sections) {
            for (List<String>[] pair : s.ratios()) {
                for (Cell a : s.cells()) {
                    if (!pair[0].contains(a.first().axis())) continue;
                    for (String bAxis : pair[1]) {
                        for (Cell b : s.cells()) {
                            Row x = a.first(), y = b.first();
                            boolean sameClass = x.cls().equals(y.cls()) || s.same().containsAll(List.of(x.cls(), y.cls()));
                            if (!y.axis().equals(bAxis) || !sameClass || !x.comparable(y)) continue;
                            Row ra = rechecks.get(x.key()), rb = rechecks.get(y.key());
                            Ratio again = ra == null || rb == null ? null : Ratio.of(s, Cell.of(List.of(ra)), Cell.of(List.of(rb)), null);
                            out.add(Ratio.of(s, a, b, again));
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * One line per group of [files] where the verdict goes to a peer (not to a floor): the directory of the group's file,
     * then a JMH selector: an anchored regex of the benchmark (every impl of it when the impl is the method's suffix),
     * then "-p k=v" for each param (R6).
     */
    static List<String> recheckSelectors(List<Ratio> ratios, List<String> files) {
        Set<String> lines = new LinkedHashSet<>();
        for (Ratio r : ratios) {
            Row a = r.a().first(), b = r.b().first();
            if (!a.axis().startsWith("ours") || b.axis().startsWith("ours") || b.axis().equals("floor") || r.value() <= 1
                    || r.verdict().equals("within error") || r.section().files().stream().noneMatch(files::contains)) continue;
            String benchmark = a.raw().get("benchmark").getAsString();
            String method = benchmark.substring(benchmark.lastIndexOf('.') + 1);
            String regex = method.lastIndexOf('_') > 0
                    ? "^" + benchmark.substring(0, benchmark.lastIndexOf('_') + 1).replace(".", "\\.") + "[A-Za-z0-9]+$"
                    : "^" + benchmark.replace(".", "\\.") + "$";
            String file = r.section().files().stream().filter(files::contains).findFirst().orElseThrow();
            StringBuilder line = new StringBuilder(file.substring(0, file.lastIndexOf('/') + 1).replaceAll("/$", ""))
                    .append(' ').append(regex);
            a.params().forEach((k, v) -> line.append(" -p ").append(k).append('=').append(v));
            lines.add(line.toString());
        }
        return new ArrayList<>(lines);
    }

    static String markdown(String template, List<Section> sections, List<Ratio> ratios, Path results) throws IOException {
        StringBuilder md = new StringBuilder();
        int cut = template.indexOf("\n## ");
        String preamble = (cut < 0 ? template : template.substring(0, cut + 1)).replaceFirst("(?s)^<!--.*?-->\\s*", "");
        StringBuilder runs = new StringBuilder();
        try (var dirs = Files.list(results)) {
            for (Path dir : dirs.filter(Files::isDirectory).sorted().toList()) {
                Path run = dir.resolve("run.txt");
                if (!Files.exists(run)) throw new IllegalArgumentException("no run.txt in " + dir);
                runs.append("- `").append(dir.getFileName()).append("/`: ").append(Files.readString(run).strip()).append('\n');
            }
        }
        StringBuilder table = new StringBuilder("| section | row | A / B | ratio | ± | verdict | recheck |\n|---|---|---|---:|---:|---|---|\n");
        for (Ratio r : ratios) {
            table.append("| [").append(r.section().title()).append("](#").append(r.section().anchor()).append(") | ")
                    .append(r.section().rowName(r.a().first())).append(" | ").append(r.a().first().axis()).append(" / ")
                    .append(r.b().first().axis()).append(" | ").append(fmt(r.value())).append(" | ").append(fmt(r.error()))
                    .append(" | ").append(r.verdict()).append(" | ")
                    .append(r.recheck() == null ? "" : fmt(r.recheck().value()) + " ± " + fmt(r.recheck().error()) + ", " + r.recheck().verdict())
                    .append(" |\n");
        }
        md.append(preamble.strip()).append('\n');
        for (Section s : sections) {
            md.append("\n## ").append(s.title()).append("\n\n").append(s.text()).append("\n");
            md.append(Charts.markdown(s, ratios));
            if (!s.cells().isEmpty()) md.append('\n').append(scores(s));
            else if (!s.files().isEmpty()) md.append(notYet(s.files()));
            Path include = s.include() == null ? null : results.resolve(s.include());
            if (include != null) md.append(Files.exists(include) ? "\n" + Files.readString(include).strip() + "\n" : notYet(List.of(s.include())));
        }
        return md.toString().replace("{runs}", runs.toString().strip()).replace("{ratios}", table.toString().strip());
    }

    static String notYet(List<String> files) { // R7
        return "\n*Not measured yet: no `results/" + String.join("`, `results/", files) + "`.*\n";
    }

    /** The section's table of scores: a line per row, its settings (from JMH's JSON) and the run that wrote it under it. */
    static String scores(Section s) {
        Set<String> extras = new LinkedHashSet<>();
        for (Cell c : s.cells()) extras.addAll(c.extras().keySet());
        StringBuilder t = new StringBuilder("| row | " + s.axis() + " | score | ± | unit |");
        for (String x : extras) t.append(' ').append(x).append(" |");
        t.append("\n|---|---|---:|---:|---|").append("---:|".repeat(extras.size())).append('\n');
        Map<String, List<Cell>> groups = new LinkedHashMap<>();
        for (Cell c : s.cells()) groups.computeIfAbsent(s.rowName(c.first()), k -> new ArrayList<>()).add(c);
        for (Map.Entry<String, List<Cell>> g : groups.entrySet()) {
            for (Cell c : g.getValue()) {
                t.append("| ").append(g.getKey()).append(" | ").append(c.first().axis()).append(" | ").append(fmt(c.score()))
                        .append(" | ").append(fmt(c.error())).append(" | ").append(c.first().unit()).append(" |");
                for (String x : extras) t.append(' ').append(c.extras().containsKey(x) ? fmt(c.extras().get(x)) : "").append(" |");
                t.append('\n');
            }
        }
        JsonObject o = s.cells().get(0).first().raw();
        int rounds = s.cells().stream().mapToInt(c -> c.rounds().size()).max().orElse(1);
        t.append("\nSettings: ").append(settings(o)).append(rounds > 1 ? "; " + rounds + " rounds (R4 of `Report.java`)" : "")
                .append(". Unchanged params: ").append(constants(s)).append(". From `results/")
                .append(String.join("`, `results/", s.files())).append("`.\n");
        return t.toString();
    }

    static String settings(JsonObject o) {
        if (!o.has("forks")) return "a probe of its own, not JMH";
        return o.get("forks").getAsInt() + " fork(s) × (" + o.get("warmupIterations").getAsInt() + " × " + o.get("warmupTime").getAsString()
                + " warm-up + " + o.get("measurementIterations").getAsInt() + " × " + o.get("measurementTime").getAsString()
                + "), mode " + o.get("mode").getAsString() + ", JDK " + o.get("jdkVersion").getAsString() + ", JMH " + o.get("jmhVersion").getAsString();
    }

    static String constants(Section s) {
        Map<String, String> out = new TreeMap<>(s.cells().get(0).first().params());
        out.keySet().removeAll(s.varying());
        return out.isEmpty() ? "none" : String.join(", ", out.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList());
    }

    static double mean(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    /** The Student-t half-width at 99.9% of the mean of [v]; NaN below two values. */
    static double halfWidth(List<Double> v) {
        if (v.size() < 2) return Double.NaN;
        double m = mean(v);
        double sd = Math.sqrt(v.stream().mapToDouble(x -> (x - m) * (x - m)).sum() / (v.size() - 1));
        return new TDistribution(v.size() - 1).inverseCumulativeProbability(0.9995) * sd / Math.sqrt(v.size());
    }

    static String fmt(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) return "n/a";
        double a = Math.abs(v);
        if (a == 0) return "0";
        return String.format(Locale.ROOT, a >= 100 ? "%.1f" : a >= 1 ? "%.3f" : a >= 0.001 ? "%.4f" : "%.2e", v);
    }
}
