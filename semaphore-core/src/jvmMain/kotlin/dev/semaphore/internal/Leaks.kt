/*
 * LEAKS: a handle of the Java front-end (dev.semaphore.async.Permit) that is garbage-collected without
 * being closed, its permits still held through it. Reported to the listeners (onLeak), to JFR
 * (dev.semaphore.Leak) and to the log (System.Logger "dev.semaphore", ERROR); nothing is given back
 * (docs/diagnostics.md, "Leaks", says why). The rules:
 * K1  Only a handle handed out while its primitive is observed is watched, so an unobserved primitive
 *     pays nothing. A semaphore's Java request goes to the waiter path while observed (its try asks
 *     with waitsIfRefused, which the engine refuses while observed, as it does a coroutine's: O1), and
 *     the watched handle is made there; its lock-free path is the same instructions as before. A
 *     semaphore's request granted at once is watched only if its timeout allowed no wait (a try: it
 *     cannot go to the line), a Lock's or ReadWriteLock's after one read of its observer.
 * K2  A watched handle's close ends a LockHold (a lock's own hold; for a semaphore's permits a
 *     PermitHold), and the watch (one Cleaner for the library, daemon thread "semaphore-leaks") holds
 *     that hold, never the handle. When the handle is collected, the watch asks the hold whether its
 *     permits are still held through it (LockHold.isHeld): a closed handle, a lock hold that someone
 *     unlocked, a read-write hold spent by an upgrade or downgrade are not, and are not reported. So a
 *     closed Permit is never reported, and a leaked one exactly once.
 * K3  Who, since when and where come from the observer's record of the hold (Observer.kt), found under
 *     the engine's lock when the handle is made: by the request's Requester (a future's waiter keeps
 *     the one it gave the observer), else as the latest hold of the requesting thread with the same
 *     permits. A hold the observer did not record (observation began in between) is reported as taken
 *     when the handle was made.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.internal

import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import java.lang.ref.Cleaner
import java.util.concurrent.atomic.AtomicLong

/** The leak watch (K1-K3): one Cleaner, started by the first watched handle. */
internal object Leaks {
    private val cleaner: Cleaner by lazy {
        Cleaner.create { r -> Thread(r, "semaphore-leaks").apply { isDaemon = true } }
    }

    private val watched = AtomicLong()
    private val checked = AtomicLong()

    /** How many handles were ever watched (for the tests: an unobserved primitive adds none). */
    fun watchedCount(): Long = watched.get()

    /** How many watched handles were collected and looked at, leaked or not (for the tests). */
    fun checkedCount(): Long = checked.get()

    /**
     * K2, K3: watches [handle], just made for a grant of [permits] on [queue], whose close ends [hold]. The
     * hold was requested by [requester] (a future's, or null) on [thread], as a request of kind [what]
     * (Requester.THREAD or FUTURE). Does nothing if the queue is no longer observed, or if [handle] is
     * [hold] itself (a caller that keeps the hold has no handle to lose).
     */
    fun watch(queue: WaiterQueue, handle: Any, hold: LockHold, permits: Int, requester: Requester?, thread: Thread, what: Int) {
        if (handle === hold) return
        val observer = queue.observer ?: return
        val found = queue.withObserver { o, _ ->
            val rec = o?.lastHoldWhere {
                if (requester != null) it.requester === requester else it.requester.thread === thread && it.permits == permits
            }
            if (rec == null) null else Taken(rec.requester, rec.permits, rec.sinceNanos, rec.stack)
        } ?: Taken(requester ?: Requester(what, thread, null, null, null), permits, System.nanoTime(), null)
        when (hold) { // the handle's close names the hold it ends (Observer.kt, H2)
            is PermitHold -> hold.key = found.requester.key
            is ReadWriteHold -> hold.key = found.requester.key
        }
        watched.incrementAndGet()
        cleaner.register(handle, Check(queue, hold, observer.primitive, observer.kind, found))
    }

    /** K1: after a grant on the current thread: watches [handle] if [queue] is observed; returns [handle]. */
    inline fun <T> watchIfObserved(queue: WaiterQueue, handle: T, hold: LockHold, permits: () -> Int): T {
        if (handle !== hold && handle != null && queue.observer != null) {
            watch(queue, handle, hold, permits(), null, Thread.currentThread(), Requester.THREAD)
        }
        return handle
    }

