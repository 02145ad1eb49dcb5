/*
 * Turns the JMH JSON of ReadWriteBenchmark and ReadWriteThreadsBenchmark (one file, from one JMH run)
 * into the ReadWriteLock section: docs/benchmarks-readwrite.md and a PNG of the time ratios ours/peer, and
 * with --splice puts that section into docs/benchmarks.md in place of the old one (or, the first time,
 * just before the distributed section, else at the end).
 *
 * Invariants:
 * - Every figure comes from the JSON: scores, errors, units, JMH settings, and the sizes the prose names
 *   (sections, coroutines, threads, the work inside and outside a section, the kotlinx Semaphore lock's K).
 *   No row is typed by hand.
 * - "ours" rows are ReadWriteBenchmark's rows of impl "ours" (policy FIFO, the default) and "oursPhaseFair"
 *   (ReadWritePolicy.PHASE_FAIR); each is named by its policy, and each is judged against the goal on its own.
 * - Every ours row is divided by each peer of the same readPercent, sections, workInside (the section
 *   length) and workOutside: the coroutine peers
 *   (kotlinxMutex, kotlinxSemaphore...) of the same dispatcher and coroutines, and juc (ReentrantReadWriteLock
 *   on threads, which has no dispatcher). Ratio = our time / the peer's time, below 1 = ours faster; its error
 *   is BenchmarkReport.ratio's (the two relative 99.9% errors combined, n/a when JMH had none).
 * - A peer missing for an ours row is an error naming it, not a blank row; so is a row without the
 *   workInside or workOutside parameter (the JSON of a run before they existed).
 * - The rows, the goal summary and the chart are grouped by section length (shortest first), then by
 *   workload (read-mostly first).
 * - The splice keeps every byte outside the ReadWriteLock section as it was.
 */
package dev.semaphore.benchmarks.report;

import static dev.semaphore.benchmarks.report.BenchmarkReport.ratio;
import static dev.semaphore.benchmarks.report.BenchmarkReport.str;

import com.google.gson.JsonParser;
import dev.semaphore.benchmarks.ContendedBenchmark;
import dev.semaphore.benchmarks.ReadWritePrimitives;
import dev.semaphore.benchmarks.report.BenchmarkReport.Ratio;
import dev.semaphore.benchmarks.report.BenchmarkReport.Row;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/** Generates the ReadWriteLock section (Markdown + PNG) from the JMH JSON of the read-write benchmarks. */
public final class ReadWriteReport {
    static final String HEADING = "## ReadWriteLock: ours vs kotlinx Mutex, a kotlinx Semaphore read-write lock, ReentrantReadWriteLock";
    static final String COROUTINES_CLASS = "ReadWriteBenchmark";
    static final String THREADS_CLASS = "ReadWriteThreadsBenchmark";
    static final String JUC = "juc";
    /** The impl of each of our policies, in the order the rows show them, and the policy's name. */
    static final Map<String, String> OURS = new LinkedHashMap<>(Map.of("ours", "FIFO"));

    static {
        OURS.put("oursPhaseFair", "phase-fair");
    }

    private ReadWriteReport() {
    }

    /** One ours row divided by one peer row. */
    record Pair(Row ours, Row peer, Ratio ratio) {
        int readPercent() {
            return Integer.parseInt(ours.params().get("readPercent"));
        }

        String dispatcher() {
            return ours.params().get("dispatcher");
        }

        /** The mean work inside each section (the section length) of this row. */
        int workInside() {
            return intParam(ours, "workInside");
        }

        /** The policy of this row's ours: "FIFO" or "phase-fair". */
        String policy() {
            return OURS.get(ours.impl());
        }

