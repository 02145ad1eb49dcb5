package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JPMS boundary, as an application sees it: a module-path program that uses the public API
 * compiles and runs; one that names {@code dev.semaphore.internal} does not compile; and the same
 * public-API program compiles and runs from the class path.
 */
class ModuleBoundaryTest {
    private static final String MAIN = """
            package demo;

            import dev.semaphore.async.AsyncSemaphore;
            import dev.semaphore.async.Permit;

            public class Main {
                public static void main(String[] args) throws Exception {
                    AsyncSemaphore semaphore = AsyncSemaphore.create(2);
                    try (Permit permit = semaphore.acquire(2).join()) {
                        System.out.println("held " + permit.permits() + ", free " + semaphore.availablePermits());
                    }
                    dev.semaphore.Semaphore kotlin = semaphore.asKotlin(); // core's public API, read through requires transitive
                    System.out.println("free " + kotlin.getAvailablePermits() + " in " + Main.class.getModule());
                }
            }
            """;

    private static final String USES_INTERNALS = """
            package demo;

            public class Sneaky {
                Object engine = dev.semaphore.internal.WaiterQueue.class;
            }
            """;

    private static final String MODULE = "module demo.app { requires dev.semaphore.async; }";

    /** The library's modules and their dependencies, where this test run found them (jars or class folders). */
    private static String libraryPath() throws URISyntaxException {
        Class<?>[] anchors = {
            AsyncSemaphore.class, dev.semaphore.Semaphore.class, kotlin.Unit.class,
            kotlinx.coroutines.Job.class, org.jspecify.annotations.NullMarked.class,
        };
        List<String> paths = new ArrayList<>();
        for (Class<?> c : anchors) {
            paths.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        return String.join(java.io.File.pathSeparator, paths);
    }

    private static Path write(Path dir, String relative, String text) throws IOException {
        Path file = dir.resolve(relative);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return file;
    }

    /** Compiles; returns javac's diagnostics, or null on success. */
    private static String javac(List<String> options, Path... sources) {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        List<String> args = new ArrayList<>(options);
        for (Path s : sources) args.add(s.toString());
        int code = ToolProvider.getSystemJavaCompiler().run(null, null, err, args.toArray(new String[0]));
        return code == 0 ? null : err.toString(StandardCharsets.UTF_8);
    }

    private static String java(List<String> args) throws IOException, InterruptedException {
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>();
        command.add(javaBin);
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the program did not finish");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), output);
        return output;
    }

    @Test
    void thePublicApiWorksFromTheModulePath(@TempDir Path dir) throws Exception {
        Path src = dir.resolve("src");
        Path out = dir.resolve("out");
        Path info = write(src, "module-info.java", MODULE);
        Path main = write(src, "demo/Main.java", MAIN);
        String lib = libraryPath();
        String errors = javac(List.of("--module-path", lib, "-d", out.toString()), info, main);
        assertEquals(null, errors);
        String output = java(List.of("--module-path", out + java.io.File.pathSeparator + lib, "-m", "demo.app/demo.Main"));
        assertTrue(output.contains("held 2, free 0"), output);
        assertTrue(output.contains("free 2 in module demo.app"), output);
    }

    @Test
    void theEngineIsNotVisibleFromTheModulePath(@TempDir Path dir) throws Exception {
        Path src = dir.resolve("src");
        Path info = write(src, "module-info.java", MODULE);
        Path sneaky = write(src, "demo/Sneaky.java", USES_INTERNALS);
        String diagnostics = javac(List.of("--module-path", libraryPath(), "-d", dir.resolve("out").toString()), info, sneaky);
        assertTrue(diagnostics != null, "a module-path program compiled against dev.semaphore.internal");
        assertTrue(diagnostics.contains("package dev.semaphore.internal is not visible")
                || diagnostics.contains("does not export dev.semaphore.internal"), diagnostics);
    }

    @Test
    void thePublicApiWorksFromTheClassPath(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("out");
        Path main = write(dir.resolve("src"), "demo/Main.java", MAIN);
        String lib = libraryPath();
        assertEquals(null, javac(List.of("-classpath", lib, "-d", out.toString()), main));
        String output = java(List.of("-cp", out + java.io.File.pathSeparator + lib, "demo.Main"));
        assertTrue(output.contains("held 2, free 0"), output);
        assertTrue(output.contains("unnamed module"), output);
    }

    @Test
    void bothModulesDescribeThemselves() throws Exception {
        Module api = AsyncSemaphore.class.getModule();
        // On the test class path the modules are unnamed; their descriptors are read from the artifacts.
        for (String name : List.of("dev.semaphore.core", "dev.semaphore.async")) {
            java.lang.module.ModuleFinder finder = java.lang.module.ModuleFinder.of(
                    Stream.of(libraryPath().split(java.io.File.pathSeparator)).map(Path::of).toArray(Path[]::new));
            java.lang.module.ModuleDescriptor d = finder.find(name).orElseThrow().descriptor();
            assertFalse(d.isAutomatic(), name + " must have a module-info");
            List<String> exported = d.exports().stream().map(e -> e.source()).sorted().collect(Collectors.toList());
            assertEquals(List.of(name.equals("dev.semaphore.core") ? "dev.semaphore" : "dev.semaphore.async"), exported);
            assertTrue(d.exports().stream().noneMatch(e -> e.source().contains("internal")), d.toString());
        }
        assertFalse(api.isNamed(), "the tests themselves run on the class path");
    }
}
