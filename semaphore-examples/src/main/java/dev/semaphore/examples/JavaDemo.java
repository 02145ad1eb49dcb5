package dev.semaphore.examples;

import dev.semaphore.Deadlock;
import dev.semaphore.Diagnostics;
import dev.semaphore.Tracking;
import dev.semaphore.async.AsyncLock;
import dev.semaphore.async.AsyncPrioritySemaphore;
import dev.semaphore.async.AsyncReadWriteLock;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The Java demo: the same story as Demo.kt, told with futures and threads. Every claim it prints is
 * checked; a false one ends the program with an exception (and CI fails).
 *
 * <p>Run: {@code mvn -B -q -pl semaphore-examples -am compile exec:java -Dexec.mainClass=dev.semaphore.examples.JavaDemo}
 */
public final class JavaDemo {
    private JavaDemo() {}

    public static void main(String[] args) throws Exception {
        throttling();
        priorities();
        timeout();
        cancellation();
        blockingOnThreads();
        readWrite();
        stall();
        System.out.println("All claims above were checked.");
    }

    private static void check(boolean claim, String what) {
        if (!claim) throw new IllegalStateException("the demo's claim does not hold: " + what);
    }

    /** 50 tasks through withPermit on a 4-permit semaphore: never more than 4 at once. */
    private static void throttling() {
        AsyncSemaphore limiter = AsyncSemaphore.create(4);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        try {
            List<CompletableFuture<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                int id = i;
                calls.add(limiter.withPermit(() -> CompletableFuture.supplyAsync(() -> {
                    peak.accumulateAndGet(running.incrementAndGet(), Math::max);
                    sleep(2);
                    running.decrementAndGet();
                    done.incrementAndGet();
                    return id;
                }, pool)));
            }
            CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0])).orTimeout(30, TimeUnit.SECONDS).join();
        } finally {
            pool.shutdown();
        }
        check(done.get() == 50 && peak.get() <= 4 && limiter.availablePermits() == 4, "throttled to 4");
        System.out.println("Throttling: 50 calls through withPermit on 4 permits, at most " + peak.get()
                + " at once; all 4 permits are back.");
    }

    /** Requests wait by priority: the urgent ones are served first when the permit is freed. */
    private static void priorities() {
        AsyncPrioritySemaphore database = AsyncPrioritySemaphore.create(1);
        Permit busy = database.acquire().join();
        List<String> order = new ArrayList<>();
        List<CompletableFuture<Void>> requests = new ArrayList<>();
        for (String name : List.of("batch-1", "batch-2", "URGENT-1", "batch-3", "URGENT-2")) {
            int priority = name.startsWith("URGENT") ? 10 : 0;
            requests.add(database.atPriority(priority).acquire().thenAccept(p -> {
                try (p) {
                    order.add(name);
                }
            }));
        }
        busy.close(); // each grant runs its dependent, which closes its permit and lets the next one in
        CompletableFuture.allOf(requests.toArray(new CompletableFuture<?>[0])).join();
        check(order.equals(List.of("URGENT-1", "URGENT-2", "batch-1", "batch-2", "batch-3")), "priority order " + order);
        System.out.println("Priorities: served in the order " + order + " (urgent first, then first come).");
    }

    /** A request that times out fails with TimeoutException and holds nothing. */
    private static void timeout() {
        AsyncSemaphore semaphore = AsyncSemaphore.create(1);
        Permit holder = semaphore.acquire().join();
        CompletableFuture<Permit> impatient = semaphore.acquire(1, Duration.ofMillis(50));
        Throwable failure = null;
        try {
            impatient.join();
        } catch (CompletionException e) {
            failure = e.getCause();
        }
        check(failure instanceof TimeoutException && semaphore.queueLength() == 0, "timed out and left the line");
        holder.close();
        check(semaphore.availablePermits() == 1, "the timed-out request holds nothing");
        System.out.println("Timeout: the request gave up after 50 ms with TimeoutException; once the holder"
                + " closed its permit, 1 of 1 permits was free.");
    }

    /** Cancelling the first waiter lets the one behind it have the permit. */
    private static void cancellation() {
        AsyncSemaphore semaphore = AsyncSemaphore.create(1);
        Permit holder = semaphore.acquire().join();
        CompletableFuture<Permit> first = semaphore.acquire();
        CompletableFuture<Permit> second = semaphore.acquire();
        boolean cancelled = first.cancel(false);
        holder.close();
        check(cancelled && second.isDone() && !second.isCompletedExceptionally(), "the second waiter was served");
        second.join().close();
        check(semaphore.availablePermits() == 1, "nothing lost");
        System.out.println("Cancellation: the first waiter cancelled its future; the one behind it got the permit.");
    }

    /** try-with-resources with blocking acquisitions, on virtual threads when the JDK has them. */
    private static void blockingOnThreads() throws Exception {
        AsyncSemaphore semaphore = AsyncSemaphore.create(2);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        String kind = "virtual";
        ExecutorService threads;
        try { // JDK 21+: virtual threads (this code is compiled for Java 17, so reach them by reflection)
            threads = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (NoSuchMethodException e) {
            kind = "platform";
            threads = Executors.newFixedThreadPool(10);
        }
        try {
            List<java.util.concurrent.Future<?>> jobs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                jobs.add(threads.submit(() -> {
                    try (Permit permit = semaphore.acquireBlocking()) {
                        peak.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        sleep(5);
                        inside.decrementAndGet();
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> job : jobs) job.get(30, TimeUnit.SECONDS);
        } finally {
            threads.shutdown();
        }
        check(peak.get() <= 2 && semaphore.availablePermits() == 2, "at most 2 threads inside");
        System.out.println("Blocking: 10 " + kind + " threads took permits with try-with-resources, at most "
                + peak.get() + " inside at once; every permit was closed.");
        if (kind.equals("platform")) {
            System.out.println("  (platform threads: virtual threads need JDK 21 or later, and this is JDK "
                    + Runtime.version().feature() + "; the same code runs on them unchanged.)");
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * AsyncReadWriteLock: readers share it, a queued writer holds back the reader after it, and an
     * upgrade that times out keeps the upgradable read, so the caller can try again.
     */
    private static void readWrite() {
        AsyncReadWriteLock lock = AsyncReadWriteLock.create();
        Permit first = lock.readLock().join();
        Permit second = lock.readLock().join();
        CompletableFuture<Permit> writer = lock.writeLock();
        CompletableFuture<Permit> lateReader = lock.readLock();
        check(!writer.isDone() && !lateReader.isDone(), "the writer waits for the readers, the late reader for the writer");
        System.out.println("Read-write: 2 readers share the lock; a writer and a later reader wait in line;");
        first.close();
        second.close();
        Permit write = writer.join();
        check(!lateReader.isDone(), "the late reader waits for the writer");
        write.close();
        lateReader.join().close();
        System.out.println("  the writer went first, then the late reader.");

        Permit reader = lock.readLock().join();
        try (Permit upgradable = lock.upgradableReadLock().join()) {
            CompletableFuture<Permit> tooSoon = lock.upgrade(upgradable, Duration.ofMillis(20));
            check(failedWith(tooSoon, TimeoutException.class), "the upgrade times out while another reader holds on");
            System.out.println("  an upgrade timed out while another reader held on, and the upgradable read stayed held;");
            reader.close();
            try (Permit upgraded = lock.upgrade(upgradable).join()) {
                check(lock.asKotlin().isWriteLocked(), "the upgrade is the write hold");
                System.out.println("  once that reader left, the same upgradable read became the write hold.");
            }
        }
        check(!lock.asKotlin().isWriteLocked() && lock.asKotlin().getReadHolds() == 0, "the lock is free again");
    }

    /**
     * A stall on purpose: a report holds both permits of the "db" pool and two queries wait behind it;
     * the pool, created with tracking, says who holds and who waits. Then a deadlock: two blocked threads
     * each hold one lock and wait for the other's.
     */
    private static void stall() throws Exception {
        AsyncSemaphore db = AsyncSemaphore.create(2, Diagnostics.named("db").withTracking(Tracking.HOLDERS));
        Permit report = db.acquire(2).join();
        CompletableFuture<Permit> query = db.acquire(1, Duration.ofMinutes(1));
        CompletableFuture<Permit> other = db.acquire(1);
        System.out.println("A stall on purpose; the pool's dump:");
        System.out.println("  " + db.dump().replace("\n", "\n  "));
        check(db.holders().size() == 1 && db.waiters().size() == 2, "one holder, two waiting");
        check(db.waiters().get(0).deadline() != null, "the timed query shows its deadline");
        report.close();
        query.join().close();
        other.join().close();

        AsyncLock accounts = AsyncLock.create(Diagnostics.named("accounts").withDeadlockDetection(Duration.ofMillis(100)));
        AsyncLock ledger = AsyncLock.create(Diagnostics.named("ledger").withDeadlockDetection(Duration.ofMillis(100)));
        CountDownLatch bothHeld = new CountDownLatch(2);
        Thread teller = transfer("teller", accounts, ledger, bothHeld);  // holds "accounts", then waits for "ledger"
        Thread clerk = transfer("clerk", ledger, accounts, bothHeld);    // holds "ledger", then waits for "accounts"
        while (accounts.queueLength() + ledger.queueLength() < 2) sleep(1);
        List<Deadlock> found = Diagnostics.findDeadlocks();
        System.out.println("  two blocked threads each waiting for the other's lock; Diagnostics.findDeadlocks():");
        System.out.println("  " + found.get(0).toString().replace("\n", "\n  "));
        check(found.size() == 1 && found.get(0).participants().size() == 2, "one deadlock of two");
        teller.interrupt();                                               // the teller gives up: the clerk goes on
        teller.join();
        clerk.join();
        // A pending future waits for nobody: the thread that asked for it can still cancel it. So futures are
        // never part of a deadlock the library reports (docs/diagnostics.md, "Who holds").
    }

    /** A thread that takes {@code first}, waits until both threads hold one lock, then waits for {@code second}. */
    private static Thread transfer(String name, AsyncLock first, AsyncLock second, CountDownLatch bothHeld) {
        Thread t = new Thread(() -> {
            try (Permit held = first.lockBlocking()) {
                bothHeld.countDown();
                bothHeld.await();
                second.lockBlocking().close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // gave up waiting: "first" is released by the try
            }
        }, name);
        t.start();
        return t;
    }

    private static boolean failedWith(CompletableFuture<?> future, Class<? extends Throwable> type) {
        try {
            future.join();
            return false;
        } catch (CompletionException e) {
            return type.isInstance(e.getCause());
        }
    }
}
