/*
 * The Java-callable forms of DistributedSemaphore and DistributedLock, for the Java front-end
 * (dev.semaphore.distributed.async, whose package documentation states the rules for callers): futures over
 * the same suspending calls, and the blocking forms as those futures plus a wait. A request runs its
 * coroutine on the client's background scope; cancelling or completing its future cancels that
 * coroutine, which withdraws the request and hands back a grant that raced it (R8 in docs/redis-protocol.md);
 * a lease obtained after the future was completed is released, so nothing is held unless the future
 * completed with it.
 *
 * Everything here is internal: Kotlin users of the module do not see it (their API is DistributedSemaphore
 * and DistributedLock), while the Java front-end, compiled in this module, calls it as the static methods
 * of DistributedJavaBridge (Kotlin does not mangle the names of internal top-level functions, nor of the
 * public members of an internal class).
 */
@file:JvmName("DistributedJavaBridge")

package dev.semaphore.distributed

import kotlinx.coroutines.Job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.future.await
import kotlinx.coroutines.future.future
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import kotlin.time.TimeSource
import kotlin.time.toJavaDuration
import kotlin.time.toKotlinDuration

/**
 * One request for a lease, made for Java: [future] completes with the caller's form of the lease (or
 * fails); [job] is the coroutine that asks the server.
 */
internal class LeaseRequest<R>(private val semaphore: SemaphoreHandle) {
    val future: CompletableFuture<R> = CompletableFuture()
    lateinit var job: Job

    /** The lease [future] completed with, if it did (set before completing it). */
    @Volatile
    var granted: Lease? = null

    /**
     * Waits for [future]: its value, or null if it failed with TimeoutException (a timed request that
     * ran out: nothing held, nothing queued); another failure is thrown as it is.
     *
     * If the thread is interrupted: cancels the future, which withdraws the request; if the future had
     * completed with a lease in that instant, releases it; waits (without interruption) until the
     * request's coroutine has finished, so that the server has been told; then throws
     * InterruptedException, with nothing held and nothing queued (unless the server could not be
     * reached, see ServerUnavailableException).
     */
    @Throws(InterruptedException::class)
    fun awaitInterruptibly(): R? {
        try {
            return future.get()
        } catch (e: InterruptedException) {
            withdraw(e)
            throw e
        } catch (e: ExecutionException) {
            val cause = e.cause ?: throw e
            if (cause is TimeoutException) return null
            throw unchecked(cause)
        }
    }

    /** Waits for [future] without interruption (a request that does not queue: one round trip). */
    fun join(): R = try {
        future.join()
    } catch (e: CompletionException) {
        throw unchecked(e.cause ?: e)
    }

    private fun withdraw(interrupt: InterruptedException) {
        if (!future.cancel(false)) { // completed meanwhile: if with a lease, hand it back (R8)
            val lease = granted
            if (lease != null && !future.isCompletedExceptionally) {
                val released = semaphore.client.background.future { withContext(NonCancellable) { semaphore.release(lease) } }
                try {
                    released.get(WITHDRAWAL_WAIT.inWholeMilliseconds, TimeUnit.MILLISECONDS) // T1: then it goes on alone
                } catch (e: java.util.concurrent.TimeoutException) {
                    // not answered yet: the release goes on; the lease ends at its expiry at the latest (L3)
                } catch (e: ExecutionException) {
                    interrupt.addSuppressed(e.cause ?: e)
                }
            }
        }
        val done = CompletableFuture<Unit>()
        job.invokeOnCompletion { done.complete(Unit) }
        // Uninterruptible: returns once the withdrawal was answered, or after WITHDRAWAL_WAIT (T1) while it goes on.
        done.join()
    }

    private fun unchecked(t: Throwable): RuntimeException = when (t) {
        is RuntimeException -> t
        is Error -> throw t
        else -> CompletionException(t)
    }
}

/**
 * Requests [permits] permits for Java, delivering `onGrant(lease)` (it must not throw): waits without
 * limit (null [timeout]), at most [timeout] (then the future fails with `TimeoutException`, nothing
 * held), or, for a zero or negative [timeout], only tries now.
 * @throws IllegalArgumentException at once if [permits] < 1 or more than the total; nothing is sent.
 * @throws dev.semaphore.SemaphoreClosedException at once if the handle is closed.
 */
internal fun <R> DistributedSemaphore.acquireRequest(permits: Int, timeout: java.time.Duration?, onGrant: (Lease) -> R): LeaseRequest<R> {
    val deadline = timeout?.let { TimeSource.Monotonic.markNow() + it.toKotlinDuration() } // from the caller's call (T1)
    return leaseRequest(permits, { lease -> onGrant(lease!!) }) {
        if (deadline == null) {
            acquire(permits)
        } else {
            handle().tryAcquireUntil(deadline, permits)
                ?: throw TimeoutException("$permits permits of $name were not granted within $timeout")
        }
    }
}

/**
 * [acquireRequest], then a wait for it ([LeaseRequest.awaitInterruptibly]): the lease as
 * `onGrant(lease)`, or null if [timeout] ran out.
 * @throws InterruptedException if the thread is interrupted, on entry (nothing is sent) or while it
 *   waits (the request is withdrawn first).
 */