    /** What the observer knew of a watched hold (K3). */
    private class Taken(val requester: Requester, val permits: Int, val sinceNanos: Long, val stack: CapturedStack?)

    /** The Cleaner's action for one handle: references everything but the handle (K2). */
    private class Check(
        private val queue: WaiterQueue,
        private val hold: LockHold,
        private val primitive: Inspectable,
        private val kind: String,
        private val taken: Taken,
    ) : Runnable {
        override fun run() {
            checked.incrementAndGet()
            try {
                if (hold.isHeld) report()
            } catch (t: Throwable) {
                Observer.LOG.log(System.Logger.Level.WARNING, "the leak check of a handle of ${describe()} failed", t)
            }
        }

        private fun report() {
            val now = System.nanoTime()
            val info = HoldInfo(
                taken.requester.describe(),
                taken.requester.owner,
                taken.permits,
                taken.sinceNanos,
                now - taken.sinceNanos,
                taken.stack?.frames ?: emptyList(),
            )
            queue.observer?.leaked(info)
            Jfr.leaked(primitive.name, kind, info)
            Observer.LOG.log(
                System.Logger.Level.ERROR,
                "${describe()}: a Permit was garbage-collected without being closed; its permits stay held " +
                    "(not given back: ${howToEnd()}): $info",
            )
        }

        private fun describe(): String = kind + (primitive.name?.let { " \"$it\"" } ?: "")

        private fun howToEnd(): String = when (kind) {
            "Lock" -> "the lock stays locked until unlock() is called"
            "ReadWriteLock" -> "the hold stays until its unlockRead(), unlockWrite() or unlockUpgradableRead()"
            else -> "they return only through release(n)"
        }
    }
}

/**
 * The hold of a watched handle of a semaphore's permits (K2): its [unlock] gives them back, once (the
 * handle calls it once), and says so to the watch.
 */
internal class PermitHold(private val pool: WaiterQueue, private val permits: Int) : LockHold {
    @Volatile
    private var held = true

    /** Who took these permits, for the release that ends their hold (Observer.kt, H2); set by the watch (K3). */
    @Volatile
    var key: Any? = null

    override val isHeld: Boolean get() = held

    override fun unlock() {
        held = false
        pool.releaseNamed(permits, key)
    }

    override fun toString(): String = "$permits permits"
}

/**
 * A future's waiter whose handle is watched (K1): it keeps the Requester it gives the observer at its
 * offer (under the lock, on the requesting thread), so that the hold's record is found by identity (K3).
 */
internal class WatchedFutureWaiter<T : Any>(
    permits: Int,
    grantee: Grantee,
    onGrant: (LockHold) -> T,
    hold: LockHold,
    future: GrantFuture<T>,
) : FutureWaiter<LockHold, T>(permits, grantee, onGrant, hold, future) {
    private val thread: Thread = Thread.currentThread()
    private var asked: Requester? = null

    override fun requester(): Requester = asked ?: super.requester().also { asked = it }

    override fun onGranted() {
        val handle = onGrant(arg)
        if (future.deliver(handle)) watch(handle) else handBack() // W3: a handle never delivered is not watched
    }

    /** After the grant (the offer's requester() happened before it, under the lock). */
    fun watch(handle: T) = Leaks.watch(queue, handle, arg, permits, asked, thread, Requester.FUTURE)
}

/**
 * As [requestFuture], with a watched handle (K1): `onGrant(hold)` makes it, and its close ends [hold].
 */
internal fun <T : Any> WaiterQueue.requestWatchedFuture(
    permits: Int,
    priority: Int,
    grantee: Grantee,
    onGrant: (LockHold) -> T,
    hold: LockHold,
    onWithdrawn: (() -> Unit)? = null,
): GrantFuture<T> {
    val future = if (onWithdrawn == null) GrantFuture() else HookedGrantFuture<T>(onWithdrawn)
    val w = WatchedFutureWaiter(permits, grantee, onGrant, hold, future)
    if (enqueue(w, priority)) {
        val handle = onGrant(hold)
        future.deliver(handle)
        w.watch(handle)
    } else {
        future.waiter = w // published before the future is: a completion by the caller finds it
    }
    return future
}
