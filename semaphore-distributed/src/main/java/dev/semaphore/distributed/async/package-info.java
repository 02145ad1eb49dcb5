/**
 * The Java front-end of {@code semaphore-redis}: {@link dev.semaphore.distributed.async.AsyncDistributedSemaphore}
 * and {@link dev.semaphore.distributed.async.AsyncDistributedLock}, over the same Kotlin {@code DistributedSemaphore} and
 * {@code DistributedLock} (one line across every JVM on the server; the guarantees, and what is not promised,
 * are in docs/redis.md, the protocol's rules in docs/redis-protocol.md). They follow the
 * conventions of the local Java API ({@code dev.semaphore.async}), with the differences docs/redis.md
 * ("From Java") lists; the main one is the try forms:
 *
 * <table>
 * <caption>The families</caption>
 * <tr><th>family</th><th>semaphore</th><th>lock</th><th>returns</th></tr>
 * <tr><td>futures</td><td>{@code acquire()}, {@code acquire(permits)}, {@code acquire(timeout)},
 *     {@code acquire(permits, timeout)}</td><td>{@code lock()}, {@code lock(timeout)}</td>
 *     <td>{@code CompletableFuture<DistributedPermit>}</td></tr>
 * <tr><td>blocking</td><td>{@code acquireBlocking()}, {@code acquireBlocking(permits)}</td>
 *     <td>{@code lockBlocking()}</td><td>{@code DistributedPermit}</td></tr>
 * <tr><td>blocking, timed</td><td>{@code acquireBlocking(timeout)}, {@code acquireBlocking(permits, timeout)}</td>
 *     <td>{@code lockBlocking(timeout)}</td><td>{@code Optional<DistributedPermit>}</td></tr>
 * <tr><td>try now</td><td>{@code tryAcquire()}, {@code tryAcquire(permits)}</td><td>{@code tryLock()}</td>
 *     <td>{@code Optional<DistributedPermit>}</td></tr>
 * <tr><td>scoped</td><td>{@code withPermit(action)}, {@code withPermit(permits, action)}</td>
 *     <td>{@code withLock(action)}</td><td>{@code CompletableFuture<T>}</td></tr>
 * <tr><td>queries</td><td>{@code totalPermits()}, {@code availablePermits()}, {@code queueLength()},
 *     {@code inspect()}</td><td>{@code isLocked()}, {@code queueLength()}, {@code inspect()}</td>
 *     <td>futures (they ask the server)</td></tr>
 * <tr><td>life cycle</td><td>{@code addPermits(n)}, {@code reducePermits(n)}, {@code setPermits(total)},
 *     {@code delete()}</td><td>{@code delete()}</td><td>futures</td></tr>
 * </table>
 *
 * <h2 id="try">The try forms return the permit, not a boolean</h2>
 * Locally, {@code tryAcquire} is {@code java.util.concurrent} style and returns {@code boolean}: the
 * permits it takes are anonymous and go back with {@code release(n)}. A distributed grant is a lease
 * with an identity: it is released, renewed and fenced by its {@link dev.semaphore.distributed.async.DistributedPermit}
 * (its id and its fencing token), which a {@code boolean} would lose. So here {@code tryAcquire()},
 * {@code tryAcquire(permits)} and {@code tryLock()} return {@code Optional<DistributedPermit>}: synchronously,
 * after one round trip to the server, never queued (empty if someone is queued or the permits are not
 * free; nothing held). The timed try is {@code acquireBlocking(permits, timeout)} (and
 * {@code lockBlocking(timeout)}), which returns the same {@code Optional}.
 *
 * <h2 id="withdrawing">Withdrawing a request</h2>
 * Cancelling a pending future, or completing it yourself, withdraws the request from the line; if the
 * permits were granted in that same instant they are handed back. Nothing is held after a future that
 * did not complete with a permit. ({@code obtrudeValue} is not guarded: a lease it overwrites stays
 * held until it expires.) Cancelling a {@code withPermit} future while its action runs cancels the
 * action's stage (if it is a {@code CompletableFuture}), then releases.
 *
 * <h2 id="timeouts">Timeouts</h2>
 * A timed future fails with {@link java.util.concurrent.TimeoutException}, and a timed blocking call
 * returns an empty {@code Optional}, with nothing held; a grant that raced the timeout is delivered
 * instead. Either comes within the timeout plus 100 ms, counted from the call, whatever the network does
 * (T1 in docs/redis-protocol.md): the request is withdrawn at the deadline, and if the server does not
 * answer the withdrawal within 100 ms, it goes on in the background, so that the request leaves the line
 * as soon as the server hears it. Zero or negative: only tries now.
 *
 * <h2 id="interrupts">Interrupts</h2>
 * The blocking forms are the futures plus a wait. Interrupting the waiting thread withdraws the
 * request, as cancelling its future would; a grant that raced the interrupt is released. The call
 * then waits (without interruption) until the server has been told, at most 100 ms, and throws
 * {@link java.lang.InterruptedException}: nothing is held. A thread interrupted before the call throws it
 * at once, with nothing sent. (If the server does not answer within 100 ms, the withdrawal goes on in the
 * background until it does, and meanwhile the server drops the request after {@code waiterTimeToLive}.)
 * {@code tryAcquire} and {@code DistributedPermit.close()} wait for one round trip and are not interrupted.
 *
 * <h2 id="replicas">Replicas</h2>
 * With {@code new DistributedConfig().withReplicaAcks(n, timeout)}, a request gets a permit only
 * once {@code n} replicas acknowledged the grant; otherwise it fails with
 * {@link dev.semaphore.distributed.NotReplicatedException} and the grant is handed back (see docs/redis.md
 * for what this protects and what it does not).
 *
 * <h2 id="threads">Threads</h2>
 * Futures complete on the client's background threads ({@code Dispatchers.Default}): do not block in
 * their dependents; use the {@code *Async} methods of {@code CompletableFuture} for long work.
 *
 * <h2 id="closing">Closing a permit</h2>
 * {@link dev.semaphore.distributed.async.DistributedPermit#close()} releases once and blocks the calling thread
 * until the server answers (at most the client's command timeout, 10 s unless its URI says
 * {@code ?timeout=}, if it cannot be reached); later calls do nothing, even if the first one threw. {@code release()} is the same without
 * blocking: every call returns the first call's future. A lease that expired before it was released
 * makes them throw (fail with) {@link dev.semaphore.distributed.LeaseLostException}: its permits already went
 * to others. Renewals stop when the release is sent, so a release that failed otherwise (the server
 * unreachable) is not retried: the permits come back when the lease expires, and the lease then ends as
 * given back, not lost (L3 in docs/redis-protocol.md). A permit that is never
 * closed stays held, renewed by the client, for as long as the client lives (unless {@code autoRenew}
 * is off): close every permit.
 *
 * <h2 id="failures">Failures</h2>
 * Misuse throws at the call, with nothing sent or changed: a permit count below 1, or a null timeout or
 * action, is an {@code IllegalArgumentException} or {@code NullPointerException} whose message names
 * it (a count above the total is known only to the server, which may have been resized: the future
 * fails, or the blocking form throws, with an {@code IllegalArgumentException} naming both); a closed handle or client is a {@code SemaphoreClosedException} (an
 * {@code IllegalStateException}); a {@code Lease} released twice through the Kotlin API is an
 * {@code IllegalStateException} ({@code DistributedPermit} releases once by design). What Redis, the network or
 * the replicas did is a {@link dev.semaphore.distributed.DistributedSemaphoreException} (unchecked, not an
 * {@code IllegalStateException}), one subtype per cause: {@code LeaseLostException},
 * {@code QueuedRequestLostException}, {@code NotReplicatedException}, {@code WrongClusterNodeException},
 * {@code ServerUnavailableException}. A future fails with it; a blocking or try form throws it as it is
 * (not wrapped). docs/redis.md says, for each, when and what to do.
 */
@NullMarked
package dev.semaphore.distributed.async;

import org.jspecify.annotations.NullMarked;
