package dev.semaphore.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.benchmarks.MemoryCase;
import dev.semaphore.benchmarks.MemoryPerWaiter;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

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

    static final String SVG = "http://www.w3.org/2000/svg";

    /** Parses [svg] with the JDK's XML parser, which fails on anything that is not well-formed XML. */
    static Element parseSvg(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document d = f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        return d.getDocumentElement();
    }

    static List<Element> all(Element in, String tag, String cls) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = in.getElementsByTagNameNS(SVG, tag);
        for (int i = 0; i < nodes.getLength(); i++) {
            Element e = (Element) nodes.item(i);
            if (cls == null || cls.equals(e.getAttribute("class"))) out.add(e);
        }
        return out;
    }

    static double num(Element e, String attribute) { return Double.parseDouble(e.getAttribute(attribute)); }

    @Test
    void aChartDrawsEachRatioAsADotAtItsValueWithItsErrorAsABarAgainstALineAtOne(@TempDir Path dir) throws Exception { // R8
        write(dir.resolve("c/c.json"),
                row("ContendedBenchmark.semaphore", "avgt", 2.0, "0.2", "ms/op", "\"impl\": \"ours\", \"permits\": \"1\""),
                row("ContendedBenchmark.semaphore", "avgt", 4.0, "0.4", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"1\""),
                row("ContendedBenchmark.semaphore", "avgt", 3.0, "0.3", "ms/op", "\"impl\": \"ours\", \"permits\": \"2\""),
                row("ContendedBenchmark.semaphore", "avgt", 2.0, "0.2", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"2\""),
                row("ContendedBenchmark.semaphore", "avgt", 2.2, "\"NaN\"", "ms/op", "\"impl\": \"ours\", \"permits\": \"4\""),
                row("ContendedBenchmark.semaphore", "avgt", 2.0, "0.1", "ms/op", "\"impl\": \"kotlinx\", \"permits\": \"4\""),
                row("ContendedBenchmark.semaphore", "avgt", 1.0, "0.1", "ms/op", "\"impl\": \"floor\", \"permits\": \"1\""));
        Files.writeString(dir.resolve("c/run.txt"), "a test\n");
        String template = "# R\n{ratios}\n## Contended semaphore\n<!-- files: c/c.json; select: Contended.*; ratios: ours/kotlinx ours/floor; chart: ours/kotlinx -->\nText.\n";
        List<Report.Section> sections = Report.sections(template, dir);
        List<Report.Ratio> rs = Report.ratios(sections, Map.of());
        assertEquals(4, rs.size(), rs.toString());
        Map<String, String> charts = Report.charts(sections, rs);
        assertEquals(Set.of("charts/contended-semaphore.svg"), charts.keySet());
        String text = charts.get("charts/contended-semaphore.svg");

        // Plain SVG, well-formed (the parser refuses anything else), sized, sans-serif, nothing that GitHub would strip or fetch.
        Element svg = parseSvg(text);
        assertEquals("svg", svg.getLocalName());
        assertEquals(SVG, svg.getNamespaceURI());
        assertEquals("0 0 " + svg.getAttribute("width") + " " + svg.getAttribute("height"), svg.getAttribute("viewBox"));
        assertTrue(num(svg, "width") > 0 && num(svg, "width") <= 1200 && num(svg, "height") > 0, text);
        assertEquals("sans-serif", svg.getAttribute("font-family"));
        for (String banned : List.of("script", "style", "foreignObject", "image", "a")) assertTrue(all(svg, banned, null).isEmpty(), banned);
        assertTrue(!text.contains("href") && !text.contains("url("), text);

        // The axis: its tick labels, read back, lie on one straight line; it maps a ratio to its x.
        List<Element> ticks = all(svg, "text", "tick");
        assertTrue(ticks.size() >= 3, text);
        double v0 = Double.parseDouble(ticks.get(0).getTextContent()), x0 = num(ticks.get(0), "x");
        double vn = Double.parseDouble(ticks.get(ticks.size() - 1).getTextContent()), xn = num(ticks.get(ticks.size() - 1), "x");
        java.util.function.DoubleUnaryOperator x = v -> x0 + (v - v0) * (xn - x0) / (vn - v0);
        for (Element t : ticks) assertEquals(x.applyAsDouble(Double.parseDouble(t.getTextContent())), num(t, "x"), 0.15, "tick " + t.getTextContent());
        assertTrue(v0 <= 0.5 - 0.0708 && vn >= 1.5 + 0.2122, "the axis holds every bar: " + v0 + ".." + vn);

        // The reference line at 1.0, vertical, across every row.
        List<Element> ref = all(svg, "line", "ref");
        assertEquals(1, ref.size());
        assertEquals(x.applyAsDouble(1.0), num(ref.get(0), "x1"), 0.15);
        assertEquals(num(ref.get(0), "x1"), num(ref.get(0), "x2"));

        // One row per charted ratio (ours/kotlinx only: the floor's ratio is in the table, not in the chart), in the table's
        // order, each a dot at the ratio and a bar from ratio - ± to ratio + ±, with the table's figures beside it.
        List<Element> rows = all(svg, "g", "row");
        assertEquals(3, rows.size(), text);
        assertEquals(3, all(svg, "circle", "dot").size());
        String[] labels = {"permits=1", "permits=2", "permits=4"};
        double[] ratio = {0.5, 1.5, 1.1};
        double[] error = {0.5 * Math.hypot(0.1, 0.1), 1.5 * Math.hypot(0.1, 0.1), Double.NaN}; // R3, by hand
        String[] figures = {"0.5000 ± 0.0707", "1.500 ± 0.2121", "1.100 ± n/a"};
        String[] colours = {Charts.A_FASTER, Charts.B_FASTER, Charts.B_FASTER}; // no error: the verdict names a side
        for (int i = 0; i < 3; i++) {
            Element g = rows.get(i);
            assertEquals(labels[i], all(g, "text", "label").get(0).getTextContent());
            assertEquals(figures[i], all(g, "text", "value").get(0).getTextContent());
            List<Element> dots = all(g, "circle", "dot");
            assertEquals(1, dots.size());
            assertEquals(x.applyAsDouble(ratio[i]), num(dots.get(0), "cx"), 0.15, labels[i]);
            assertEquals(colours[i], dots.get(0).getAttribute("fill"), labels[i]);
            List<Element> bars = all(g, "line", "bar");
            if (Double.isNaN(error[i])) {
                assertTrue(bars.isEmpty(), "no error, no bar");
                continue;
            }
            assertEquals(1, bars.size());
            assertEquals(x.applyAsDouble(ratio[i] - error[i]), num(bars.get(0), "x1"), 0.15, labels[i]);
            assertEquals(x.applyAsDouble(ratio[i] + error[i]), num(bars.get(0), "x2"), 0.15, labels[i]);
            assertEquals(num(dots.get(0), "cy"), num(bars.get(0), "y1"));
        }
        // Which side is faster: the ratio is of times, so below 1 (left of the line) ours is.
        List<String> texts = all(svg, "text", null).stream().map(Element::getTextContent).toList();
        assertTrue(texts.contains("Contended semaphore: ours / kotlinx"), texts.toString());
        assertTrue(texts.containsAll(List.of("ours faster", "kotlinx faster", "within error", "no bar: no error estimate")), texts.toString());
        List<Element> captions = all(svg, "text", "caption");
        assertEquals("◀ ours faster", captions.get(0).getTextContent());
        assertTrue(num(captions.get(0), "x") < num(ref.get(0), "x1") && num(captions.get(1), "x") > num(ref.get(0), "x1"));

        // The report shows it under its section's heading, and says which ratios it draws.
        String md = Report.markdown(template, sections, rs, dir);
        assertTrue(md.contains("## Contended semaphore\n\nText.\n\n![Contended semaphore: ratios ours / kotlinx with their errors, against 1]"
                + "(charts/contended-semaphore.svg)\n\nThe chart draws the ours / kotlinx ratios (3 of 4); every ratio is in [Every ratio](#every-ratio).\n"), md);

        // The same bytes again, whatever the default locale (a decimal comma would break the numbers).
        Locale before = Locale.getDefault();
        try {
            Locale.setDefault(Locale.GERMANY);
            List<Report.Section> again = Report.sections(template, dir);
            assertEquals(charts, Report.charts(again, Report.ratios(again, Map.of())));
        } finally {
            Locale.setDefault(before);
        }

        // A chart directive that names no ratio is refused, by name.
        List<Report.Section> typo = Report.sections(template.replace("chart: ours/kotlinx", "chart: ours/kotlinX"), dir);
        var e = assertThrows(IllegalArgumentException.class, () -> Report.charts(typo, Report.ratios(typo, Map.of())));
        assertTrue(e.getMessage().contains("ours/kotlinX"), e.getMessage());
    }

    @Test
    void chartsOfSeveralPairsNameEachUnderItsRowAndRechecksAreHollowDots(@TempDir Path dir) throws Exception {
        write(dir.resolve("u/u.json"),
                row("UncontendedBenchmark.cycle_ours", "avgt", 2.0, "0.2", "ns/op", ""),
                row("UncontendedBenchmark.cycle_kotlinx", "avgt", 4.0, "0.4", "ns/op", ""),
                row("UncontendedBenchmark.cycle_floor", "avgt", 2.5, "0.1", "ns/op", ""));
        write(dir.resolve("u/recheck-1.json"),
                row("UncontendedBenchmark.cycle_ours", "avgt", 3.0, "0.3", "ns/op", ""),
                row("UncontendedBenchmark.cycle_kotlinx", "avgt", 3.0, "0.3", "ns/op", ""));
        List<Report.Section> sections = Report.sections("## U\n<!-- files: u/u.json; select: Unc.*; ratios: ours/kotlinx ours/floor -->\n", dir);
        List<Report.Ratio> rs = Report.ratios(sections, Report.rechecks(dir));
        Element svg = parseSvg(Report.charts(sections, rs).get("charts/u.svg"));
        assertEquals(List.of("cycle"), all(svg, "text", "header").stream().map(Element::getTextContent).toList());
        assertEquals(List.of("ours / kotlinx", "ours / floor"), all(svg, "text", "label").stream().map(Element::getTextContent).toList());
        List<Element> again = all(svg, "circle", "recheck");
        assertEquals(1, again.size(), "ours / kotlinx was measured again");
        assertEquals("#ffffff", again.get(0).getAttribute("fill"));
        assertEquals(1, all(svg, "line", "recheck-bar").size());
        List<Element> ticks = all(svg, "text", "tick");
        double v0 = Double.parseDouble(ticks.get(0).getTextContent()), x0 = num(ticks.get(0), "x");
        double v1 = Double.parseDouble(ticks.get(1).getTextContent()), x1 = num(ticks.get(1), "x");
        assertEquals(x0 + (1.0 - v0) * (x1 - x0) / (v1 - v0), num(again.get(0), "cx"), 0.15, "the recheck's ratio, 3 / 3");
        assertEquals("0.5000 ± 0.0707; recheck 1.000 ± 0.1414", all(svg, "text", "value").get(0).getTextContent());

        // Writing them: the directory keeps the charts of this run only.
        Files.createDirectories(dir.resolve("out/charts"));
        Files.writeString(dir.resolve("out/charts/gone.svg"), "<svg/>");
        Files.writeString(dir.resolve("out/charts/notes.txt"), "kept");
        Report.writeCharts(dir.resolve("out"), Report.charts(sections, rs));
        try (var files = Files.list(dir.resolve("out/charts"))) {
            assertEquals(Set.of("u.svg", "notes.txt"), files.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet()));
        }
    }

    @Test
    void theCommittedReportIsTheOneTheCommittedResultsGive() throws Exception {
        Path results = Path.of("../docs/results");
        List<Report.Section> sections = Report.sections(Report.template(), results);
        List<Report.Ratio> ratios = Report.ratios(sections, Report.rechecks(results));
        String expected = Report.markdown(Report.template(), sections, ratios, results);
        assertEquals(expected, Files.readString(Path.of("../docs/benchmarks.md")),
                "docs/benchmarks.md is not what docs/results gives: run Report (docs/benchmarking.md says how)");
        Map<String, String> charts = new TreeMap<>(Report.charts(sections, ratios));
        Set<String> committed = new TreeSet<>();
        try (var files = Files.list(Path.of("../docs/charts"))) {
            files.forEach(p -> committed.add("charts/" + p.getFileName()));
        }
        assertEquals(charts.keySet(), committed, "docs/charts/ is not what docs/results gives: run Report");
        for (Map.Entry<String, String> c : charts.entrySet()) {
            assertEquals(c.getValue(), Files.readString(Path.of("../docs").resolve(c.getKey())), c.getKey() + ": run Report");
            parseSvg(c.getValue());
            assertTrue(expected.contains("](" + c.getKey() + ")"), "the report shows " + c.getKey());
        }
    }
}
