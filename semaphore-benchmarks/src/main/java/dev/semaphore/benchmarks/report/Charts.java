/*
 * The charts of the benchmark report: one SVG per section that has ratios, written by Report beside docs/benchmarks.md
 * (docs/charts/<the section's anchor>.svg) in the same run, and embedded under the section's heading.
 *
 * C1 A chart draws Report's Ratio objects, the ones its table prints: each row is a ratio's value as a dot, its ± as a
 *    bar from value - ± to value + ± (none when the ± is n/a), its recheck (R6) as a hollow dot with its own bar, and
 *    the printed figures at the right, formatted by Report.fmt. Nothing here divides or pools a score.
 * C2 Which ratios: every ratio of the section, or those whose A / B the section's `chart` directive names (same syntax as
 *    `ratios`); the report then says which it charted. More than MAX_LINES lines is an error that asks for `chart`.
 * C3 The axis is linear, from a multiple of its tick step at or below the smallest bar end (never below 0) to one at or
 *    above the largest, 1.0 always inside; a vertical line at 1.0. Below 1 the A side is faster (R3), for units that are
 *    not times lower (R5). A dot's colour is its verdict: A beyond the error, B beyond the error, or within it.
 * C4 Rows are named as in the table, less what is the same on every charted row (those params stay in the table). With
 *    more than one A / B, the ratios of one row are drawn under its name, one line per A / B.
 * C5 Plain SVG 1.1: width, height and viewBox, a white background, font-family sans-serif, no CSS, no script; every
 *    number printed with Locale.ROOT, so that the same results give the same bytes.
 */
package dev.semaphore.benchmarks.report;

import dev.semaphore.benchmarks.report.Report.Ratio;
import dev.semaphore.benchmarks.report.Report.Row;
import dev.semaphore.benchmarks.report.Report.Section;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The SVG charts of the report's sections (C1-C5). */
final class Charts {
    private Charts() {}

    static final int MAX_LINES = 40;
    static final String A_FASTER = "#1a7f37", B_FASTER = "#cf222e", WITHIN = "#6e7781";

    static final int PLOT_WIDTH = 400, LINE = 18, MARGIN = 12, TOP = 76;
    static final double CHAR = 0.58; // the width of a character, in ems: generous for sans-serif, so that text never overlaps

    /** The chart's file, relative to the directory of the report. */
    static String file(Section s) { return "charts/" + s.anchor() + ".svg"; }

    /** The ratios of [all] that the chart of [s] draws (C2), in the table's order; empty: no chart. */
    static List<Ratio> charted(Section s, List<Ratio> all) {
        List<Ratio> out = new ArrayList<>();
        for (Ratio r : all) {
            if (r.section() != s) continue;
            if (s.chart() == null || s.chart().stream().anyMatch(p -> p[0].contains(r.a().first().axis())
                    && p[1].contains(r.b().first().axis()))) out.add(r);
        }
        return out;
    }

    /** The pairs of the chart, "A / B", in order of first appearance. */
    static List<String> pairs(List<Ratio> rs) {
        Set<String> out = new LinkedHashSet<>();
        for (Ratio r : rs) out.add(pair(r));
        return new ArrayList<>(out);
    }

    static String pair(Ratio r) { return r.a().first().axis() + " / " + r.b().first().axis(); }

    /** The Markdown under the heading of [s]: the chart, and which ratios it draws when not all; "" without a chart. */
    static String markdown(Section s, List<Ratio> all) {
        List<Ratio> rs = charted(s, all);
        if (rs.isEmpty()) return "";
        long total = all.stream().filter(r -> r.section() == s).count();
        String which = String.join(", ", pairs(rs));
        StringBuilder md = new StringBuilder("\n![").append(s.title()).append(": ratios ").append(which)
                .append(" with their errors, against 1](").append(file(s)).append(")\n");
        if (rs.size() < total) {
            md.append("\nThe chart draws the ").append(which).append(" ratios (").append(rs.size()).append(" of ").append(total)
                    .append("); every ratio is in [Every ratio](#every-ratio).\n");
        }
        return md.toString();
    }

