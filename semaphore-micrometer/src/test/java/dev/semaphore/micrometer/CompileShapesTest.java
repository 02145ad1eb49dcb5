package dev.semaphore.micrometer;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The calls a user may write from memory that must not compile, each next to the call that replaces it:
 * the rejected one must fail with an error on its own line, the accepted one must compile, in the same
 * surroundings (javac in-process, against the classes this test run uses).
 */
class CompileShapesTest {
    private static final String TEMPLATE = """
            import dev.semaphore.*;
            import dev.semaphore.async.*;
            import dev.semaphore.micrometer.*;
            import io.micrometer.core.instrument.*;
            import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
            import java.time.Duration;

            public class Snippet {
                static void shape() {
                    MeterRegistry registry = new SimpleMeterRegistry();
                    AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named("db"));
                    <<SHAPE>>
                }
            }
            """;

    /** A call the API rules out, the one that replaces it, and a fragment of javac's error. */
    private record Shape(String why, String rejected, String accepted, String error) {}

    private static final List<Shape> SHAPES = List.of(
            new Shape("a Java view comes first, then its name, as a primitive does",
                    "SemaphoreMetrics.of(\"db\", db);",
                    "SemaphoreMetrics.of(db, \"db\");",
                    "no suitable method found for of(java.lang.String,dev.semaphore.async.AsyncSemaphore)"),
            new Shape("the primitive comes first, then its name",
                    "SemaphoreMetrics.of(\"db\", db.asKotlin());",
                    "SemaphoreMetrics.of(db.asKotlin(), \"db\");",
                    "no suitable method found for of(java.lang.String,dev.semaphore.Semaphore)"),
            new Shape("no public constructor: one factory per intent",
                    "new SemaphoreMetrics(db.asKotlin()).bindTo(registry);",
                    "SemaphoreMetrics.of(db.asKotlin()).bindTo(registry);",
                    "SemaphoreMetrics"),
            new Shape("tags are not a name",
                    "SemaphoreMetrics.of(db.asKotlin(), Tags.of(\"region\", \"eu\"));",
                    "SemaphoreMetrics.of(db.asKotlin()).tags(Tags.of(\"region\", \"eu\"));",
                    "no suitable method found for of(dev.semaphore.Semaphore,io.micrometer.core.instrument.Tags)"),
            new Shape("a tag is a key and a value: an odd count cannot compile",
                    "SemaphoreMetrics.of(db.asKotlin()).tag(\"region\");",
                    "SemaphoreMetrics.of(db.asKotlin()).tag(\"region\", \"eu\");",
                    "method tag in class dev.semaphore.micrometer.SemaphoreMetrics cannot be applied to given types"),
            new Shape("no string varargs for tags (whose odd count fails only at run time)",
                    "SemaphoreMetrics.of(db.asKotlin()).tags(\"region\", \"eu\", \"pool\");",
                    "SemaphoreMetrics.of(db.asKotlin()).tags(Tags.of(\"region\", \"eu\", \"pool\", \"main\"));",
                    "method tags in class dev.semaphore.micrometer.SemaphoreMetrics cannot be applied to given types"),
            new Shape("allNamed() is made by SemaphoreMetrics",
                    "new NamedSemaphoreMetrics().bindTo(registry);",
                    "SemaphoreMetrics.allNamed().bindTo(registry);",
                    "NamedSemaphoreMetrics"),
            new Shape("only allNamed() refreshes: one primitive has nothing to look for",
                    "SemaphoreMetrics.of(db.asKotlin()).refreshEvery(Duration.ofSeconds(30));",
                    "SemaphoreMetrics.allNamed().refreshEvery(Duration.ofSeconds(30));",
                    "cannot find symbol"),
            new Shape("a period is a Duration, not a number of unknown unit",
                    "SemaphoreMetrics.allNamed().refreshEvery(30);",
                    "SemaphoreMetrics.allNamed().refreshEvery(Duration.ofSeconds(30));",
                    "cannot be applied to given types"),
            new Shape("bindTo returns nothing to chain: configure first, then bind",
                    "SemaphoreMetrics.of(db.asKotlin()).bindTo(registry).snapshotOnly();",
                    "SemaphoreMetrics.of(db.asKotlin()).snapshotOnly().bindTo(registry);",
                    "void cannot be dereferenced"));

    /** The class path of this test run: the jars or folders of the classes a snippet uses. */
    private static String classPath() throws Exception {
        Class<?>[] anchors = {
            SemaphoreMetrics.class, dev.semaphore.Semaphore.class, dev.semaphore.async.AsyncSemaphore.class,
            io.micrometer.core.instrument.MeterRegistry.class, io.micrometer.common.KeyValue.class,
            kotlin.Unit.class, kotlinx.coroutines.Job.class, org.jspecify.annotations.NullMarked.class,
        };
        List<String> paths = new ArrayList<>();
        for (Class<?> c : anchors) {
            paths.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        return String.join(File.pathSeparator, paths);
    }

    private static List<Diagnostic<? extends JavaFileObject>> compile(Path out, String shape) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "no system Java compiler: tests must run on a JDK");
        String text = TEMPLATE.replace("<<SHAPE>>", shape);
        JavaFileObject source = new SimpleJavaFileObject(URI.create("string:///Snippet.java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return text;
            }
        };
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> options = List.of("-classpath", classPath(), "-proc:none", "-Xdiags:verbose", "-d", out.toString());
        javac.getTask(null, null, diagnostics, options, null, List.of(source)).call();
        return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).collect(Collectors.toList());
    }

    private static long shapeLine() {
        String[] lines = TEMPLATE.split("\n", -1);
        for (int i = 0; i < lines.length; i++) if (lines[i].contains("<<SHAPE>>")) return i + 1;
        throw new IllegalStateException();
    }

    private static String describe(List<Diagnostic<? extends JavaFileObject>> errors) {
        return errors.stream().map(d -> "line " + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT))
                .collect(Collectors.joining("\n"));
    }

    @TestFactory
    List<DynamicTest> wrongCallsDoNotCompileAndTheirReplacementsDo(@TempDir Path out) {
        return SHAPES.stream().map(shape -> DynamicTest.dynamicTest(shape.why(), () -> {
            List<Diagnostic<? extends JavaFileObject>> accepted = compile(out, shape.accepted());
            assertTrue(accepted.isEmpty(), "the accepted shape should compile: " + shape.accepted() + "\n" + describe(accepted));
            List<Diagnostic<? extends JavaFileObject>> rejected = compile(out, shape.rejected());
            assertFalse(rejected.isEmpty(), "should not compile: " + shape.rejected());
            assertTrue(rejected.stream().allMatch(d -> d.getLineNumber() == shapeLine()),
                    "errors elsewhere than the shape's line:\n" + describe(rejected));
            assertTrue(rejected.stream().anyMatch(d -> d.getMessage(Locale.ROOT).contains(shape.error())),
                    "expected \"" + shape.error() + "\" in:\n" + describe(rejected));
        })).collect(Collectors.toList());
    }
}