@Throws(InterruptedException::class)
internal fun <R> DistributedSemaphore.acquireBlocking(permits: Int, timeout: java.time.Duration?, onGrant: (Lease) -> R): R? {
    handle().checkRequest(permits)
    if (Thread.interrupted()) throw InterruptedException("interrupted before requesting $permits permits of $name")
    return acquireRequest(permits, timeout, onGrant).awaitInterruptibly()
}

/** [DistributedSemaphore.tryAcquire] now (one round trip; the thread waits for it): `onGrant(lease)`, or [none]. */
internal fun <R> DistributedSemaphore.tryAcquireNow(permits: Int, none: R, onGrant: (Lease) -> R): R =
    leaseRequest(permits, { lease -> if (lease == null) none else onGrant(lease) }) { tryAcquire(permits) }.join()

/** Runs [take] on the client's scope; the future completes with `wrap(lease)`, or a lease it could not take is released. */
private fun <R> DistributedSemaphore.leaseRequest(permits: Int, wrap: (Lease?) -> R, take: suspend () -> Lease?): LeaseRequest<R> {
    val handle = handle()
    handle.checkRequest(permits)
    val request = LeaseRequest<R>(handle)
    val result = request.future
    request.job = handle.client.background.launch {
        try {
            val lease = take()
            request.granted = lease
            if (!result.complete(wrap(lease)) && lease != null) { // cancelled or completed meanwhile: hand it back
                withContext(NonCancellable) { runCatching { release(lease) } }
            }
        } catch (e: Throwable) {
            result.completeExceptionally(e)
        }
    }
    request.job.invokeOnCompletion { cause -> if (cause != null) result.completeExceptionally(cause) } // never ran: client closed
    result.whenComplete { _, _ -> request.job.cancel() }
    return request
}

/** [DistributedSemaphore.release] as a future (completed with null). */
internal fun DistributedSemaphore.releaseAsync(lease: Lease): CompletableFuture<Void?> =
    handle().client.background.future { release(lease); null }

/** [DistributedSemaphore.renew] as a future (completed with null). */
internal fun DistributedSemaphore.renewAsync(lease: Lease): CompletableFuture<Void?> =
    handle().client.background.future { renew(lease); null }

/** [DistributedSemaphore.totalPermits] as a future. */
internal fun DistributedSemaphore.totalPermitsAsync(): CompletableFuture<Int> = handle().client.background.future { totalPermits() }

/** [DistributedSemaphore.addPermits], [DistributedSemaphore.reducePermits] or [DistributedSemaphore.setPermits] ([mode]) as a future. */
internal fun DistributedSemaphore.resizeAsync(mode: String, count: Int): CompletableFuture<Void?> {
    when (mode) { // bad input throws at once, as the Kotlin forms do before they suspend
        "set" -> require(count >= 0) { "total must be 0 or more, was $count" }
        else -> require(count >= 1) { "permits must be at least 1, was $count" }
    }
    return handle().client.background.future {
        when (mode) {
            "add" -> addPermits(count)
            "reduce" -> reducePermits(count)
            else -> setPermits(count)
        }
        null
    }
}

/** [DistributedSemaphore.delete] as a future. */
internal fun DistributedSemaphore.deleteAsync(): CompletableFuture<Void?> = handle().client.background.future { delete(); null }

/**
 * A new future that completes when `lease` ends: with null once released, exceptionally with
 * [LeaseLostException] once lost. Completing or cancelling it does not touch the lease.
 */
internal fun Lease.endedFuture(): CompletableFuture<Void?> {
    val ended = CompletableFuture<Void?>()
    end.invokeOnCompletion { e -> if (e == null) ended.complete(null) else ended.completeExceptionally(e) }
    return ended
}

/** [DistributedSemaphore.availablePermits] as a future. */
internal fun DistributedSemaphore.availablePermitsAsync(): CompletableFuture<Int> = handle().client.background.future { availablePermits() }

/** [DistributedSemaphore.queueLength] as a future. */
internal fun DistributedSemaphore.queueLengthAsync(): CompletableFuture<Int> = handle().client.background.future { queueLength() }

/** [DistributedSemaphore.inspect] as a future; a bad [limit] throws at once, as the Kotlin form does before it suspends. */
internal fun DistributedSemaphore.inspectAsync(limit: Int): CompletableFuture<SemaphoreInspection> {
    checkInspectLimit(limit)
    return handle().client.background.future { inspect(limit) }
}

/** [DistributedLock.inspect] as a future; a bad [limit] throws at once. */
internal fun DistributedLock.inspectAsync(limit: Int): CompletableFuture<LockInspection> {
    checkInspectLimit(limit)
    return asSemaphore().handle().client.background.future { inspect(limit) }
}

/**
 * [withPermit] with a stage: holds [permits] permits (renewing the lease) until the stage that
 * [action] returns completes, however it completes, then releases them. Completes as that stage did,
 * or with [LeaseLostException] if the lease was lost meanwhile. Bad input throws as in [acquireRequest].
 */
internal fun <T> DistributedSemaphore.withPermitAsync(permits: Int, action: (Lease) -> CompletionStage<T>?): CompletableFuture<T> {
    val handle = handle()
    handle.checkRequest(permits)
    return handle.client.background.future {
        withPermit(permits) { lease ->
            val stage = action(lease) ?: throw NullPointerException("the action returned null instead of a CompletionStage")
            stage.await()
        }
    }
}

/** [Lease.remaining] as a `java.time.Duration`. */
internal fun Lease.remainingDuration(): java.time.Duration = remaining.toJavaDuration()