    /** A line of the chart: a row's name alone (a header), or a ratio with its label (indented under a header). */
    record Line(String label, boolean header, boolean indented, Ratio ratio) {}

    /** The name of the A (or B) side of every ratio of [rs], or "A" ("B") when they differ. */
    static String side(List<Ratio> rs, boolean a) {
        Set<String> names = new LinkedHashSet<>();
        for (Ratio r : rs) names.add((a ? r.a() : r.b()).first().axis());
        return names.size() == 1 ? names.iterator().next() : a ? "A" : "B";
    }

    /** The lines of the chart (C4): one per ratio, under a header per row name when the chart has several A / B. */
    static List<Line> lines(Section s, List<Ratio> rs) {
        Map<String, List<Ratio>> groups = new LinkedHashMap<>();
        for (Ratio r : rs) groups.computeIfAbsent(label(s, rs, r.a().first()), k -> new ArrayList<>()).add(r);
        boolean onePair = pairs(rs).size() == 1;
        List<Line> out = new ArrayList<>();
        for (Map.Entry<String, List<Ratio>> g : groups.entrySet()) {
            if (onePair) {
                for (Ratio r : g.getValue()) out.add(new Line(g.getKey(), false, false, r));
            } else if (g.getValue().size() == 1) {
                out.add(new Line(g.getKey() + " (" + pair(g.getValue().get(0)) + ")", false, false, g.getValue().get(0)));
            } else {
                out.add(new Line(g.getKey(), true, false, null));
                for (Ratio r : g.getValue()) out.add(new Line(pair(r), false, true, r));
            }
        }
        if (out.size() > MAX_LINES) {
            throw new IllegalArgumentException("section \"" + s.title() + "\": its chart would have " + out.size() + " lines, more than "
                    + MAX_LINES + ": name the ratios it draws with the directive `chart: A/B ...`");
        }
        return out;
    }

    /** The name of [r] in the chart: Section.rowName less the class, operation and params every charted row shares (C4). */
    static String label(Section s, List<Ratio> rs, Row r) {
        boolean classes = s.cells().stream().map(c -> c.first().cls()).distinct().count() > 1;
        Set<String> prefixes = new LinkedHashSet<>();
        Map<String, Set<String>> values = new TreeMap<>();
        for (Ratio x : rs) {
            Row a = x.a().first();
            prefixes.add(classes ? a.cls() + "." + a.operation() : a.operation());
            a.params().forEach((k, v) -> values.computeIfAbsent(k, y -> new LinkedHashSet<>()).add(v));
        }
        StringBuilder params = new StringBuilder();
        for (String k : s.varying()) {
            if (r.params().containsKey(k) && values.get(k).size() > 1) params.append(' ').append(k).append('=').append(r.params().get(k));
        }
        String prefix = classes ? r.cls() + "." + r.operation() : r.operation();
        return prefixes.size() == 1 && params.length() > 0 ? params.substring(1) : prefix + params;
    }

    /** The linear axis (C3): its ticks run from lo to hi by step; [decimals] for their labels. */
    record Axis(double lo, double hi, double step, int decimals, int ticks) {
        static Axis of(double min, double max) {
            min = Math.min(min, 1);
            max = Math.max(max, 1);
            double pad = Math.max(0.03 * (max - min), 0.01); // a span of 0 (every ratio n/a) still has ticks
            min = Math.max(0, min - pad);
            max += pad;
            double raw = (max - min) / 6;
            int exp = (int) Math.floor(Math.log10(raw));
            double mag = Math.pow(10, exp);
            double mantissa = 10;
            for (double m : new double[] {1, 2, 2.5, 5, 10}) {
                if (m * mag >= raw * (1 - 1e-9)) { mantissa = m; break; }
            }
            if (mantissa == 10) { mantissa = 1; exp++; mag *= 10; }
            double step = mantissa * mag;
            long first = (long) Math.floor(min / step + 1e-9), last = (long) Math.ceil(max / step - 1e-9);
            int decimals = Math.max(0, -exp) + (mantissa == 2.5 ? 1 : 0);
            return new Axis(first * step, last * step, step, decimals, (int) (last - first) + 1);
        }

