package dev.semaphore.distributed.async;

import dev.semaphore.distributed.Lease;
import dev.semaphore.distributed.DistributedJavaBridge;
import dev.semaphore.distributed.DistributedSemaphore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Permits granted by an {@link AsyncDistributedSemaphore} or {@link AsyncDistributedLock}: a {@link Lease} (with its
 * fencing token) that {@link #close()} releases once, for try-with-resources. See
 * <a href="package-summary.html#closing">closing</a>.
 */
public final class DistributedPermit implements AutoCloseable {
    private final DistributedSemaphore semaphore;
    private final Lease lease;
    private final AtomicReference<@Nullable CompletableFuture<@Nullable Void>> release = new AtomicReference<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    DistributedPermit(DistributedSemaphore semaphore, Lease lease) {
        this.semaphore = semaphore;
        this.lease = lease;
    }

    /** @return the lease: its id, permits, fencing token and time left */
    public Lease lease() {
        return lease;
    }

    /** @return the lease's id (its request's), unique across every client of the server */
    public String id() {
        return lease.id();
    }

    /** @return the fencing token: higher than every earlier grant's of the same semaphore */
    public long fencingToken() {
        return lease.fencingToken();
    }

    /** @return the number of permits held */
    public int permits() {
        return lease.permits();
    }

    /** @return the time left before the lease ends unless renewed, by the server's last answer */
    public Duration remaining() {
        return DistributedJavaBridge.remainingDuration(lease);
    }

    /**
     * A new future that completes when the lease ends: with null once released, exceptionally with
     * {@link dev.semaphore.distributed.LeaseLostException} as soon as it is known to be lost (its renewals
     * failed until its expiry, or it was a fixed lease whose time ran out). Use it to stop the work
     * the permit protects in time. Completing or cancelling the returned future does not affect the
     * lease.
     *
     * @return a future of the lease's end
     */
    public CompletableFuture<@Nullable Void> ended() {
        return DistributedJavaBridge.endedFuture(lease);
    }

    /**
     * Extends the lease by one lease time now. The client renews every lease by itself until it is
     * released, unless the configuration turned {@code autoRenew} off (fixed leases).
     *
     * @return a future that completes once the server extended it, or fails with
     *     {@link dev.semaphore.distributed.LeaseLostException} if it already ended (or another
     *     {@link dev.semaphore.distributed.DistributedSemaphoreException}: see the package's
     *     <a href="package-summary.html#failures">failures</a>)
     */
    public CompletableFuture<@Nullable Void> renew() {
        return DistributedJavaBridge.renewAsync(semaphore, lease);
    }

    /**
     * Releases the permits, once: every call, and {@link #close()}, shares the first call's future. See
     * <a href="package-summary.html#closing">closing</a>.
     */
    public CompletableFuture<@Nullable Void> release() {
        CompletableFuture<@Nullable Void> mine = new CompletableFuture<>();
        CompletableFuture<@Nullable Void> first = release.compareAndExchange(null, mine);
        if (first != null) return first;
        DistributedJavaBridge.releaseAsync(semaphore, lease).whenComplete((v, e) -> {
            if (e == null) mine.complete(null);
            else mine.completeExceptionally(e);
        });
        return mine;
    }

    /**
     * The first call releases (as {@link #release()}) and blocks until the server answers; later calls do
     * nothing. See <a href="package-summary.html#closing">closing</a>.
     *
     * @throws dev.semaphore.distributed.LeaseLostException if the lease had expired before it was released
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        try {
            release().join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) throw cause;
            throw e;
        }
    }

    @Override
    public String toString() {
        return "DistributedPermit(" + lease + (release.get() != null ? ", released)" : ", held)");
    }
}