        /**
         * The goal for this row: read-mostly (90% reads), ours faster beyond the error (ratio + error
         * < 1); write-heavy (50%), ours at or below the peer's time within the error (ratio - error <= 1).
         * Without an error estimate the bare ratio decides. Null for other read percentages (no goal).
         */
        Boolean goalMet() {
            double v = ratio.value();
            double e = Double.isNaN(ratio.error()) ? 0 : ratio.error();
            if (Double.isNaN(v)) return false;
            return switch (readPercent()) {
                case 90 -> v + e < 1;
                case 50 -> v - e <= 1;
                default -> null;
            };
        }
    }

    /** The parsed JSON. */
    record Run(List<Row> rows, String date) {
        static Run read(Path json) throws IOException {
            if (!Files.exists(json)) throw new IllegalArgumentException("no such results file: " + json);
            List<Row> rows = BenchmarkReport.parse(JsonParser.parseString(Files.readString(json)).getAsJsonArray()).stream()
                    .filter(r -> r.cls().equals(COROUTINES_CLASS) || r.cls().equals(THREADS_CLASS)).toList();
            if (rows.isEmpty()) {
                throw new IllegalArgumentException("no " + COROUTINES_CLASS + " or " + THREADS_CLASS + " results in " + json);
            }
            return new Run(rows, Files.getLastModifiedTime(json).toInstant().atZone(ZoneOffset.UTC)
                    .format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")));
        }

        List<Row> ours() {
            return rows.stream().filter(r -> r.cls().equals(COROUTINES_CLASS) && OURS.containsKey(r.impl())).toList();
        }

        /** The coroutine peers in the order they were run (kotlinxMutex, kotlinxSemaphore, ...), then juc. */
        List<String> peers() {
            List<String> out = new ArrayList<>(rows.stream().filter(r -> r.cls().equals(COROUTINES_CLASS) && !OURS.containsKey(r.impl()))
                    .map(Row::impl).distinct().toList());
            out.add(JUC);
            return out;
        }

        /** The section lengths (mean work inside) of the ours rows, shortest first. */
        List<Integer> lengths() {
            return ours().stream().map(r -> intParam(r, "workInside")).distinct().sorted().toList();
        }

        /** The means of the work outside the lock of the ours rows, smallest first. */
        List<Integer> outsides() {
            return ours().stream().map(r -> intParam(r, "workOutside")).distinct().sorted().toList();
        }

        /** The policies that have rows, in OURS's order. */
        List<String> policies() {
            return OURS.keySet().stream().filter(impl -> ours().stream().anyMatch(r -> r.impl().equals(impl))).map(OURS::get).toList();
        }

        /**
         * For each ours row, its ratio to each peer: shortest sections first, then read-mostly first, then FIFO
         * before phase-fair, then by dispatcher in JMH's order.
         */
        List<Pair> pairs() {
            if (ours().isEmpty()) throw new IllegalArgumentException("no result for ours in " + COROUTINES_CLASS);
            List<Pair> out = new ArrayList<>();
            List<Row> sorted = new ArrayList<>(ours());
            for (Row r : sorted) { // a row of an older run fails here, naming the parameter
                intParam(r, "workInside");
                intParam(r, "workOutside");
            }
            sorted.sort(Comparator.<Row>comparingInt(r -> intParam(r, "workInside"))
                    .thenComparing(Comparator.<Row>comparingInt(r -> Integer.parseInt(r.params().get("readPercent"))).reversed())
                    .thenComparingInt(r -> new ArrayList<>(OURS.keySet()).indexOf(r.impl())));
            for (Row o : sorted) {
                for (String impl : peers()) {
                    Row p = peer(o, impl);
                    out.add(new Pair(o, p, ratio(o, p)));
                }
            }
            return out;
        }

        Row peer(Row ours, String impl) {
            Map<String, String> op = ours.params();
            return rows.stream().filter(r -> r.impl().equals(impl) && r.unit().equals(ours.unit())
                            && same(r, ours, "readPercent") && same(r, ours, "sections")
                            && same(r, ours, "workInside") && same(r, ours, "workOutside")
                            && (impl.equals(JUC) ? r.cls().equals(THREADS_CLASS)
                            : r.cls().equals(COROUTINES_CLASS) && same(r, ours, "dispatcher") && same(r, ours, "coroutines")))
                    .findFirst().orElseThrow(() -> new IllegalArgumentException("no result for " + impl + " with readPercent="
                            + op.get("readPercent") + ", sections=" + op.get("sections") + ", workInside=" + op.get("workInside")
                            + ", workOutside=" + op.get("workOutside")
                            + (impl.equals(JUC) ? "" : ", dispatcher=" + op.get("dispatcher") + ", coroutines=" + op.get("coroutines"))
                            + " (the peer of ours) in the JMH JSON"));
        }

        private static boolean same(Row a, Row b, String param) {
            return a.params().get(param) != null && a.params().get(param).equals(b.params().get(param));
        }
    }

