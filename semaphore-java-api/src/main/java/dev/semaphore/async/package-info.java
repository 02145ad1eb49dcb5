/**
 * The Java face of the semaphore library: {@link dev.semaphore.async.AsyncSemaphore},
 * {@link dev.semaphore.async.AsyncPrioritySemaphore}, {@link dev.semaphore.async.AsyncLock} and
 * {@link dev.semaphore.async.AsyncReadWriteLock} hand out
 * {@link dev.semaphore.async.Permit}s through {@link java.util.concurrent.CompletableFuture}s or
 * blocking calls. Each wraps the Kotlin primitive of the same kind ({@code asKotlin()}), so futures,
 * blocked threads and coroutines stand in <b>one</b> line for <b>one</b> permit count.
 *
 * <p>The rules below hold for every class of this package; the methods link here.
 *
 * <h2 id="shapes">One pattern</h2>
 * Every primitive offers the same families, named after the operation ({@code acquire}, {@code lock},
 * {@code readLock}, {@code writeLock}, {@code upgradableReadLock}):
 * <table>
 *   <caption>The families</caption>
 *   <tr><th>form</th><th>returns</th><th>waits</th></tr>
 *   <tr><td>{@code acquire()}, {@code acquire(Duration)}</td><td>{@code CompletableFuture<Permit>}</td>
 *       <td>never blocks the caller; the future completes when granted (or fails on timeout)</td></tr>
 *   <tr><td>{@code acquireBlocking()}</td><td>{@code Permit}</td><td>blocks until granted</td></tr>
 *   <tr><td>{@code acquireBlocking(Duration)}</td><td>{@code Optional<Permit>}</td><td>blocks up to the timeout</td></tr>
 *   <tr><td>{@code tryAcquire()}</td><td>{@code boolean}</td><td>never waits</td></tr>
 *   <tr><td>{@code tryAcquire(Duration)}</td><td>{@code boolean}</td><td>blocks up to the timeout, as
 *       {@code java.util.concurrent}'s {@code tryAcquire(permits, timeout, unit)} and {@code tryLock(time, unit)} do</td></tr>
 *   <tr><td>{@code withPermit(Supplier)}</td><td>{@code CompletableFuture<T>}</td><td>holds the permits while the
 *       action's {@code CompletionStage} runs</td></tr>
 * </table>
 * The semaphores take a permit count before the timeout ({@code acquire(2, Duration.ofSeconds(1))}). A lone
 * {@code int} is always a permit count, a {@code Duration} always a timeout, and no method takes two
 * neighbouring parameters of one type: a priority is chosen with {@code AsyncPrioritySemaphore.atPriority(p)},
 * not passed next to a count. The try forms' permits are given back with {@code release(n)}
 * ({@code unlock()}, {@code unlockRead()}...); the other forms' with {@link dev.semaphore.async.Permit#close()}.
 * Of the two blocking forms, prefer the one with a {@code Permit}: it gives back exactly once; the timed try
 * form has no handle, and costs one object and one atomic step less per acquisition
 * ({@link dev.semaphore.async.AsyncPermitPool}, "Blocking: a Permit, or no handle").
 *
 * <h2 id="fairness">Fairness</h2>
 * Waiters are served first come, first served (by priority first, for {@link
 * dev.semaphore.async.AsyncPrioritySemaphore}); a newcomer, {@code tryAcquire} included, takes permits
 * only if it would be served before everyone waiting (so, except for a higher priority, never while
 * anyone waits). A request for n permits is granted whole when it is first in line and n are free;
 * until then it blocks the requests behind it, so large requests are never starved. A request for more
 * than the total throws {@link java.lang.IllegalArgumentException} at once; bad arguments throw before
 * anything is queued, with a message that names the value.
 *
 * <h2 id="withdrawing">Withdrawing a request</h2>
 * Cancelling a pending future, or completing it yourself ({@code complete}, {@code
 * completeExceptionally}), withdraws the request: it leaves the line and the waiters behind it are served
 * if they now fit. Permits granted in that same instant are released, never lost. So {@code cancel}
 * returning true means nothing is held, and returning false means the future had already completed:
 * with a {@code Permit} that you must close, or exceptionally (timed out, closed) with nothing held. A request granted at once gets an already completed future, on which cancelling
 * or completing does nothing: it holds the {@code Permit}. Cancelling a future derived from one
 * ({@code thenApply}...) does not reach it. {@code obtrudeValue} and {@code obtrudeException} are not
 * supported (the JDK documents them for error recovery only): on a future that holds a {@code Permit}
 * they would drop it, and its permits would stay held forever. (A pending request's future refuses them;
 * the completed future of a request granted at once is the JDK's, which cannot.)
 *
 * <h2 id="timeouts">Timeouts</h2>
 * A timed future fails with {@link java.util.concurrent.TimeoutException} when the time runs out
 * ({@link java.util.concurrent.CompletableFuture#orTimeout}), and the request is withdrawn as above. A
 * timed blocking call returns an empty {@code Optional} (or false), with nothing held. A zero or
 * negative timeout only tries now.
 *
 * <h2 id="interrupts">Interrupts</h2>
 * A blocking call parks with {@link java.util.concurrent.locks.LockSupport}, so a virtual thread frees
 * its carrier while it waits. An interrupt, before or during the wait, withdraws the request and throws
 * {@link java.lang.InterruptedException} with nothing held, even if the permits were granted in the same
 * instant (they go to the next waiter); the interrupt status is cleared, as usual. (An interrupted
 * {@code upgradeBlocking} keeps the upgradable read it had: {@link dev.semaphore.async.AsyncReadWriteLock}.)
 *
 * <h2 id="threads">Threads</h2>
 * A queued future completes on the thread that frees its permits (in {@code Permit.close()}, a
 * {@code release}, a cancellation...) or on the JDK's timeout thread, so its non-async dependents run
 * there: keep them short and never block in them (no {@code join()}, no {@code acquireBlocking}); use
 * the {@code ...Async} variants to move work elsewhere. Chains of dependents that release again are
 * stack-safe.
 *
 * <h2 id="closing">Closing</h2>
 * A closed semaphore fails its waiters and every later request with
 * {@link dev.semaphore.SemaphoreClosedException}: futures complete exceptionally with it, blocking calls
 * and {@code tryAcquire} throw it. Holders may still release.
 *
 * <p>Every type is null-marked: parameters and results are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.semaphore.async;

import org.jspecify.annotations.NullMarked;
