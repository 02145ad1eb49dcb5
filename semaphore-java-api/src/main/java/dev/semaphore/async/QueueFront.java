/*
 * The Java front-end over the engine's WaiterQueue: futures and blocked threads queue as PermitWaiter
 * subclasses in the SAME line as the Kotlin coroutines of the primitive they wrap. Everything that can
 * race lives in this file; AsyncSemaphore, AsyncLock and AsyncPrioritySemaphore only check arguments
 * and delegate here.
 *
 * Engine contract relied on (WaiterQueue.kt, invariants I1..I9): enqueue(w) == true means granted at
 * once, no callback; false means queued, and exactly one of onGranted/onFailed runs later, once, outside
 * the engine lock (possibly before enqueue returns, on another thread), unless cancel(w) returned true
 * first. cancel(w) == false means the grant or failure already won (the waiter's status is GRANTED or
 * FAILED, readable at once through isGranted()). handBack(w) returns a granted waiter's permits (for a
 * Lock's queue it also clears the holder).
 *
 * INVARIANTS
 * J1  Ownership. Granted permits are always owned by exactly one of: (a) a Permit object that was
 *     handed to the caller (returned, or the value of a future the caller can read), or (b) nobody,
 *     because they were handed back to the queue. A Permit gives them back at most once (J5).
 *
 * J2  Future waiter, the one decision point. A FutureWaiter's future F can be completed by four
 *     parties: onGranted (with a new Permit), onFailed (with the engine's exception), the timeout task
 *     (TimeoutException), and the caller (cancel / complete / completeExceptionally). CompletableFuture
 *     lets exactly one of them win; every party acts only on the result of its own complete call:
 *       - onGranted: if F.complete(permit) returns true the caller owns the permit (J1a); if false,
 *         somebody else completed F first, the permit object was never visible to anyone, and
 *         onGranted calls queue.handBack (J1b).
 *       - the hook F.whenComplete(waiter), registered once the waiter is queued, runs after ANY
 *         completion and calls queue.cancel(waiter). True: the waiter left the line, nothing was or
 *         will be granted to it, no callback will run. False: a grant or failure won inside the engine;
 *         its callback runs (or ran) and settles the permits by the rule above.
 *     Interleavings (G = engine grants, C = someone else completes F):
 *       1. C, then hook cancel before G: cancel true, removed, nothing held.
 *       2. G, then onGranted completes F: the caller holds the permit; the hook's cancel returns false.
 *       3. G, then C wins the race for F, then onGranted: F.complete(permit) is false -> handBack. The
 *          hook's cancel (before or after) returns false and does nothing else.
 *       4. C, then G before the hook's cancel takes the lock: cancel false; onGranted's complete is
 *          false -> handBack. (3 and 4 are the "granted in the same instant" case.)
 *       5. Close/failure: onFailed completes F exceptionally (or loses to C: nothing held either way).
 *     So after any race the permits are held by exactly one Permit or are back in the queue.
 *     obtrudeValue/obtrudeException could overwrite a delivered Permit and lose it, so the returned
 *     future (PermitFuture) refuses them.
 *
 * J3  Timer. The timeout task only completes F exceptionally (a party C of J2). The task is cancelled
 *     by the hook; the hook may run before the timer field is set, so the setter re-checks F.isDone()
 *     after publishing the timer (both volatile: at least one of them sees the other and cancels).
 *
 * J4  Blocking waiter. Only the waiting thread ever calls cancel on its waiter, and it does so only
 *     when it gives up (interrupt or deadline). Outcomes:
 *       - cancel true: nothing held; throw InterruptedException / return empty.
 *       - cancel false and isGranted(): the thread owns the permits right now (the status is set under
 *         the engine lock before cancel could read it), even if onGranted has not run yet. Deadline:
 *         return them. Interrupt: hand them back and throw InterruptedException (documented choice:
 *         InterruptedException always means nothing is held; the flag is cleared as usual).
 *       - cancel false and not granted: it failed; wait for onFailed to publish the cause, then throw.
 *     The callbacks only write the waiter's volatile state and unpark the thread; the thread re-checks
 *     state, interrupt and deadline after every return from park (spurious wake-ups are harmless). It
 *     parks with LockSupport only, never inside synchronized, so a virtual thread unmounts from its
 *     carrier while it waits. A late unpark from onGranted after the thread returned (deadline case)
 *     can make one later park of that thread return early, which every park caller must tolerate.
 *
 * J5  Permit.close() releases through a compare-and-set of its own flag: of racing closes exactly one
 *     releases.
 *
 * J6  Stack safety comes from the engine's trampoline (I7): onGranted completes F, whose dependents may
 *     release synchronously; that release grants the next waiter but its callback is appended to the
 *     trampoline of the releasing thread instead of running nested. The stack stays flat however long
 *     the chain (StackSafetyTest measures it with 100,000 waiters).
 *     Consequence: never BLOCK (acquireBlocking, join) inside a dependent of a future granted here: the
 *     thread is draining its trampoline, and the waiters queued in it are not told until it returns.
 *
 * J7  Bad input is rejected by the public classes before anything here is called; the engine re-checks
 *     (permits > total) before it queues anything. Nothing here changes state and then throws.
 */
