package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

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
 * The Java calls of the lease listener and of the Redis meters that a user may write from memory and
 * that must not compile, each next to the call that replaces it (javac in-process, against the classes
 * of this test run): the rejected one must fail on its own line, the accepted one must compile.
 */
class EventsAndMetricsShapesTest {
    private static final String TEMPLATE = """
            import dev.semaphore.ListenerRegistration;
            import dev.semaphore.distributed.*;
            import dev.semaphore.distributed.async.*;
            import dev.semaphore.redis.*;
            import dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics;
            import io.micrometer.core.instrument.*;
            import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
            import java.time.Duration;

            public class Snippet {
                static void shape(RedisSemaphoreClient client) {
                    MeterRegistry registry = new SimpleMeterRegistry();
                    AsyncDistributedSemaphore db = AsyncDistributedSemaphore.create(client, "db", 8);
                    LeaseListener listener = new LeaseListener() {};
                    <<SHAPE>>
                }
            }
            """;

    /** A call the API rules out, the one that replaces it, and a fragment of javac's error. */
    private record Shape(String why, String rejected, String accepted, String error) {}

    private static final List<Shape> SHAPES = List.of(
            new Shape("a listener is the client's (the keeper renews every lease of the client), not a handle's",
                    "db.addListener(listener);",
                    "try (ListenerRegistration r = client.addListener(listener)) { }",
                    "cannot find symbol"),
            new Shape("a listener is told a LeaseInfo (a copy), not the Lease, which could be released",
                    "new LeaseListener() { @Override public void onLeaseLost(Lease lease, LeaseLostException e) { } };",
                    "new LeaseListener() { @Override public void onLeaseLost(LeaseInfo lease, LeaseLostException e) { } };",
                    "method does not override or implement a method from a supertype"),
            new Shape("a lost lease's cause is a LeaseLostException, not any Throwable",
                    "new LeaseListener() { @Override public void onLeaseLost(LeaseInfo lease, Throwable e) { } };",
                    "new LeaseListener() { @Override public void onRenewalFailed(LeaseInfo lease, Throwable e) { } };",
                    "method does not override or implement a method from a supertype"),
            new Shape("the Java view is not the semaphore: asKotlin() is",
                    "DistributedSemaphoreMetrics.of(db).bindTo(registry);",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).bindTo(registry);",
                    "no suitable method found for of(dev.semaphore.distributed.async.AsyncDistributedSemaphore)"),
            new Shape("a name is not a semaphore: the binder needs the handle (its client reads the figures)",
                    "DistributedSemaphoreMetrics.of(\"db\").bindTo(registry);",
                    "DistributedSemaphoreMetrics.of(client.semaphore(\"db\", 8, new DistributedConfig())).bindTo(registry);",
                    "no suitable method found for of(java.lang.String)"),
            new Shape("no public constructor: of() is the one way in",
                    "new DistributedSemaphoreMetrics(db.asKotlin()).bindTo(registry);",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).bindTo(registry);",
                    "DistributedSemaphoreMetrics"),
            new Shape("a period is a Duration, not a number of unknown unit",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).refreshEvery(10);",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).refreshEvery(Duration.ofSeconds(10));",
                    "int cannot be converted to java.time.Duration"),
            new Shape("no string varargs for tags (whose odd count fails only at run time)",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).tags(\"region\", \"eu\", \"pool\");",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).tags(Tags.of(\"region\", \"eu\", \"pool\", \"main\"));",
                    "cannot be applied to given types"),
            new Shape("bindTo returns nothing to chain: configure first, then bind",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).bindTo(registry).refreshEvery(Duration.ofSeconds(5));",
                    "DistributedSemaphoreMetrics.of(db.asKotlin()).refreshEvery(Duration.ofSeconds(5)).bindTo(registry);",
                    "void cannot be dereferenced"));

    /** The class path of this test run: the jars or folders of the classes a snippet uses. */
    private static String classPath() throws Exception {
        Class<?>[] anchors = {
            dev.semaphore.distributed.micrometer.DistributedSemaphoreMetrics.class, dev.semaphore.distributed.DistributedSemaphore.class,
            AsyncDistributedSemaphore.class, dev.semaphore.ListenerRegistration.class, dev.semaphore.redis.RedisSemaphoreClient.class,
            io.micrometer.core.instrument.MeterRegistry.class, io.micrometer.common.KeyValue.class,
            io.lettuce.core.RedisClient.class, kotlin.Unit.class, kotlinx.coroutines.Job.class,
            org.jspecify.annotations.NullMarked.class,
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