        double tick(int i) { return lo + i * step; }

        String label(int i) { return String.format(Locale.ROOT, "%." + decimals + "f", tick(i)); }
    }

    /** The SVG of the chart of [s], drawing [rs] (C1-C5). */
    static String svg(Section s, List<Ratio> rs) {
        List<Line> lines = lines(s, rs);
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        for (Ratio r : rs) {
            for (Ratio x : r.recheck() == null ? List.of(r) : List.of(r, r.recheck())) {
                if (!Double.isFinite(x.value())) continue;
                double e = Double.isFinite(x.error()) ? x.error() : 0;
                min = Math.min(min, x.value() - e);
                max = Math.max(max, x.value() + e);
            }
        }
        Axis axis = Axis.of(min == Double.POSITIVE_INFINITY ? 1 : min, max == Double.NEGATIVE_INFINITY ? 1 : max);

        List<String> pairs = pairs(rs);
        boolean onePair = pairs.size() == 1;
        boolean times = rs.stream().allMatch(Ratio::times);
        String better = times ? "faster" : "lower";
        String aName = side(rs, true), bName = side(rs, false);
        String title = s.title() + (onePair ? ": " + pairs.get(0) : "");
        String subtitle = (onePair ? "" : aName + " / " + bName + " as each row says; ") + (times
                ? "a ratio of times (of their inverses for throughput)"
                : "a ratio of " + rs.get(0).a().first().unit()) + "; bars: ±, the table's 99.9% error";
        String left = "◀ " + aName + " " + better, right = bName + " " + better + " ▶";

        List<String[]> legend = new ArrayList<>(); // a swatch (dot, hollow, bar, none) and its text
        legend.add(new String[] {"dot:" + A_FASTER, aName + " " + better});
        legend.add(new String[] {"dot:" + B_FASTER, bName + " " + better});
        legend.add(new String[] {"dot:" + WITHIN, "within error"});
        if (rs.stream().anyMatch(r -> r.recheck() != null)) legend.add(new String[] {"hollow:" + WITHIN, "recheck"});
        if (rs.stream().anyMatch(r -> Double.isNaN(r.error()))) legend.add(new String[] {"none:", "no bar: no error estimate"});

        int labelWidth = 60;
        for (Line l : lines) labelWidth = Math.max(labelWidth, width(l.label(), 11) + (l.indented() ? 12 : 0));
        int valueWidth = 0;
        for (Line l : lines) if (l.ratio() != null) valueWidth = Math.max(valueWidth, width(figures(l.ratio()), 11));
        int x0 = MARGIN + labelWidth + 10, x1 = x0 + PLOT_WIDTH;
        int legendWidth = 0;
        for (String[] item : legend) legendWidth += 16 + width(item[1], 11) + 14;
        int w = Math.max(x1 + 12 + valueWidth, Math.max(width(title, 14), Math.max(width(subtitle, 11), legendWidth)) + MARGIN) + MARGIN;
        int bottom = TOP + lines.size() * LINE + 4;
        int h = bottom + 48;

        StringBuilder svg = new StringBuilder();
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(w).append("\" height=\"").append(h)
                .append("\" viewBox=\"0 0 ").append(w).append(' ').append(h).append("\" font-family=\"sans-serif\" font-size=\"11\">\n");
        svg.append("<title>").append(esc(title)).append("</title>\n");
        svg.append("<rect width=\"").append(w).append("\" height=\"").append(h).append("\" fill=\"#ffffff\"/>\n");
        svg.append("<text class=\"title\" x=\"").append(MARGIN).append("\" y=\"20\" font-size=\"14\" font-weight=\"bold\" fill=\"#1f2328\">")
                .append(esc(title)).append("</text>\n");
        svg.append("<text x=\"").append(MARGIN).append("\" y=\"38\" fill=\"#57606a\">").append(esc(subtitle)).append("</text>\n");
        int lx = MARGIN;
        for (String[] item : legend) {
            String kind = item[0].substring(0, item[0].indexOf(':')), colour = item[0].substring(item[0].indexOf(':') + 1);
            svg.append("<g class=\"legend\">");
            switch (kind) {
                case "dot" -> svg.append(circle(lx + 5, 52, 4, colour, colour));
                case "hollow" -> svg.append(circle(lx + 5, 52, 3.5, "#ffffff", colour));
                default -> { }
            }
            int tx = kind.equals("none") ? lx : lx + 14;
            svg.append("<text x=\"").append(tx).append("\" y=\"56\" fill=\"#1f2328\">").append(esc(item[1])).append("</text></g>\n");
            lx = tx + width(item[1], 11) + 14;
        }

        for (int i = 0; i < lines.size(); i++) { // the bands first, under the grid
            if (i % 2 == 0) svg.append("<rect x=\"").append(MARGIN).append("\" y=\"").append(TOP + i * LINE).append("\" width=\"")
                    .append(w - 2 * MARGIN).append("\" height=\"").append(LINE).append("\" fill=\"#f6f8fa\"/>\n");
        }
        for (int i = 0; i < axis.ticks(); i++) {
            String x = n(x(axis, x0, axis.tick(i)));
            svg.append("<line class=\"grid\" x1=\"").append(x).append("\" y1=\"").append(TOP).append("\" x2=\"").append(x)
                    .append("\" y2=\"").append(bottom).append("\" stroke=\"#d0d7de\" stroke-width=\"0.5\"/>\n");
        }
        String one = n(x(axis, x0, 1));
        svg.append("<line class=\"ref\" x1=\"").append(one).append("\" y1=\"").append(TOP - 4).append("\" x2=\"").append(one)
                .append("\" y2=\"").append(bottom).append("\" stroke=\"#1f2328\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n");

        for (int i = 0; i < lines.size(); i++) {
            Line l = lines.get(i);
            int y = TOP + i * LINE + LINE / 2;
            if (l.header()) {
                svg.append("<text class=\"header\" x=\"").append(MARGIN + 4).append("\" y=\"").append(y + 4)
                        .append("\" font-weight=\"bold\" fill=\"#1f2328\">").append(esc(l.label())).append("</text>\n");
                continue;
            }
            Ratio r = l.ratio();
            svg.append("<g class=\"row\"><title>").append(esc(label(s, rs, r.a().first()) + ": " + pair(r) + " = " + figures(r)))
                    .append("</title>\n");
            svg.append("<text class=\"label\" x=\"").append(MARGIN + 4 + (l.indented() ? 12 : 0)).append("\" y=\"")
                    .append(y + 4).append("\" fill=\"#1f2328\">").append(esc(l.label())).append("</text>\n");
            boolean again = r.recheck() != null;
            point(svg, axis, x0, again ? y - 3 : y, r, "dot", "bar");
            if (again) point(svg, axis, x0, y + 4, r.recheck(), "recheck", "recheck-bar");
            svg.append("<text class=\"value\" x=\"").append(x1 + 12).append("\" y=\"").append(y + 4).append("\" fill=\"#1f2328\">")
                    .append(esc(figures(r))).append("</text>\n</g>\n");
        }

        svg.append("<line class=\"axis\" x1=\"").append(x0).append("\" y1=\"").append(bottom).append("\" x2=\"").append(x1)
                .append("\" y2=\"").append(bottom).append("\" stroke=\"#1f2328\"/>\n");
        for (int i = 0; i < axis.ticks(); i++) {
            String x = n(x(axis, x0, axis.tick(i)));
            svg.append("<line x1=\"").append(x).append("\" y1=\"").append(bottom).append("\" x2=\"").append(x).append("\" y2=\"")
                    .append(bottom + 5).append("\" stroke=\"#1f2328\"/>\n");
            svg.append("<text class=\"tick\" x=\"").append(x).append("\" y=\"").append(bottom + 17).append("\" text-anchor=\"middle\" fill=\"#1f2328\">")
                    .append(axis.label(i)).append("</text>\n");
        }
        double xOne = x(axis, x0, 1); // the two sides, named either side of the line at 1, and kept inside the picture
        double leftEnd = Math.max(xOne - 8, MARGIN + width(left, 11)), rightStart = Math.min(xOne + 8, w - MARGIN - width(right, 11));
        svg.append("<text class=\"caption\" x=\"").append(n(leftEnd)).append("\" y=\"").append(bottom + 36)
                .append("\" text-anchor=\"end\" fill=\"#57606a\">").append(esc(left)).append("</text>\n");
        svg.append("<text class=\"caption\" x=\"").append(n(rightStart)).append("\" y=\"").append(bottom + 36)
                .append("\" fill=\"#57606a\">").append(esc(right)).append("</text>\n");
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** The dot of [r] at height [y], with its bar and the bar's end marks (C1). */
    static void point(StringBuilder svg, Axis axis, int x0, int y, Ratio r, String dot, String bar) {
        if (!Double.isFinite(r.value())) return;
        String colour = switch (r.side()) {
            case -1 -> A_FASTER;
            case 1 -> B_FASTER;
            default -> WITHIN;
        };
        if (Double.isFinite(r.error())) {
            String lo = n(x(axis, x0, r.value() - r.error())), hi = n(x(axis, x0, r.value() + r.error()));
            svg.append("<line class=\"").append(bar).append("\" x1=\"").append(lo).append("\" y1=\"").append(y).append("\" x2=\"")
                    .append(hi).append("\" y2=\"").append(y).append("\" stroke=\"").append(colour).append("\" stroke-width=\"1.5\"/>\n");
            for (String e : List.of(lo, hi)) {
                svg.append("<line x1=\"").append(e).append("\" y1=\"").append(y - 3).append("\" x2=\"").append(e).append("\" y2=\"")
                        .append(y + 3).append("\" stroke=\"").append(colour).append("\" stroke-width=\"1.5\"/>\n");
            }
        }
        boolean hollow = dot.equals("recheck");
        svg.append(circle(x(axis, x0, r.value()), y, hollow ? 3.5 : 4, hollow ? "#ffffff" : colour, colour)
                .replace("<circle ", "<circle class=\"" + dot + "\" ")).append('\n');
    }

    static String circle(double cx, double cy, double r, String fill, String stroke) {
        return "<circle cx=\"" + n(cx) + "\" cy=\"" + n(cy) + "\" r=\"" + n(r) + "\" fill=\"" + fill + "\" stroke=\"" + stroke
                + "\" stroke-width=\"1.5\"/>";
    }

    /** The x of [v] on the axis, held inside the plot (a bar end below 0). */
    static double x(Axis axis, int x0, double v) {
        double f = (v - axis.lo()) / (axis.hi() - axis.lo());
        return x0 + PLOT_WIDTH * Math.max(0, Math.min(1, f));
    }

    /** The figures of a ratio as the table prints them: value ± error, and the recheck's. */
    static String figures(Ratio r) {
        String s = Report.fmt(r.value()) + " ± " + Report.fmt(r.error());
        return r.recheck() == null ? s : s + "; recheck " + Report.fmt(r.recheck().value()) + " ± " + Report.fmt(r.recheck().error());
    }

    /** A generous estimate of the width of [text] at [size] px (C5: the layout never relies on a font's metrics). */
    static int width(String text, int size) { return (int) Math.ceil(text.length() * size * CHAR); }

    static String n(double v) { return String.format(Locale.ROOT, "%.1f", v); }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
