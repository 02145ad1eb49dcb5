package dev.semaphore.distributed.async;

import dev.semaphore.distributed.Lease;
import dev.semaphore.distributed.DistributedJavaBridge;
import dev.semaphore.distributed.DistributedSemaphore;
import dev.semaphore.distributed.DistributedSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import dev.semaphore.distributed.SemaphoreInspection;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DistributedSemaphore} for Java callers: the same fair line across every JVM on the server, as
 * futures ({@code acquire}), blocking calls ({@code acquireBlocking}), a try now ({@code tryAcquire}),
 * and {@code withPermit} over a {@link CompletionStage}. The rules (withdrawing, timeouts, interrupts,
 * the try forms, threads, closing, failures) are in the <a href="package-summary.html">package
 * documentation</a>.
 *
 * <pre>{@code
 * AsyncDistributedSemaphore connections = AsyncDistributedSemaphore.create(client, "db-connections", 8);
 * try (DistributedPermit permit = connections.acquireBlocking()) {           // a plain or virtual thread
 *     query(permit.fencingToken());
 * }
 * CompletableFuture<Report> report = connections.withPermit(lease -> runAsync(lease.fencingToken()));
 * }</pre>
 */
public final class AsyncDistributedSemaphore {
    private final DistributedSemaphore kotlin;

    private AsyncDistributedSemaphore(DistributedSemaphore kotlin) {
        this.kotlin = kotlin;
    }

    /**
     * A handle on the semaphore {@code name} with the default timings; see
     * {@link DistributedSemaphoreClient#semaphore}.
     *
     * @param client the connections to the server
     * @param name the semaphore's name on the server
     * @param permits the total, at least 1; the same in every JVM that uses {@code name}
     * @return the handle
     */
    public static AsyncDistributedSemaphore create(DistributedSemaphoreClient client, String name, int permits) {
        return new AsyncDistributedSemaphore(client.semaphore(name, permits, new DistributedConfig()));
    }

    /**
     * The same with {@code config}'s timings ({@code new DistributedConfig().withLeaseTime(...)}
     * and the other {@code with...} methods).
     *
     * @param client the connections to the server
     * @param name the semaphore's name on the server
     * @param permits the total, at least 1; the same in every JVM that uses {@code name}
     * @param config the lease and heartbeat timings, and the replicas to wait for
     * @return the handle
     */
    public static AsyncDistributedSemaphore create(DistributedSemaphoreClient client, String name, int permits, DistributedConfig config) {
        return new AsyncDistributedSemaphore(client.semaphore(name, permits, config));
    }

    /**
     * Shares {@code semaphore} (a Kotlin handle) with Java callers.
     *
     * @param semaphore a handle from {@link DistributedSemaphoreClient#semaphore}
     * @return a Java view of it
     */
    public static AsyncDistributedSemaphore of(DistributedSemaphore semaphore) {
        return new AsyncDistributedSemaphore(Objects.requireNonNull(semaphore, "semaphore"));
    }

    /** @return the Kotlin handle this wraps */
    public DistributedSemaphore asKotlin() {
        return kotlin;
    }

    /** @return a future of one permit; see {@link #acquire(int)} */
    public CompletableFuture<DistributedPermit> acquire() {
        return acquire(1);
    }

    /**
     * Waits in line for {@code permits} permits, granted together. Cancel the future to
     * <a href="package-summary.html#withdrawing">withdraw</a> the request.
     *
     * @param permits how many, at least 1 and at most the total
     * @return a future of the permit
     */
    public CompletableFuture<DistributedPermit> acquire(int permits) {
        return DistributedJavaBridge.acquireRequest(kotlin, permits, null, this::permit).getFuture();
    }

    /**
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of one permit; see {@link #acquire(int, Duration)}
     */
    public CompletableFuture<DistributedPermit> acquire(Duration timeout) {
        return acquire(1, timeout);
    }