    /**
     * Usage: ReadWriteReport --json target/results/readwrite.json --out docs/benchmarks-readwrite.md
     * --chart docs/benchmarks-readwrite.png [--run "description of the run"] [--splice docs/benchmarks.md]
     */
    public static void main(String[] args) throws IOException {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) a.put(args[i], args[i + 1]);
        if (args.length % 2 != 0 || !a.keySet().containsAll(List.of("--json", "--out", "--chart"))
                || !List.of("--json", "--out", "--chart", "--run", "--splice").containsAll(a.keySet())) {
            throw new IllegalArgumentException("usage: ReadWriteReport --json FILE.json --out FILE.md --chart FILE.png [--run TEXT] "
                    + "[--splice benchmarks.md]; got " + String.join(" ", args));
        }
        Run run = Run.read(Paths.get(a.get("--json")));
        Path out = Paths.get(a.get("--out")).toAbsolutePath();
        Path chart = Paths.get(a.get("--chart")).toAbsolutePath();
        String runText = a.get("--run");
        Files.createDirectories(out.getParent());
        Files.createDirectories(chart.getParent());
        List<Pair> pairs = run.pairs(); // fails, naming the missing peer, before anything is written
        writeChart(pairs, run, chart);
        Files.writeString(out, markdown(run, runText, out.getParent().relativize(chart).toString().replace('\\', '/')));
        if (a.containsKey("--splice")) {
            Path report = Paths.get(a.get("--splice")).toAbsolutePath();
            if (!Files.exists(report)) throw new IllegalArgumentException("no such report to splice into: " + report);
            String section = markdown(run, runText, report.getParent().relativize(chart).toString().replace('\\', '/'));
            Files.writeString(report, splice(Files.readString(report), section));
        }
        System.out.println("wrote " + out + " and " + chart + (a.containsKey("--splice") ? ", and its section of " + a.get("--splice") : ""));
    }

    /**
     * [report] with [section] in place of its ReadWriteLock section (from HEADING to the next "## " heading or
     * the end); without one, [section] goes just before the distributed section, or else at the end. A blank
     * line separates it from what follows.
     */
    static String splice(String report, String section) {
        Matcher own = heading(HEADING).matcher(report);
        if (own.find()) {
            Matcher next = Pattern.compile("^## ", Pattern.MULTILINE).matcher(report);
            int end = next.find(own.end()) ? next.start() : report.length();
            return report.substring(0, own.start()) + section + (end < report.length() ? "\n" : "") + report.substring(end);
        }
        Matcher dist = heading(DistributedReport.HEADING).matcher(report);
        if (dist.find()) return report.substring(0, dist.start()) + section + "\n" + report.substring(dist.start());
        return report + (report.endsWith("\n\n") ? "" : report.endsWith("\n") ? "\n" : "\n\n") + section;
    }

    /** The integer parameter [name] of [r]; an error naming it when the row has none. */
    static int intParam(Row r, String name) {
        String v = r.params().get(name);
        if (v == null) {
            throw new IllegalArgumentException("no " + name + " parameter in the " + r.cls() + " row of " + r.impl() + " " + r.params()
                    + " (the JMH JSON of a run before the section length was a parameter?)");
        }
        return Integer.parseInt(v);
    }

