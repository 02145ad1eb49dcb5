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
 * compiles and runs; one that names {@code dev.semaphore.internal} does not compile, nor one that names
 * {@code dev.semaphore.bridge} (exported to {@code dev.semaphore.async} only, which the descriptors and a
 * module layer confirm); and the same public-API program compiles and runs from the class path.
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

    private static String libraryPath() throws URISyntaxException {
        return TestSupport.libraryPath();
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

    private static final String USES_THE_BRIDGE = """
            package demo;

            public class Sneaky {
                long forever = dev.semaphore.bridge.JavaBridge.NO_TIMEOUT;
            }
            """;

    @Test
    void theBridgeIsNotVisibleToAnotherModule(@TempDir Path dir) throws Exception {
        // dev.semaphore.bridge is exported to dev.semaphore.async only: a module that reads the core (here
        // through dev.semaphore.async's requires transitive) still cannot name it.
        Path src = dir.resolve("src");
        Path info = write(src, "module-info.java", MODULE);
        Path sneaky = write(src, "demo/Sneaky.java", USES_THE_BRIDGE);
        // An explicit, empty class path, as below: without one, the in-process javac takes this test JVM's
        // java.class.path, where the bridge also sits in the unnamed module, and which of the two
        // declarations its error names then varies with the JVM's identity hashes (so with the test classes).
        Path emptyClassPath = Files.createDirectories(dir.resolve("no-classes"));
        String diagnostics = javac(List.of("--module-path", libraryPath(), "-classpath", emptyClassPath.toString(),
                "-d", dir.resolve("out").toString()), info, sneaky);
        assertTrue(diagnostics != null, "a module-path program compiled against dev.semaphore.bridge");
        assertTrue(diagnostics.contains("package dev.semaphore.bridge is declared in module dev.semaphore.core, which does not export it to module demo.app"),
                diagnostics);

        // The same module without the bridge compiles: the failure above is the qualified export, nothing else.
        Path fine = write(dir.resolve("src2"), "demo/Sneaky.java", USES_THE_BRIDGE.replace("dev.semaphore.bridge.JavaBridge.NO_TIMEOUT", "Long.MAX_VALUE"));
        Path info2 = write(dir.resolve("src2"), "module-info.java", MODULE);
        assertEquals(null, javac(List.of("--module-path", libraryPath(), "-d", dir.resolve("out2").toString()), info2, fine));
    }

    @Test
    void theBridgeIsNotVisibleToTheUnnamedModuleOfAModulePathProgram(@TempDir Path dir) throws Exception {
        // Class-path code compiled against the modules (--add-modules): it reads every module, but the
        // qualified export does not include the unnamed module.
        Path sneaky = write(dir.resolve("src"), "demo/Sneaky.java", USES_THE_BRIDGE);
        // An explicit, empty class path: without one, the in-process javac would take this test JVM's
        // java.class.path, where the library's classes sit in the unnamed module, bridge and all.
        Path emptyClassPath = Files.createDirectories(dir.resolve("no-classes"));
        String diagnostics = javac(List.of("--module-path", libraryPath(), "--add-modules", "dev.semaphore.async",
                "-classpath", emptyClassPath.toString(), "-d", dir.resolve("out").toString()), sneaky);
        assertTrue(diagnostics != null, "an unnamed module compiled against dev.semaphore.bridge");
        assertTrue(diagnostics.contains("package dev.semaphore.bridge is declared in module dev.semaphore.core, which does not export it to the unnamed module"),
                diagnostics);
        // The public API of the same modules is readable from there.
        Path fine = write(dir.resolve("src2"), "demo/Sneaky.java", USES_THE_BRIDGE.replace("dev.semaphore.bridge.JavaBridge.NO_TIMEOUT",
                "dev.semaphore.async.AsyncSemaphore.create(1).totalPermits()"));
        assertEquals(null, javac(List.of("--module-path", libraryPath(), "--add-modules", "dev.semaphore.async",
                "-classpath", emptyClassPath.toString(), "-d", dir.resolve("out2").toString()), fine));
    }

    @Test
    void bothModulesDescribeThemselves() throws Exception {
        Module api = AsyncSemaphore.class.getModule();
        // On the test class path the modules are unnamed; their descriptors are read from the artifacts.
        java.lang.module.ModuleFinder finder = java.lang.module.ModuleFinder.of(
                Stream.of(libraryPath().split(java.io.File.pathSeparator)).map(Path::of).toArray(Path[]::new));
        for (String name : List.of("dev.semaphore.core", "dev.semaphore.async")) {
            java.lang.module.ModuleDescriptor d = finder.find(name).orElseThrow().descriptor();
            assertFalse(d.isAutomatic(), name + " must have a module-info");
            List<String> exportedToAll = d.exports().stream().filter(e -> !e.isQualified()).map(e -> e.source()).sorted().collect(Collectors.toList());
            assertEquals(List.of(name.equals("dev.semaphore.core") ? "dev.semaphore" : "dev.semaphore.async"), exportedToAll);
            assertTrue(d.exports().stream().noneMatch(e -> e.source().contains("internal")), d.toString());
            assertTrue(d.opens().isEmpty(), name + " opens nothing: " + d.opens());
        }
        // The bridge: exported to the Java front-end, and to nobody else.
        java.lang.module.ModuleDescriptor core = finder.find("dev.semaphore.core").orElseThrow().descriptor();
        List<java.lang.module.ModuleDescriptor.Exports> qualified = core.exports().stream().filter(e -> e.isQualified()).collect(Collectors.toList());
        assertEquals(1, qualified.size(), core.exports().toString());
        assertEquals("dev.semaphore.bridge", qualified.get(0).source());
        assertEquals(java.util.Set.of("dev.semaphore.async"), qualified.get(0).targets());
        assertTrue(core.packages().contains("dev.semaphore.bridge"));
        assertTrue(finder.find("dev.semaphore.async").orElseThrow().descriptor().exports().stream().noneMatch(e -> e.isQualified()));
        assertFalse(api.isNamed(), "the tests themselves run on the class path");
    }

    @Test
    void atRunTimeTheBridgeIsExportedToTheJavaFrontEndOnly() throws Exception {
        // The library's modules resolved in a layer of their own, as on a module path: the same boundary
        // at run time (what reflection and method handles see).
        java.lang.module.ModuleFinder finder = java.lang.module.ModuleFinder.of(
                Stream.of(libraryPath().split(java.io.File.pathSeparator)).map(Path::of).toArray(Path[]::new));
        ModuleLayer boot = ModuleLayer.boot();
        java.lang.module.Configuration config = boot.configuration().resolve(finder, java.lang.module.ModuleFinder.of(), java.util.Set.of("dev.semaphore.async"));
        ModuleLayer layer = boot.defineModulesWithOneLoader(config, ClassLoader.getPlatformClassLoader());
        Module core = layer.findModule("dev.semaphore.core").orElseThrow();
        Module async = layer.findModule("dev.semaphore.async").orElseThrow();
        assertTrue(core.isExported("dev.semaphore"));
        assertTrue(core.isExported("dev.semaphore.bridge", async), "the Java front-end reads the bridge");
        assertFalse(core.isExported("dev.semaphore.bridge"), "exported to everyone");
        assertFalse(core.isExported("dev.semaphore.bridge", core.getClassLoader().getUnnamedModule()), "exported to the unnamed module");
        assertFalse(core.isExported("dev.semaphore.bridge", ModuleBoundaryTest.class.getModule()), "exported to the tests' module");
        assertFalse(core.isExported("dev.semaphore.internal", async), "the engine is exported to nobody");
        assertTrue(async.canRead(core));
    }
}