package dev.semaphore.async;

import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.internal.PermitWaiter;
import dev.semaphore.internal.WaiterQueue;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The shared machinery of the three public classes; see the invariants at the top of this file. */
final class QueueFront {
    /** A non-blocking attempt that never barges (the queue's tryAcquire, or the Kotlin Lock's tryLock). */
    @FunctionalInterface
    interface FastPath {
        boolean tryTake(int permits, int priority, @Nullable Object owner);
    }

    /** Wraps granted permits into the Permit the caller receives. */
    @FunctionalInterface
    interface PermitFactory {
        Permit make(int permits, @Nullable Object owner);
    }

    final WaiterQueue queue;
    private final FastPath fast;
    private final PermitFactory factory;

    QueueFront(WaiterQueue queue, FastPath fast, PermitFactory factory) {
        this.queue = queue;
        this.fast = fast;
        this.factory = factory;
    }

    // ---- argument checks shared by the public classes (J7) ----

    static int checkPermits(int permits) {
        if (permits < 1) throw new IllegalArgumentException("permits must be >= 1, was " + permits);
        return permits;
    }

    static Duration checkTimeout(@Nullable Duration timeout) {
        return Objects.requireNonNull(timeout, "timeout must not be null");
    }

    static <A> A checkAction(@Nullable A action) {
        return Objects.requireNonNull(action, "action must not be null");
    }

    // ---- futures ----

    /** Acquires without a time limit; a closed queue gives a failed future. */
    CompletableFuture<Permit> acquire(int permits, int priority, @Nullable Object owner) {
        try {
            if (fast.tryTake(permits, priority, owner)) return granted(permits, owner);
            FutureWaiter w = new FutureWaiter(this, permits, priority, owner);
            if (queue.enqueue(w)) return granted(permits, owner);
            w.future.whenComplete(w); // J2 hook
            return w.future;
        } catch (SemaphoreClosedException e) {
            return failed(e);
        }
    }

    /** Acquires within [timeout]; a zero or negative timeout only tries now. */
    CompletableFuture<Permit> acquire(int permits, int priority, @Nullable Object owner, Duration timeout) {
        long nanos = Timeouts.saturatedNanos(timeout);
        try {
            if (fast.tryTake(permits, priority, owner)) return granted(permits, owner);
            if (nanos <= 0) return failed(timeoutException(permits, timeout));
            FutureWaiter w = new FutureWaiter(this, permits, priority, owner);
            if (queue.enqueue(w)) return granted(permits, owner);
            w.future.whenComplete(w); // J2 hook
            w.startTimer(nanos, timeout);
            return w.future;
        } catch (SemaphoreClosedException e) {
            return failed(e);
        }
    }

    private CompletableFuture<Permit> granted(int permits, @Nullable Object owner) {
        PermitFuture f = new PermitFuture();
        f.complete(factory.make(permits, owner));
        return f;
    }

    private static CompletableFuture<Permit> failed(Throwable t) {
        PermitFuture f = new PermitFuture();
        f.completeExceptionally(t);
        return f;
    }

    static TimeoutException timeoutException(int permits, Duration timeout) {
        return new TimeoutException(
                (permits == 1 ? "1 permit was" : permits + " permits were") + " not granted within " + timeout);
    }

    /**
     * The future handed to callers. It refuses obtrudeValue/obtrudeException, which could overwrite a
     * delivered Permit and so lose its permits (J2). Its dependents are ordinary CompletableFutures.
     */
    static final class PermitFuture extends CompletableFuture<Permit> {
        /** Refused: it could overwrite a delivered Permit and lose the permits. */
        @Override
        public void obtrudeValue(Permit value) {
            throw new UnsupportedOperationException("obtrudeValue could lose a granted permit; use cancel or complete");
        }

        /** Refused: it could overwrite a delivered Permit and lose the permits. */
        @Override
        public void obtrudeException(Throwable ex) {
            throw new UnsupportedOperationException("obtrudeException could lose a granted permit; use cancel or completeExceptionally");
        }
    }

    /** J2: a waiter whose wake-up completes a future; it is also the future's completion hook and its timer task. */
    private static final class FutureWaiter extends PermitWaiter implements BiConsumer<@Nullable Permit, @Nullable Throwable>, Runnable {
        private final QueueFront front;
        final PermitFuture future = new PermitFuture();
        private volatile @Nullable ScheduledFuture<?> timer;
        private @Nullable Duration timeout;

        FutureWaiter(QueueFront front, int permits, int priority, @Nullable Object owner) {
            super(permits, priority, owner);
            this.front = front;
        }

        @Override
        protected void onGranted() {
            Permit permit = front.factory.make(getPermits(), getOwner());
            if (!future.complete(permit)) front.queue.handBack(this); // interleavings 3 and 4
        }

        @Override
        protected void onFailed(Throwable cause) {
            future.completeExceptionally(cause);
        }