    /**
     * Waits in line at most {@code timeout} for {@code permits} permits: the future fails with
     * {@link java.util.concurrent.TimeoutException}, with nothing held and nothing queued, if the time
     * runs out (<a href="package-summary.html#timeouts">timeouts</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative: only tries now
     * @return a future of the permit
     */
    public CompletableFuture<DistributedPermit> acquire(int permits, Duration timeout) {
        return DistributedJavaBridge.acquireRequest(kotlin, permits, checkTimeout(timeout), this::permit).getFuture();
    }

    /**
     * @return one permit, to be closed; see {@link #acquireBlocking(int)}
     * @throws InterruptedException if interrupted, with nothing held
     */
    public DistributedPermit acquireBlocking() throws InterruptedException {
        return acquireBlocking(1);
    }

    /**
     * Blocks the calling thread until {@code permits} permits are granted: {@link #acquire(int)} and a
     * wait for it (<a href="package-summary.html#interrupts">interrupts</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @return the permit, to be closed
     * @throws InterruptedException if interrupted: the request was withdrawn (a grant that raced the
     *     interrupt handed back), nothing is held
     */
    public DistributedPermit acquireBlocking(int permits) throws InterruptedException {
        return Objects.requireNonNull(DistributedJavaBridge.acquireBlocking(kotlin, permits, null, this::permit));
    }

    /**
     * @param timeout the longest wait
     * @return one permit, or empty if the time ran out; see {@link #acquireBlocking(int, Duration)}
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<DistributedPermit> acquireBlocking(Duration timeout) throws InterruptedException {
        return acquireBlocking(1, timeout);
    }

    /**
     * Blocks the calling thread at most {@code timeout} for {@code permits} permits: the timed
     * {@link #acquire(int, Duration)} and a wait for it. This is the timed try of this class (the
     * {@code tryAcquire} forms never wait: see <a href="package-summary.html#try">the try forms</a>).
     *
     * @param permits how many, at least 1 and at most the total
     * @param timeout the longest wait; zero or negative: only tries now
     * @return the permit, or empty if the time ran out (nothing held, nothing queued)
     * @throws InterruptedException if interrupted: the request was withdrawn, nothing is held
     */
    public Optional<DistributedPermit> acquireBlocking(int permits, Duration timeout) throws InterruptedException {
        return Optional.ofNullable(DistributedJavaBridge.acquireBlocking(kotlin, permits, checkTimeout(timeout), this::permit));
    }

    /**
     * @return one permit if it was free and nobody was queued; see {@link #tryAcquire(int)}
     */
    public Optional<DistributedPermit> tryAcquire() {
        return tryAcquire(1);
    }

    /**
     * Takes {@code permits} permits now if nobody is queued and they are free: one round trip to the
     * server, never queued (<a href="package-summary.html#try">the try forms</a>). The calling thread
     * waits for the answer (at most the client's command timeout: 10 s unless its URI says {@code ?timeout=}).
     *
     * @param permits how many, at least 1 and at most the total
     * @return the permit, to be closed, or empty (nothing held)
     */
    public Optional<DistributedPermit> tryAcquire(int permits) {
        return DistributedJavaBridge.tryAcquireNow(kotlin, permits, Optional.empty(), lease -> Optional.of(permit(lease)));
    }

    /**
     * {@link #withPermit(int, Function)} with one permit.
     *
     * @param action starts the work with the lease and returns its stage
     * @param <T> the result type
     * @return a future of the action's result
     */
    public <T> CompletableFuture<T> withPermit(Function<Lease, ? extends CompletionStage<T>> action) {
        return withPermit(1, action);
    }

    /**
     * Holds {@code permits} permits, renewing their lease, until the stage {@code action} returns
     * completes, then releases them; completes as that stage did, or with
     * {@link dev.semaphore.distributed.LeaseLostException} if the lease was lost meanwhile (the stage is then
     * cancelled if it is a {@code CompletableFuture}). Pass {@link Lease#fencingToken()} to the resource.
     *
     * @param permits how many, at least 1 and at most the total
     * @param action starts the work with the lease and returns its stage (not null)
     * @param <T> the result type
     * @return a future of the action's result
     */
    public <T> CompletableFuture<T> withPermit(int permits, Function<Lease, ? extends CompletionStage<T>> action) {
        Objects.requireNonNull(action, "action");
        return DistributedJavaBridge.withPermitAsync(kotlin, permits, action::apply);
    }

