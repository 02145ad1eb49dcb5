package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.Diagnostics;
import dev.semaphore.ReadWritePolicy;
import dev.semaphore.Tracking;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The examples of the Javadoc and of docs/java.md, docs/read-write-lock.md and
 * docs/diagnostics.md, as compiled and running code. Each example is the
 * text between an "// example: NAME" line and the next "// end" line below, and
 * {@link #theDocumentsShowTheseExamplesVerbatim()} checks that the documents show exactly that text.
 */
class DocExamplesTest {
    private final List<String> log = new ArrayList<>();
    private int balance = 100;

    private CompletableFuture<String> fetch(String url) {
        return CompletableFuture.completedFuture("<html>" + url + "</html>");
    }

    private CompletableFuture<String> query(String sql) {
        log.add(sql);
        return CompletableFuture.completedFuture("rows of " + sql);
    }

    private CompletableFuture<Integer> save(String order) {
        log.add("saved " + order);
        return CompletableFuture.completedFuture(order.length());
    }

    private void render(String page) {
        log.add("rendered " + page);
    }

    @Test
    void semaphore() throws Exception {
        // example: semaphore
        AsyncSemaphore limiter = AsyncSemaphore.create(4);              // at most 4 calls at once
        CompletableFuture<String> page = limiter.withPermit(() -> fetch("https://example.com"));
        try (Permit permit = limiter.acquireBlocking()) {               // on a plain or virtual thread
            render(page.join());
        }
        // end
        assertEquals(List.of("rendered <html>https://example.com</html>"), log);
        assertEquals(4, limiter.availablePermits());
    }

    @Test
    void giveUp() throws Exception {
        AsyncSemaphore limiter = AsyncSemaphore.create(1);
        Permit busy = limiter.acquire().join();
        // example: give-up
        CompletableFuture<Permit> request = limiter.acquire(Duration.ofMillis(200));
        if (!request.cancel(false) && !request.isCompletedExceptionally()) {
            request.join().close();   // granted in the same instant: the future holds a Permit to close
        }
        Optional<Permit> maybe = limiter.acquireBlocking(Duration.ofMillis(10));   // empty on timeout
        maybe.ifPresent(Permit::close);
        // end
        assertTrue(request.isCancelled());
        assertFalse(maybe.isPresent());
        busy.close();
        assertEquals(1, limiter.availablePermits());
        assertEquals(0, limiter.queueLength());
    }

    @Test
    void tryForms() throws Exception {
        // example: try
        AsyncSemaphore connections = AsyncSemaphore.create(2);
        if (connections.tryAcquire(2, Duration.ofSeconds(1))) {   // blocks up to 1 s, like Semaphore.tryAcquire
            try {
                render("with both connections");
            } finally {
                connections.release(2);                           // the try forms give back with release(n)
            }
        }
        // end
        assertEquals(List.of("rendered with both connections"), log);
        assertEquals(2, connections.availablePermits());
        assertEquals(0, connections.queueLength());
    }

    @Test
    void blockingForms() throws Exception {
        // example: blocking
        AsyncSemaphore workers = AsyncSemaphore.create(8);
        try (Permit permit = workers.acquireBlocking()) {          // the default: given back once, however it ends
            render("with a permit");
        }
        if (workers.tryAcquire(ChronoUnit.FOREVER.getDuration())) { // no limit; no handle, one atomic step less
            try {
                render("on a hot path");
            } finally {
                workers.release();                                // once: nothing checks it for you
            }
        }
        // end
        assertEquals(List.of("rendered with a permit", "rendered on a hot path"), log);
        assertEquals(8, workers.availablePermits());
    }

    @Test
    void priority() {
        // example: priority
        AsyncPrioritySemaphore database = AsyncPrioritySemaphore.create(1);
        CompletableFuture<String> report = database.withPermit(() -> query("nightly report"));              // priority 0
        CompletableFuture<String> page = database.atPriority(10).withPermit(() -> query("user page"));      // served first if both wait
        // end
        assertEquals("rows of nightly report", report.join());
        assertEquals("rows of user page", page.join());
        AsyncPrioritySemaphore busy = AsyncPrioritySemaphore.create(1);
        Permit held = busy.acquire().join();
        CompletableFuture<String> low = busy.withPermit(() -> query("low"));
        CompletableFuture<String> high = busy.atPriority(10).withPermit(() -> query("high"));
        held.close();
        low.join();
        high.join();
        assertEquals(List.of("nightly report", "user page", "high", "low"), log);
        assertEquals(1, database.availablePermits());
        assertEquals(1, busy.availablePermits());
    }

    @Test
    void lock() throws Exception {
        String order = "order-1";
        // example: lock
        AsyncLock lock = AsyncLock.create();
        CompletableFuture<Integer> saved = lock.withLock(() -> save(order));
        try (Permit held = lock.lockBlocking()) {        // on a plain or virtual thread
            balance -= 10;
        }
        // end
        assertEquals(7, saved.join());
        assertEquals(90, balance);
        assertFalse(lock.isLocked());
    }

    private final List<String> cache = new ArrayList<>();

    private String load() {
        log.add("loaded");
        return "entry";
    }

    /** The read-write example's stage: renders the cache, as a read-only action would. */
    private CompletableFuture<String> render(List<String> entries) {
        log.add("rendered " + entries);
        return CompletableFuture.completedFuture("shown " + entries);
    }

    @Test
    void readWriteLock() throws Exception {
        // example: read-write-lock
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        String shown = lock.withReadLock(() -> render(cache)).join();  // many readers at once
        try (Permit upgradable = lock.upgradableReadLockBlocking()) {
            if (cache.isEmpty()) {
                try (Permit write = lock.upgradeBlocking(upgradable)) {   // no writer in between
                    cache.add(load());
                }
            }
        }
        // end
        assertEquals("shown []", shown);
        assertEquals(List.of("rendered []", "loaded"), log);
        assertEquals(List.of("entry"), cache);
        assertEquals(0, lock.readHolds());
        assertFalse(lock.isWriteLocked());
        assertEquals(0, lock.queueLength());
        lock.writeLock(Duration.ZERO).join().close(); // free again: the write hold is granted at once
    }

    @Test
    void phaseFair() throws Exception {
        java.util.Map<String, Integer> table = new java.util.HashMap<>(java.util.Map.of("tea", 3));
        // example: phase-fair
        AsyncReadWriteLock prices = AsyncReadWriteLock.create(ReadWritePolicy.PHASE_FAIR);
        int price = prices.withReadLock(() -> CompletableFuture.completedFuture(table.get("tea"))).join();
        try (Permit write = prices.writeLockBlocking()) {
            table.put("tea", price + 1);
        }
        // end
        assertEquals(4, table.get("tea"));
        assertEquals(ReadWritePolicy.PHASE_FAIR, prices.policy());
        assertEquals(0, prices.readHolds());
        assertFalse(prices.isWriteLocked());
    }

    @Test
    void diagnostics() {
        // example: diagnostics
        AsyncSemaphore db = AsyncSemaphore.create(8, Diagnostics.named("db").withTracking(Tracking.HOLDERS));
        System.out.println(db.dump());
        // end
        Permit held = db.acquire(3).join();
        assertTrue(db.dump().contains("held by future requested on thread"), db.dump());
        held.close();
    }

    /** Every example, as written between its markers in this file. */
    private static List<Example> examples() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("src/test/java/dev/semaphore/async/DocExamplesTest.java"));
        List<Example> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).trim();
            if (!line.startsWith("// example: ")) continue;
            int end = i + 1;
            while (!lines.get(end).trim().equals("// end")) end++;
            found.add(new Example(line.substring("// example: ".length()), normalize(lines.subList(i + 1, end))));
        }
        return found;
    }

    private record Example(String name, String text) {}

    /** Lines without their indentation (and a Javadoc line without its leading "*"), blank lines dropped. */
    private static String normalize(List<String> lines) {
        return lines.stream()
                .map(l -> l.replaceFirst("^\\s*\\*(?!/) ?", "").strip())
                .filter(l -> !l.isEmpty())
                .collect(Collectors.joining("\n"));
    }

    private static String document(String path) throws IOException {
        return normalize(Files.readAllLines(Path.of(path)));
    }

    @Test
    void theDocumentsShowTheseExamplesVerbatim() throws IOException {
        String java = document("../docs/java.md");
        String topic = document("../docs/diagnostics.md");
        String readWrite = document("../docs/read-write-lock.md");
        String src = "src/main/java/dev/semaphore/async/";
        List<Example> examples = examples();
        assertEquals(List.of("semaphore", "give-up", "try", "blocking", "priority", "lock", "read-write-lock", "phase-fair", "diagnostics"),
                examples.stream().map(Example::name).toList());
        for (Example e : examples) {
            if (e.name().equals("diagnostics")) {
                assertTrue(topic.contains(e.text()), "diagnostics is not shown as compiled in docs/diagnostics.md");
                continue;
            }
            if (e.name().equals("phase-fair")) {
                assertTrue(readWrite.contains(e.text()), "phase-fair is not shown as compiled in docs/read-write-lock.md");
                continue;
            }
            String where = switch (e.name()) {
                case "semaphore" -> src + "AsyncSemaphore.java";
                case "priority" -> src + "AsyncPrioritySemaphore.java";
                case "lock" -> src + "AsyncLock.java";
                case "read-write-lock" -> src + "AsyncReadWriteLock.java";
                default -> null;
            };
            if (where != null) assertTrue(document(where).contains(e.text()), e.name() + " is not shown as compiled in " + where);
            // The README's Java Quickstart is compiled and run as it is shown by ReadmeQuickstartsTest (semaphore-examples).
            if (!e.name().equals("semaphore")) {
                assertTrue(java.contains(e.text()), e.name() + " is not shown as compiled in docs/java.md");
            }
        }
    }
}