    private static Pattern heading(String h) {
        return Pattern.compile("^" + Pattern.quote(h) + "$", Pattern.MULTILINE);
    }

    static String f(double v, int decimals) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String thousands(String n) {
        return String.format(Locale.ROOT, "%,d", Long.parseLong(n));
    }

    private static String thousands(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /**
     * How a section length is named: with exactly two lengths, "short (mean 50)" and "long (mean 1,000)";
     * otherwise "mean N" alone.
     */
    static String lengthName(int workInside, Run run) {
        List<Integer> lengths = run.lengths();
        String mean = "mean " + thousands(workInside);
        if (lengths.size() != 2) return mean;
        return (workInside == lengths.get(0) ? "short" : "long") + " (" + mean + ")";
    }

    /** "short sections (mean 50)", or "sections of mean N" when the lengths are not exactly two. */
    static String lengthTitle(int workInside, Run run) {
        String name = lengthName(workInside, run);
        return name.startsWith("mean ") ? "sections of " + name : name.replaceFirst(" ", " sections ");
    }

    /** How a peer is named in the tables. */
    static String peerName(String impl, Run run) {
        if (impl.equals("kotlinxMutex")) return "kotlinx `Mutex`";
        if (impl.equals(JUC)) {
            Row t = run.rows().stream().filter(r -> r.cls().equals(THREADS_CLASS)).findFirst().orElseThrow();
            return "`ReentrantReadWriteLock(true)`, " + thousands(t.params().get("threads")) + " threads";
        }
        if (impl.startsWith("kotlinxSemaphore")) {
            Row r = run.rows().stream().filter(x -> x.impl().equals(impl)).findFirst().orElseThrow();
            int k = ReadWritePrimitives.semaphorePermits(impl, Integer.parseInt(r.params().get("coroutines")));
            return "kotlinx `Semaphore` RW lock, K = " + String.format(Locale.ROOT, "%,d", k);
        }
        return impl;
    }

    private static String workload(int readPercent) {
        return switch (readPercent) {
            case 90 -> "read-mostly (90% reads)";
            case 50 -> "write-heavy (50% reads)";
            default -> readPercent + "% reads";
        };
    }

    private static String jmhSettings(Row r) {
        String n = str(r.raw(), "forks");
        return n + (n.equals("1") ? " fork" : " forks") + " × (" + str(r.raw(), "warmupIterations") + " × " + str(r.raw(), "warmupTime")
                + " warm-up + " + str(r.raw(), "measurementIterations") + " × " + str(r.raw(), "measurementTime") + " measured) iterations";
    }

    static String goalText(Pair p) {
        Boolean met = p.goalMet();
        if (met == null) return "no goal";
        String what = p.readPercent() == 90 ? "faster" : "at or below";
        return (met ? "met (" : "**not met** (") + what + ")";
    }

    static String markdown(Run run, String runText, String chartLink) {
        Row o = run.ours().get(0);
        Row t = run.rows().stream().filter(r -> r.cls().equals(THREADS_CLASS)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no result for juc in " + THREADS_CLASS));
        String coroutines = thousands(o.params().get("coroutines"));
        String sections = thousands(o.params().get("sections"));
        List<Pair> pairs = run.pairs();
        List<Integer> lengths = run.lengths();
        String outside = run.outsides().stream().map(ReadWriteReport::thousands).collect(Collectors.joining(" or "));
        StringBuilder md = new StringBuilder(HEADING + "\n\n");
        md.append("Generated by `semaphore-benchmarks/run.sh readwrite` (also part of `full`; `ReadWriteReport`) from the JMH run of ")
                .append(run.date()).append(" UTC, whose JSON is `semaphore-benchmarks/target/results/readwrite.json`; do not edit by hand. ")
                .append(BenchmarkReport.cpuModel()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" cores, shared with other work; JDK ").append(str(o.raw(), "vmName")).append(' ').append(str(o.raw(), "jdkVersion"))
                .append(". JMH ").append(jmhSettings(o)).append(", mode ").append(o.mode()).append(", 99.9% errors.")
                .append(runText == null ? "" : " Run: " + runText + ".").append("\n\n");
        md.append("The workload (`ReadWriteBenchmark`, `ReadWriteThreadsBenchmark`): ").append(sections)
                .append(" critical sections split over ").append(coroutines).append(" callers").append(lengths.size() > 1
                        ? ", the same number for every section length (kept this low so that one invocation of the slowest contender with the "
                        + "longest sections, `ReentrantReadWriteLock` on threads, stays within about 2 s on this machine)" : "")
                .append(". Before the run every section is made a read or a write: ")
                .append("exactly 90% reads (read-mostly) or 50% (write-heavy), shuffled with a fixed seed, the same sequence for every contender. ")
                .append("Each caller does geometric work (xorshift steps) of mean ").append(outside)
                .append(" before each section, outside the lock, and inside the section work of mean ");
        List<String> lengthTexts = new ArrayList<>();
        for (int w : lengths) {
            String name = lengthName(w, run);
            List<String> notes = new ArrayList<>();
            if (!name.startsWith("mean ")) notes.add("**" + name.substring(0, name.indexOf(' ')) + " sections**");
            if (w == ContendedBenchmark.WORK) notes.add("the work per section of `ContendedBenchmark`");
            lengthTexts.add(thousands(w) + (notes.isEmpty() ? "" : " (" + String.join(", ", notes) + ")"));
        }
        md.append(String.join(" or ", lengthTexts)).append(". ");
        if (lengths.size() > 1) {
            md.append("The work outside is the same for every length: with little work outside, the callers are nearly always waiting for "
                    + "the lock, so the lock is the bottleneck and the long rows show what letting readers in together gains; with as much work "
                    + "outside as inside, even one mutex would keep the ").append(Runtime.getRuntime().availableProcessors())
                    .append(" cores busy (one caller inside, the others working outside) and read sharing could not show. ");
        }
        md.append("Every section checks exclusion with one shared atomic counter (the same code for every contender; a writer that "
                        + "overlaps anyone fails the benchmark), and the run checks that every section ran once. Score: time for all sections.\n\n");
        if (lengths.size() > 1) {
            md.append("What the two lengths show. ").append("With ").append(lengthTitle(lengths.get(0), run))
                    .append(", the work inside is shorter than a suspension and resumption, so the rows mostly measure what handing the lock over "
                            + "costs; and on read-mostly, with 10% writers among ").append(coroutines)
                    .append(" callers, a writer is nearly always queued, so ours in FIFO order lets in only the few readers queued "
                            + "between two writers at a time and they rarely share, while phase-fair lets in every reader waiting when a "
                            + "write ends. With ").append(lengthTitle(lengths.get(lengths.size() - 1), run))
                    .append(", the work inside dominates, and readers let in together run in parallel: the case a read-write lock is for.\n\n");
        }
        md.append("Contenders (all in the same JMH run):\n")
                .append("- **ours**: `dev.semaphore.ReadWriteLock` (`lockRead`/`unlockRead`, `lockWrite`/`unlockWrite`), ").append(coroutines)
                .append(" coroutines on `Dispatchers.Default` or on a fixed pool of 2 threads (`pool2`), in each of its two policies "
                        + "(the table's policy column; [docs/read-write-lock.md](read-write-lock.md)): **FIFO** (the default), strict FIFO "
                        + "between readers and writers, a queued writer holds back every reader that arrives after it; **phase-fair** "
                        + "(`ReadWritePolicy.PHASE_FAIR`), when a write ends every reader waiting at that moment enters together, then the "
                        + "next writer;\n")
                .append("- **kotlinx `Mutex`**, what people use today: every section, read or write, takes the one mutex; same coroutines and dispatchers;\n");
        boolean recipeTold = false;
        for (String impl : run.peers()) {
            if (!impl.startsWith("kotlinxSemaphore")) continue;
            Row r = run.rows().stream().filter(x -> x.impl().equals(impl)).findFirst().orElseThrow();
            String k = String.format(Locale.ROOT, "%,d", ReadWritePrimitives.semaphorePermits(impl, Integer.parseInt(r.params().get("coroutines"))));
            String permits = impl.equals("kotlinxSemaphore")
                    ? "K = " + k + " permits, one per coroutine, so a reader never waits for other readers (as with ours)"
                    : "K = " + k + " permits, a bound: at most " + k + " readers at once, and a write costs " + k
                    + " acquisitions instead of one per coroutine";
            md.append("- **").append(peerName(impl, run)).append("**");
            if (!recipeTold) {
                md.append(", the recipe kotlinx's maintainers suggest: a kotlinx `Semaphore` of ").append(permits)
                        .append("; a read takes 1 permit; a write takes a kotlinx `Mutex` (so two writers never deadlock holding part "
                                + "of the permits each), then the K permits one at a time, and when it ends releases them and the mutex; "
                                + "same coroutines and dispatchers. **Not the same semantics as ours**: waiting writers wait on that `Mutex`, "
                                + "outside the semaphore's line, and the writer that holds it takes the K permits one at a time, each "
                                + "acquisition queuing behind the readers already waiting. So readers that arrive after a waiting writer still "
                                + "get in ahead of it, there is no FIFO order between readers and writers, and a steady stream of readers can "
                                + "starve the writers; ours is strict FIFO (a queued writer holds back later readers);\n");
                recipeTold = true;
            } else {
                md.append(": the same with ").append(permits).append(";\n");
            }
        }
        md.append("- **`ReentrantReadWriteLock(true)`** (fair), from Java: ").append(thousands(t.params().get("threads")))
                .append(" platform threads in a fixed pool, one per caller, blocking in `lock()`. One thread per caller is how the blocking model "
                        + "has as many callers waiting as the coroutines have; it has no dispatcher, so each ours row is divided by the same one.\n\n");
        md.append("![time ratios ours / peer](").append(chartLink).append(")\n\n");

        md.append("| section work | workload | ours on | policy | peer | ours (").append(o.unit()).append(") | peer (").append(o.unit())
                .append(") | ours / peer | ± | verdict | goal |\n|---|---|---|---|---|---:|---:|---:|---:|---|---|\n");
        for (Pair p : pairs) {
            md.append("| ").append(lengthName(p.workInside(), run)).append(" | ").append(workload(p.readPercent())).append(" | ").append(p.dispatcher())
                    .append(" | ").append(p.policy()).append(" | ").append(peerName(p.peer().impl(), run))
                    .append(" | ").append(f(p.ours().score(), 1)).append(" ± ").append(f(p.ours().error(), 1))
                    .append(" | ").append(f(p.peer().score(), 1)).append(" ± ").append(f(p.peer().error(), 1))
                    .append(" | ").append(f(p.ratio().value(), 3)).append(" | ").append(f(p.ratio().error(), 3))
                    .append(" | ").append(verdict(p.ratio())).append(" | ").append(goalText(p)).append(" |\n");
        }
        md.append("\nRatio = our time / the peer's time: below 1 means ours is faster. Its ± is the two relative errors combined. ")
                .append("The goal (issue 10): on read-mostly, ours faster than every peer beyond the error (ratio + ± < 1); ")
                .append("on write-heavy, ours at or below the peer's time (ratio − ± ≤ 1). Each policy is judged on its own rows.\n\n");
        md.append(summary(pairs, run)).append("\n\n");
        md.append(policyTable(run));
        md.append(NOT_MEASURED);
        return md.toString();
    }

    /** Phase-fair's time / FIFO's, per section length, workload and dispatcher (empty without both policies). */
    static String policyTable(Run run) {
        if (run.policies().size() < 2) return "";
        StringBuilder md = new StringBuilder("Phase-fair against FIFO, same run (ratio = phase-fair's time / FIFO's; below 1 means phase-fair is faster):\n\n"
                + "| section work | workload | on | FIFO | phase-fair | phase-fair / FIFO | ± | verdict |\n|---|---|---|---:|---:|---:|---:|---|\n");
        for (Pair p : run.pairs()) {
            if (!p.policy().equals("FIFO") || !p.peer().impl().equals(JUC)) continue; // one line per ours FIFO row
            Row fifo = p.ours();
            Row pf = run.ours().stream().filter(r -> r.impl().equals("oursPhaseFair") && r.params().equals(withImpl(fifo, "oursPhaseFair")))
                    .findFirst().orElse(null);
            if (pf == null) continue;
            Ratio r = ratio(pf, fifo);
            md.append("| ").append(lengthName(p.workInside(), run)).append(" | ").append(workload(p.readPercent())).append(" | ").append(p.dispatcher())
                    .append(" | ").append(f(fifo.score(), 1)).append(" ± ").append(f(fifo.error(), 1))
                    .append(" | ").append(f(pf.score(), 1)).append(" ± ").append(f(pf.error(), 1))
                    .append(" | ").append(f(r.value(), 3)).append(" | ").append(f(r.error(), 3)).append(" | ")
                    .append(verdict(r).replace("ours faster", "phase-fair faster").replace("peer faster", "FIFO faster")).append(" |\n");
        }
        return md.append('\n').toString();
    }

    /** [r]'s parameters with impl replaced (JMH keeps impl among the params). */
    private static Map<String, String> withImpl(Row r, String impl) {
        Map<String, String> m = new LinkedHashMap<>(r.params());
        if (m.containsKey("impl")) m.put("impl", impl);
        return m;
    }

    /** What two cores cannot show (issue 30, item 5), under every run of this section: from the template readwrite.md. */
    static final String NOT_MEASURED = BenchmarkReport.sections("readwrite.md").get("not measured") + "\n\n";

    private static String verdict(Ratio r) {
        double v = r.value();
        if (Double.isNaN(v)) return "n/a";
        if (Double.isNaN(r.error())) return (v < 1 ? "ours faster" : "peer faster") + " (no error estimate)";
        if (Math.abs(v - 1) <= r.error()) return "within error";
        return v < 1 ? String.format(Locale.ROOT, "ours faster (%.2fx)", 1 / v) : String.format(Locale.ROOT, "peer faster (%.2fx)", v);
    }

    /**
     * One paragraph per section length: "In this run, with short sections (mean 50), the goal is met in N of M
     * rows; not met against: ..."
     */
    static String summary(List<Pair> pairs, Run run) {
        List<String> out = new ArrayList<>();
        boolean named = run.policies().size() > 1;
        for (int w : run.lengths()) {
            for (String policy : run.policies()) {
                out.add(summary(pairs.stream().filter(p -> p.workInside() == w && p.policy().equals(policy)).toList(), run,
                        "In this run, with " + lengthTitle(w, run) + ", " + (named ? "ours " + policy + ": " : "")));
            }
        }
        return String.join("\n\n", out);
    }

    private static String summary(List<Pair> pairs, Run run, String intro) {
        List<Pair> judged = pairs.stream().filter(p -> p.goalMet() != null).toList();
        List<Pair> missed = judged.stream().filter(p -> !p.goalMet()).toList();
        String head = intro + "the goal is met in " + (judged.size() - missed.size()) + " of " + judged.size() + " rows";
        if (missed.isEmpty()) return head + ".";
        return head + "; not met against " + missed.stream().map(p -> peerName(p.peer().impl(), run) + " (" + workload(p.readPercent())
                + ", ours on " + p.dispatcher() + ": " + f(p.ratio().value(), 2) + " ± " + f(p.ratio().error(), 2) + ")")
                .collect(Collectors.joining("; ")) + ".";
    }

    /**
     * One chart per section length and workload in one PNG: a row of charts per length (shortest on top), a
     * column per workload (read-mostly, write-heavy); one bar per ratio ours/peer, on a log scale shared by all,
     * with a line at 1; the figures are in the labels.
     */
    static void writeChart(List<Pair> pairs, Run run, Path file) throws IOException {
        Map<List<Integer>, List<Pair>> byWorkload = new LinkedHashMap<>();
        for (Pair p : pairs) byWorkload.computeIfAbsent(List.of(p.workInside(), p.readPercent()), k -> new ArrayList<>()).add(p);
        int columns = (int) pairs.stream().map(Pair::readPercent).distinct().count();
        int chartRows = (int) pairs.stream().map(Pair::workInside).distinct().count();
        if (byWorkload.size() != columns * chartRows) {
            throw new IllegalArgumentException("the ours rows do not cover every workload at every section length: " + byWorkload.keySet());
        }
        double lo = 1;
        double hi = 1;
        for (Pair p : pairs) {
            double v = p.ratio().value();
            if (!Double.isNaN(v) && v > 0) {
                lo = Math.min(lo, v);
                hi = Math.max(hi, v);
            }
        }
        List<CategoryChart> charts = new ArrayList<>();
        int most = byWorkload.values().stream().mapToInt(List::size).max().orElse(1);
        for (Map.Entry<List<Integer>, List<Pair>> e : byWorkload.entrySet()) {
            List<String> labels = new ArrayList<>();
            List<Double> values = new ArrayList<>();
            for (Pair p : e.getValue()) {
                String peer = switch (p.peer().impl()) {
                    case "kotlinxMutex" -> "Mutex";
                    case JUC -> "RRWL threads";
                    default -> "Semaphore RW K=" + ReadWritePrimitives.semaphorePermits(p.peer().impl(),
                            Integer.parseInt(p.peer().params().get("coroutines")));
                };
                labels.add(p.dispatcher() + ": ours " + p.policy() + " / " + peer + "  " + f(p.ratio().value(), 2) + " ± " + f(p.ratio().error(), 2));
                double v = p.ratio().value();
                values.add(Double.isNaN(v) || v <= 0 ? 1.0 : v);
            }
            CategoryChart c = new CategoryChartBuilder().width(Math.max(560, 120 + 55 * most)).height(760)
                    .title(lengthTitle(e.getKey().get(0), run) + ", " + workload(e.getKey().get(1)) + ": ours / peer")
                    .yAxisTitle("time ratio ours / peer (< 1 = ours faster; log scale)").build();
            BenchmarkReport.styleRatioChart(c);
            // Vertical labels, one per bar: by default XChart drops labels closer than 74 px apart.
            c.getStyler().setXAxisLabelRotation(90);
            c.getStyler().setXAxisTickMarkSpacingHint(20);
            // Log scale: a ratio of 2 and one of 1/2 are the same distance from the line at 1.
            c.getStyler().setYAxisLogarithmic(true);
            c.getStyler().setYAxisMin(Math.min(0.5, lo / 1.5));
            c.getStyler().setYAxisMax(Math.max(2.0, hi * 1.5));
            c.getStyler().setLabelsVisible(false);
            c.addSeries("ours/peer", labels, values);
            charts.add(c);
        }
        String name = file.toString();
        String base = name.endsWith(".png") ? name.substring(0, name.length() - 4) : name;
        BitmapEncoder.saveBitmap(charts, chartRows, columns, base, BitmapEncoder.BitmapFormat.PNG);
    }
}