        /** The completion hook: whoever completed the future, leave the line if still in it. */
        @Override
        public void accept(@Nullable Permit permit, @Nullable Throwable error) {
            front.queue.cancel(this);
            ScheduledFuture<?> t = timer;
            if (t != null) t.cancel(false);
        }

        void startTimer(long nanos, Duration timeout) {
            this.timeout = timeout;
            ScheduledFuture<?> t = Timeouts.schedule(this, nanos);
            timer = t;
            if (future.isDone()) t.cancel(false); // J3: the hook may have run before timer was set
        }

        /** The timer fired. */
        @Override
        public void run() {
            Duration d = timeout;
            future.completeExceptionally(timeoutException(getPermits(), d == null ? Duration.ZERO : d));
        }
    }

    // ---- blocking ----

    /**
     * Blocks until granted ([nanos] < 0: no limit) and returns the permit, or null at the deadline.
     * J4 describes the interrupt and deadline races.
     */
    @Nullable Permit acquireBlocking(int permits, int priority, @Nullable Object owner, long nanos)
            throws InterruptedException {
        if (Thread.interrupted()) throw new InterruptedException("interrupted before waiting for permits");
        if (fast.tryTake(permits, priority, owner)) return factory.make(permits, owner);
        if (nanos == 0) return null;
        boolean timed = nanos > 0;
        long deadline = timed ? System.nanoTime() + nanos : 0L;
        BlockingWaiter w = new BlockingWaiter(permits, priority, owner, Thread.currentThread());
        if (queue.enqueue(w)) return factory.make(permits, owner);
        while (true) {
            if (Thread.interrupted()) {
                if (!queue.cancel(w) && w.isGranted()) queue.handBack(w); // the grant raced the interrupt
                throw new InterruptedException("interrupted while waiting for permits; none are held");
            }
            int s = w.state;
            if (s == BlockingWaiter.GRANTED) return factory.make(permits, owner);
            if (s == BlockingWaiter.FAILED) throw w.failureAsRuntime();
            if (timed) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    if (queue.cancel(w)) return null;
                    if (w.isGranted()) return factory.make(permits, owner);
                    awaitFailure(w); // failed in the same instant: the callback is on its way
                    throw w.failureAsRuntime();
                }
                LockSupport.parkNanos(w, remaining);
            } else {
                LockSupport.park(w);
            }
        }
    }

    /** Waits (not interruptibly: it is a matter of instants) until onFailed has published the cause. */
    private static void awaitFailure(BlockingWaiter w) {
        boolean interrupted = false;
        while (w.state != BlockingWaiter.FAILED) {
            LockSupport.park(w);
            if (Thread.interrupted()) interrupted = true;
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** J4: a waiter that unparks a thread. */
    private static final class BlockingWaiter extends PermitWaiter {
        static final int WAITING = 0;
        static final int GRANTED = 1;
        static final int FAILED = 2;

        private final Thread thread;
        private @Nullable Throwable failure;
        volatile int state = WAITING;

        BlockingWaiter(int permits, int priority, @Nullable Object owner, Thread thread) {
            super(permits, priority, owner);
            this.thread = thread;
        }

        @Override
        protected void onGranted() {
            state = GRANTED;
            LockSupport.unpark(thread);
        }

        @Override
        protected void onFailed(Throwable cause) {
            failure = cause;
            state = FAILED; // publishes failure
            LockSupport.unpark(thread);
        }

        RuntimeException failureAsRuntime() {
            Throwable f = failure;
            if (f instanceof RuntimeException) return (RuntimeException) f;
            return new IllegalStateException("the request failed", f);
        }
    }

    // ---- withPermit ----

    /**
     * Runs [action] once [acquisition] delivers a permit and releases it when the action's stage
     * completes, whichever way; cancelling the result before the grant withdraws the request.
     */
    static <T extends @Nullable Object> CompletableFuture<T> withPermit(
            CompletableFuture<Permit> acquisition, Supplier<? extends CompletionStage<T>> action) {
        CompletableFuture<T> result = new CompletableFuture<>();
        // Completing (cancelling) the result before the grant withdraws the request; J2 keeps the permits.
        result.whenComplete((v, e) -> acquisition.cancel(false));
        acquisition.whenComplete((permit, error) -> {
            if (error != null) {
                result.completeExceptionally(unwrap(error));
                return;
            }
            if (permit == null) { // only if a caller completed our internal future with null: impossible
                result.completeExceptionally(new IllegalStateException("no permit was delivered"));
                return;
            }
            if (result.isDone()) { // cancelled by the caller in the same instant as the grant
                permit.close();
                return;
            }
            CompletionStage<T> stage;
            try {
                stage = action.get();
            } catch (Throwable t) {
                permit.close();
                result.completeExceptionally(t);
                return;
            }
            if (stage == null) {
                permit.close();
                result.completeExceptionally(new NullPointerException("the action returned null instead of a CompletionStage"));
                return;
            }
            stage.whenComplete((value, failure) -> {
                permit.close();
                if (failure != null) result.completeExceptionally(unwrap(failure));
                else result.complete(value);
            });
        });
        return result;
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t.getCause();
        return t instanceof CompletionException && c != null ? c : t;
    }
}