    /** @return the total this handle creates the semaphore with if the server has none */
    public int configuredPermits() {
        return kotlin.getConfiguredPermits();
    }

    /** @return a future of the total on the server now: the permits that exist, held or free */
    public CompletableFuture<Integer> totalPermits() {
        return DistributedJavaBridge.totalPermitsAsync(kotlin);
    }

    /**
     * Adds permits to the total, for every JVM; queued requests that now fit are granted.
     *
     * @param permits how many, at least 1 (checked at once)
     * @return a future that completes once the server changed the total
     */
    public CompletableFuture<@Nullable Void> addPermits(int permits) {
        return DistributedJavaBridge.resizeAsync(kotlin, "add", permits);
    }

    /**
     * Removes permits from the total, for every JVM, without waiting for holders: the free count may
     * go below zero, and releases repay that debt before anyone is granted; a queued request larger
     * than the new total fails with {@code IllegalStateException}.
     *
     * @param permits how many, at least 1 (checked at once) and at most the total (checked by the server)
     * @return a future that completes once the server changed the total
     */
    public CompletableFuture<@Nullable Void> reducePermits(int permits) {
        return DistributedJavaBridge.resizeAsync(kotlin, "reduce", permits);
    }

    /**
     * Makes the total {@code total}, for every JVM, in one idempotent step (a rolling deploy may call it
     * from every instance).
     *
     * @param total the new total, 0 or more (checked at once)
     * @return a future that completes once the server changed the total
     */
    public CompletableFuture<@Nullable Void> setPermits(int total) {
        return DistributedJavaBridge.resizeAsync(kotlin, "set", total);
    }

    /**
     * Removes the semaphore from the server if nobody holds or waits on it; the next use creates it
     * again, with fencing tokens still increasing.
     *
     * @return a future that completes once it was removed, or fails with {@code IllegalStateException}
     *     if permits are held or requests queued (nothing changes)
     */
    public CompletableFuture<@Nullable Void> delete() {
        return DistributedJavaBridge.deleteAsync(kotlin);
    }

    /** @return a future of the permits free now, in every JVM */
    public CompletableFuture<Integer> availablePermits() {
        return DistributedJavaBridge.availablePermitsAsync(kotlin);
    }

    /** @return a future of the number of requests waiting in line now, from every JVM */
    public CompletableFuture<Integer> queueLength() {
        return DistributedJavaBridge.queueLengthAsync(kotlin);
    }

    /**
     * Who holds this semaphore and who waits for it, from every JVM: at most 100 of each; see
     * {@link #inspect(int)}.
     *
     * @return a future of the inspection
     */
    public CompletableFuture<SemaphoreInspection> inspect() {
        return inspect(100);
    }

    /**
     * Who holds this semaphore and who waits for it, from every JVM, in one read-only call to the
     * server that changes nothing and never waits: at most {@code limit} holders (client id and name,
     * permits, fencing token, {@code remaining()} time) and at most {@code limit} requests of the line
     * (client, permits, {@code waited()} time), with the true counts. Its {@code toString()} is a
     * readable dump.
     *
     * @param limit the most entries listed per list, 0 to 1000 (checked at once); 0: the counts only
     * @return a future of the inspection
     */
    public CompletableFuture<SemaphoreInspection> inspect(int limit) {
        return DistributedJavaBridge.inspectAsync(kotlin, limit);
    }

    /** Closes this handle: its pending requests fail and leave the line; permits stay valid. */
    public void close() {
        kotlin.close();
    }

    @Override
    public String toString() {
        return "Async" + kotlin;
    }

    private DistributedPermit permit(Lease lease) {
        return new DistributedPermit(kotlin, lease);
    }

    private static Duration checkTimeout(Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout");
    }
}
