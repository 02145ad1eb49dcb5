package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shapes the Java API 1.0 rules out do not compile, and the documented ones do: each snippet is
 * compiled in-process by javac ({@link ToolProvider#getSystemJavaCompiler()}) against the library as
 * this test run found it (the jars or class folders of dev.semaphore.async, dev.semaphore.core and
 * their dependencies, from their classes' CodeSource).
 *
 * <p>Every rejected shape comes with the accepted shape that replaces it, compiled in the same
 * surroundings: the rejected one must fail with an error on its own line, the accepted one must
 * compile without error, so the failure is the shape's and nothing else's.
 */
class CompileShapesTest {
    private static final String SHAPE = "<<SHAPE>>";

    private static final String TEMPLATE = """
            import dev.semaphore.async.*;
            import java.time.Duration;
            import java.util.Optional;
            import java.util.concurrent.CompletableFuture;
            import java.util.concurrent.Future;

            public class Snippet {
                static void shape() throws Exception {
                    AsyncSemaphore semaphore = AsyncSemaphore.create(2);
                    AsyncPrioritySemaphore pool = AsyncPrioritySemaphore.create(2);
                    AsyncLock lock = AsyncLock.create();
                    AsyncReadWriteLock rw = AsyncReadWriteLock.create();
                    Permit permit = semaphore.acquire().join();
                    <<SHAPE>>
                }
            }
            """;

    /** A shape the API rules out, the one that replaces it, and fragments of javac's error message (-Xdiags:verbose). */
    private record Shape(String why, String rejected, String accepted, List<String> errorFragments) {}

    private static final List<Shape> SHAPES = List.of(
            new Shape("no (priority, permits) form: a priority is chosen with atPriority",
                    "AsyncPrioritySemaphore.create(2).acquire(10, 2);",
                    "AsyncPrioritySemaphore.create(2).atPriority(10).acquire(2);",
                    List.of("no suitable method found for acquire(int,int)")),
            new Shape("no two-int withPermit on a priority semaphore",
                    "pool.withPermit(10, 2, () -> CompletableFuture.completedFuture(1));",
                    "pool.atPriority(10).withPermit(2, () -> CompletableFuture.completedFuture(1));",
                    List.of("no suitable method found for withPermit(int,int,")),
            new Shape("no two-int tryAcquire on a priority semaphore",
                    "boolean taken = pool.tryAcquire(10, 2);",
                    "boolean taken = pool.atPriority(10).tryAcquire(2);",
                    List.of("no suitable method found for tryAcquire(int,int)")),
            new Shape("no two-int acquireBlocking on a priority semaphore",
                    "Permit held = pool.acquireBlocking(10, 2);",
                    "Permit held = pool.atPriority(10).acquireBlocking(2);",
                    List.of("no suitable method found for acquireBlocking(int,int)")),
            new Shape("no two neighbouring ints on AsyncSemaphore either",
                    "semaphore.acquire(2, 10);",
                    "semaphore.acquire(2, Duration.ofMillis(10));",
                    List.of("no suitable method found for acquire(int,int)")),
            new Shape("tryLock takes no number: 5000 is neither an owner nor a timeout",
                    "boolean locked = AsyncLock.create().tryLock(5000);",
                    "boolean locked = AsyncLock.create().tryLock(Duration.ofMillis(5000));",
                    List.of("no suitable method found for tryLock(int)")),
            new Shape("tryLock takes no long either",
                    "boolean locked = lock.tryLock(5000L);",
                    "boolean locked = lock.tryLock(Duration.ofMillis(5000L));",
                    List.of("no suitable method found for tryLock(long)")),
            new Shape("lock takes no owner",
                    "CompletableFuture<Permit> f = AsyncLock.create().lock(new Object());",
                    "CompletableFuture<Permit> f = AsyncLock.create().lock();",
                    List.of("no suitable method found for lock(", "Object)")),
            new Shape("tryLock takes no owner",
                    "boolean locked = lock.tryLock(new Object());",
                    "boolean locked = lock.tryLock();",
                    List.of("no suitable method found for tryLock(", "Object)")),
            new Shape("lockBlocking takes no owner",
                    "Permit held = lock.lockBlocking(\"me\");",
                    "Permit held = lock.lockBlocking();",
                    List.of("no suitable method found for lockBlocking(", "String)")),
            new Shape("unlock takes no owner",
                    "lock.unlock(\"me\");",
                    "lock.unlock();",
                    List.of("method unlock in class", "cannot be applied to given types")),
            new Shape("withLock takes no owner",
                    "lock.withLock(\"me\", () -> CompletableFuture.completedFuture(1));",
                    "lock.withLock(() -> CompletableFuture.completedFuture(1));",
                    List.of("method withLock in class", "cannot be applied to given types")),
            new Shape("AsyncLock.create takes no boolean",
                    "AsyncLock held = AsyncLock.create(true);",
                    "AsyncLock held = AsyncLock.of(dev.semaphore.LockKt.Lock(true));",
                    List.of("no suitable method found for create(boolean)")),
            new Shape("a Permit is not a future: no join",
                    "Object value = permit.join();",
                    "Object value = permit.permits();",
                    List.of("cannot find symbol", "method join()")),
            new Shape("a Permit is not a future: no getNow",
                    "Object value = permit.getNow(null);",
                    "Object value = permit.isReleased();",
                    List.of("cannot find symbol", "method getNow(")),
            new Shape("a Permit is not a future: no complete",
                    "permit.complete(permit);",
                    "permit.close();",
                    List.of("cannot find symbol", "method complete(")),
            new Shape("a Permit is not a future: no thenApply",
                    "Object value = permit.thenApply(Permit::permits);",
                    "Object value = CompletableFuture.completedFuture(permit).thenApply(Permit::permits);",
                    List.of("cannot find symbol", "method thenApply(")),
            new Shape("a Permit is not a CompletableFuture<Permit>",
                    "CompletableFuture<Permit> f = permit;",
                    "CompletableFuture<Permit> f = CompletableFuture.completedFuture(permit);",
                    List.of("incompatible types", "Permit cannot be converted to", "CompletableFuture<")),
            new Shape("a Permit is not a Future",
                    "Future<?> f = permit;",
                    "AutoCloseable f = permit;",
                    List.of("incompatible types", "Permit cannot be converted to", "Future<?>")),
            new Shape("no withUpgradableReadLock (an upgrade's Permit would escape the action)",
                    "rw.withUpgradableReadLock(() -> CompletableFuture.completedFuture(1));",
                    "rw.withReadLock(() -> CompletableFuture.completedFuture(1));",
                    List.of("cannot find symbol", "method withUpgradableReadLock(")));

    private static JavaCompiler javac;
    private static StandardJavaFileManager files;
    private static List<String> classPath;

    @BeforeAll
    static void compiler() throws Exception {
        javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "no system Java compiler: tests must run on a JDK");
        files = javac.getStandardFileManager(null, Locale.ROOT, null);
        classPath = List.of("-classpath", TestSupport.libraryPath());
    }

    @AfterAll
    static void closeFiles() throws IOException {
        files.close();
    }

    /** A source held in memory. */
    private static JavaFileObject source(String className, String text) {
        return new SimpleJavaFileObject(URI.create("string:///" + className + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return text;
            }
        };
    }

    private record Compiled(boolean success, List<Diagnostic<? extends JavaFileObject>> diagnostics) {
        List<Diagnostic<? extends JavaFileObject>> errors() {
            return diagnostics.stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).collect(Collectors.toList());
        }

        String describe() {
            return diagnostics.stream()
                    .map(d -> d.getKind() + " line " + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT))
                    .collect(Collectors.joining("\n"));
        }
    }

    private static Compiled compile(Path out, String className, String text) {
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> options = new ArrayList<>(classPath);
        options.addAll(List.of("-proc:none", "-Xdiags:verbose", "-d", out.toString()));
        Boolean ok = javac.getTask(null, files, diagnostics, options, null, List.of(source(className, text))).call();
        return new Compiled(ok, diagnostics.getDiagnostics());
    }

    /** The 1-based line of the shape in the snippet. */
    private static long shapeLine() {
        String[] lines = TEMPLATE.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].contains(SHAPE)) return i + 1;
        }
        throw new AssertionError("no " + SHAPE + " in the template");
    }

    @TestFactory
    Stream<DynamicTest> eachRuledOutShapeFailsAndItsReplacementCompiles(@TempDir Path dir) {
        long line = shapeLine();
        return SHAPES.stream().map(shape -> DynamicTest.dynamicTest(shape.why(), () -> {
            Path out = Files.createTempDirectory(dir, "out");

            Compiled rejected = compile(out, "Snippet", TEMPLATE.replace(SHAPE, shape.rejected()));
            assertFalse(rejected.success(), "compiled, but must not: " + shape.rejected());
            List<Diagnostic<? extends JavaFileObject>> errors = rejected.errors();
            assertFalse(errors.isEmpty(), "failed without an error diagnostic:\n" + rejected.describe());
            assertTrue(errors.stream().allMatch(d -> d.getLineNumber() == line),
                    "every error must be on the shape's line " + line + ":\n" + rejected.describe());
            assertTrue(errors.stream().anyMatch(d -> shape.errorFragments().stream().allMatch(d.getMessage(Locale.ROOT)::contains)),
                    "expected an error saying " + shape.errorFragments() + ":\n" + rejected.describe());

            Compiled accepted = compile(out, "Snippet", TEMPLATE.replace(SHAPE, shape.accepted()));
            assertTrue(accepted.success() && accepted.errors().isEmpty(),
                    "the replacement must compile: " + shape.accepted() + "\n" + accepted.describe());
        }));
    }

    /** Every documented shape, in one program; it also runs, and reports what it saw. */
    private static final String GOOD = """
            import dev.semaphore.async.*;
            import java.time.Duration;
            import java.util.List;
            import java.util.Optional;
            import java.util.concurrent.CompletableFuture;
            import java.util.concurrent.CompletionStage;
            import java.util.function.Supplier;

            public class GoodShapes {
                public static String run() throws Exception {
                    StringBuilder seen = new StringBuilder();
                    Supplier<CompletionStage<String>> action = () -> CompletableFuture.completedFuture("done");

                    // AsyncSemaphore: every shape of AsyncPermitPool
                    AsyncSemaphore semaphore = AsyncSemaphore.create(4);
                    try (Permit a = semaphore.acquire().join(); Permit b = semaphore.acquire(2).join();
                         Permit c = semaphore.acquire(Duration.ofSeconds(5)).join()) {
                        seen.append("futures ").append(a.permits() + b.permits() + c.permits());
                    }
                    semaphore.acquire(2, Duration.ofSeconds(5)).join().close();
                    try (Permit a = semaphore.acquireBlocking(); Permit b = semaphore.acquireBlocking(2)) {
                        seen.append(", blocking ").append(a.permits() + b.permits());
                    }
                    Optional<Permit> one = semaphore.acquireBlocking(Duration.ofSeconds(5));
                    Optional<Permit> two = semaphore.acquireBlocking(2, Duration.ofSeconds(5));
                    seen.append(", optional ").append(one.orElseThrow().permits() + two.orElseThrow().permits());
                    one.ifPresent(Permit::close);
                    two.ifPresent(Permit::close);
                    boolean t1 = semaphore.tryAcquire();
                    boolean t2 = semaphore.tryAcquire(2);
                    boolean t3 = semaphore.tryAcquire(Duration.ofSeconds(5));
                    boolean t4 = semaphore.tryAcquire(1, Duration.ZERO);
                    seen.append(", tries ").append(List.of(t1, t2, t3, t4));
                    semaphore.release();
                    semaphore.release(3);
                    String w1 = semaphore.withPermit(action).join();
                    String w2 = semaphore.withPermit(2, action).join();
                    seen.append(", with ").append(w1).append('/').append(w2);
                    semaphore.addPermits(1);
                    semaphore.reducePermits(1);
                    semaphore.release(semaphore.drainPermits());
                    seen.append(", queries ").append(List.of(semaphore.availablePermits(), semaphore.totalPermits(),
                            semaphore.queueLength(), semaphore.isClosed()));
                    AsyncSemaphore shared = AsyncSemaphore.of(semaphore.asKotlin());
                    AsyncPermitPool base = shared;
                    base.close(new IllegalStateException("done"));
                    seen.append(", closed ").append(semaphore.isClosed());

                    // AsyncPrioritySemaphore: the same shapes, at the priority of a view
                    AsyncPrioritySemaphore database = AsyncPrioritySemaphore.create(2);
                    AsyncPrioritySemaphore aging = AsyncPrioritySemaphore.create(2, Duration.ofSeconds(1));
                    AsyncPrioritySemaphore view = AsyncPrioritySemaphore.of(database.asKotlin()).atPriority(10);
                    try (Permit p = view.acquire(2).join()) {
                        seen.append("; priority ").append(view.priority()).append(" holds ").append(p.permits());
                    }
                    try (Permit p = database.atPriority(-1).acquireBlocking(2, Duration.ofSeconds(5)).orElseThrow()) {
                        seen.append(", ").append(database.availablePermits()).append(" free");
                    }
                    if (database.atPriority(3).tryAcquire(2, Duration.ofSeconds(5))) database.release(2);
                    seen.append(", ").append(database.atPriority(5).withPermit(2, action).join());
                    seen.append(", queued ").append(database.queueLength() + database.queueLength(10) + aging.queueLength(0));
                    seen.append(", total ").append(aging.totalPermits());

                    // AsyncLock
                    AsyncLock lock = AsyncLock.create();
                    lock.lock().join().close();
                    lock.lock(Duration.ofSeconds(5)).join().close();
                    try (Permit held = lock.lockBlocking()) {
                        seen.append("; locked ").append(lock.isLocked());
                    }
                    lock.lockBlocking(Duration.ofSeconds(5)).orElseThrow().close();
                    if (lock.tryLock()) lock.unlock();
                    if (lock.tryLock(Duration.ofSeconds(5))) lock.unlock();
                    seen.append(", ").append(lock.withLock(action).join());
                    seen.append(", queued ").append(lock.queueLength()).append(", locked ").append(lock.isLocked());
                    AsyncLock.of(lock.asKotlin()).close(null);
                    seen.append(", closed ").append(lock.isClosed());

                    // AsyncReadWriteLock
                    AsyncReadWriteLock rw = AsyncReadWriteLock.create();
                    try (Permit r1 = rw.readLock().join(); Permit r2 = rw.readLock(Duration.ofSeconds(5)).join();
                         Permit r3 = rw.readLockBlocking(); Permit r4 = rw.readLockBlocking(Duration.ofSeconds(5)).orElseThrow()) {
                        seen.append("; reads ").append(rw.readHolds());
                    }
                    if (rw.tryReadLock()) rw.unlockRead();
                    if (rw.tryReadLock(Duration.ofSeconds(5))) rw.unlockRead();
                    rw.writeLock().join().close();
                    rw.writeLock(Duration.ofSeconds(5)).join().close();
                    rw.writeLockBlocking().close();
                    rw.writeLockBlocking(Duration.ofSeconds(5)).orElseThrow().close();
                    if (rw.tryWriteLock()) rw.unlockWrite();
                    if (rw.tryWriteLock(Duration.ofSeconds(5))) rw.unlockWrite();
                    rw.upgradableReadLock().join().close();
                    rw.upgradableReadLock(Duration.ofSeconds(5)).join().close();
                    rw.upgradableReadLockBlocking(Duration.ofSeconds(5)).orElseThrow().close();
                    if (rw.tryUpgradableReadLock()) rw.unlockUpgradableRead();
                    if (rw.tryUpgradableReadLock(Duration.ofSeconds(5))) rw.unlockUpgradableRead();
                    try (Permit upgradable = rw.upgradableReadLockBlocking()) {
                        try (Permit write = rw.upgradeBlocking(upgradable)) {
                            seen.append(", upgraded ").append(rw.isWriteLocked());
                        }
                    }
                    try (Permit upgradable = rw.upgradableReadLock().join()) {
                        rw.upgrade(upgradable).join().close();
                    }
                    try (Permit upgradable = rw.upgradableReadLock().join()) {
                        rw.upgrade(upgradable, Duration.ofSeconds(5)).join().close();
                    }
                    try (Permit upgradable = rw.upgradableReadLock().join()) {
                        Permit write = rw.upgradeBlocking(upgradable, Duration.ofSeconds(5)).orElseThrow();
                        try (Permit read = rw.downgrade(write)) {
                            seen.append(", downgraded ").append(rw.readHolds());
                        }
                    }
                    seen.append(", ").append(rw.withReadLock(action).join()).append('/').append(rw.withWriteLock(action).join());
                    seen.append(", queries ").append(List.of(rw.readHolds(), rw.isWriteLocked(), rw.queueLength(), rw.isClosed()));
                    AsyncReadWriteLock.of(rw.asKotlin()).close(null);
                    AsyncReadWriteLock phaseFair = AsyncReadWriteLock.create(dev.semaphore.ReadWritePolicy.PHASE_FAIR);
                    AsyncReadWriteLock.create(dev.semaphore.ReadWritePolicy.FIFO, dev.semaphore.Diagnostics.named("fifo")).readLockBlocking().close();
                    if (phaseFair.policy() != dev.semaphore.ReadWritePolicy.PHASE_FAIR) throw new AssertionError(phaseFair.policy());
                    seen.append(", closed ").append(rw.isClosed());
                    return seen.toString();
                }
            }
            """;

    @Test
    void everyDocumentedShapeCompilesAndRuns(@TempDir Path dir) throws Exception {
        Compiled good = compile(dir, "GoodShapes", GOOD);
        assertTrue(good.success() && good.errors().isEmpty(), "the documented shapes must compile:\n" + good.describe());
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, CompileShapesTest.class.getClassLoader())) {
            Method run = loader.loadClass("GoodShapes").getMethod("run");
            String seen = (String) run.invoke(null);
            assertEquals("futures 4, blocking 3, optional 3, tries [true, true, true, false], with done/done, queries [4, 4, 0, false], closed true"
                    + "; priority 10 holds 2, 0 free, done, queued 0, total 2"
                    + "; locked true, done, queued 0, locked false, closed true"
                    + "; reads 4, upgraded true, downgraded 1, done/done, queries [0, false, 0, false], closed true", seen);
        }
    }
}
