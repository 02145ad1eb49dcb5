/*
 * JAVA HOLDS: a hold taken by a caller that is not a coroutine (a future or a blocked thread, through
 * bridge/JavaBridge.kt), from its request to its end, and the watch for a handle that leaks. Every path of the
 * bridge (futures and blocking calls; semaphores, locks and read-write locks; upgrade and downgrade) follows
 * these rules and no other:
 * J1  Begins. Before it asks, a request makes its hold, a LockHold: the lock's own (LockImpl.Hold, ReadWriteHold)
 *     or, for a semaphore's permits, a PermitHold (one permit asked by nobody known, J2, shares its pool's: such a
 *     request allocates its handle only). Its handle (the Java Permit) is made from that hold by
 *     [handOut] when the request is granted at once, or by its future's waiter when the grant comes later (on the
 *     thread that frees the permits, and only once the future took it: W3): FutureWaiter, or WritersLineFuture for
 *     a writer in a writers' line. Nowhere else.
 * J2  Who (Observer.kt, H1). If the primitive is observed when the request is made, its Requester (a future's,
 *     or the blocked thread's) is made then, on the requesting thread, and goes with the request: as the try's
 *     `asker` (so a request that fits is granted on the try, as when nobody observes, and recorded as this
 *     Requester's), as its waiter's requester(), into its hold, and to the leak watch. So the observer's record of
 *     the hold is found by identity (Observer.holdOf), never searched for. A request made while nobody observes
 *     carries none and costs nothing more. An upgrade is a request of its own caller; a downgrade continues the
 *     write hold's (its read hold carries the write hold's Requester).
 * J3  Ends. The handle's close calls the hold's unlock, once (the Permit's own state; a PermitHold gives its
 *     permits back at each call). A lock's hold ends by its identity (Lock.kt L4; ReadWriteHold.kt H1); a
 *     semaphore's permits and a read hold end by naming their Requester (Observer.kt, H2), which ends that one
 *     record, not the latest of the same thread; a write or upgradable read hold is the only one of its size.
 * J4  Leaks. A handle made for a request that carries a Requester (J2) is watched while the primitive is
 *     observed: by one Cleaner for the library (daemon thread "semaphore-leaks"), which holds the hold, never the
 *     handle. When the handle is collected, the watch asks the hold whether its permits are still held through it
 *     (LockHold.isHeld): a closed handle, a lock hold that someone unlocked, a read-write hold spent by an upgrade
 *     or downgrade are not, and are not reported. So a closed Permit is never reported, and a leaked one exactly
 *     once: to the listeners (onLeak), to JFR (dev.semaphore.Leak) and to the log (System.Logger "dev.semaphore",
 *     ERROR). Nothing is given back (docs/diagnostics.md, "Leaks", says why). Who, since when and where come from
 *     the observer's record of the hold, read when the handle is made; a hold it did not record is reported as
 *     taken then. A handle whose request was made before observation began is not watched.
 */
@file:OptIn(InternalSemaphoreApi::class)

package dev.semaphore.internal

import dev.semaphore.HoldInfo
import dev.semaphore.Inspectable
import dev.semaphore.QueueBackedPool
import dev.semaphore.bridge.InternalSemaphoreApi
import dev.semaphore.bridge.LockHold
import java.lang.ref.Cleaner
import java.util.concurrent.atomic.AtomicLong

/** J2: who asks, made on the requesting thread if [queue] is observed now; null otherwise. [what]: Requester.FUTURE or THREAD. */
internal fun whoAsks(queue: WaiterQueue, what: Int): Requester? =
    if (!queue.isObserved) null else Requester.ofThread(null, what) // not queue.observer: WaiterQueue.isObserved says why

/** J1, J4: the handle of [hold], granted now to the request of [who], watched for a leak if it carries one. */
internal fun <T> handOut(queue: WaiterQueue, hold: LockHold, who: Requester?, queuePermits: Int, onGrant: (LockHold) -> T): T =
    onGrant(hold).also { if (who != null) Leaks.watch(queue, it, hold, queuePermits, who) }

/** J1: the hold of [permits] of [pool] for the request of [who]; one permit asked by nobody known shares the pool's. */
internal fun permitHold(pool: QueueBackedPool, permits: Int, who: Requester?): LockHold {
    if (who != null || permits != 1) return PermitHold(pool, permits, who)
    return pool.anonymousPermit as LockHold? ?: PermitHold(pool, 1, null).also { pool.anonymousPermit = it }
}

/**
 * J1, J3: the hold of a semaphore's [permits] taken by a Java caller: its [unlock] gives them back, naming the
 * hold it ends when the request carried a Requester ([who], J2).
 */
internal class PermitHold(private val queue: WaiterQueue, override val permits: Int, private val who: Requester?) : LockHold {

    /** J4: read by the leak watch, which exists only for a request with a Requester. */
    @Volatile
    private var held = true

    override val isHeld: Boolean get() = held

    /** Gives the permits back at each call: its handle makes it once (the Java Permit's state), as J3 says. */
    override fun unlock() {
        if (who == null) return queue.release(permits) // asked while nobody observed: the plain release
        held = false
        queue.releaseNamed(permits, who)
    }

    override fun toString(): String = "$permits permits"
}

/** The leak watch (J4): one Cleaner, started by the first watched handle. */
internal object Leaks {
    private val cleaner: Cleaner by lazy {
        Cleaner.create { r -> Thread(r, "semaphore-leaks").apply { isDaemon = true } }
    }

    private val watched = AtomicLong()

    /** How many handles were ever watched (for the tests: an unobserved primitive adds none). */
    fun watchedCount(): Long = watched.get()

    /**
     * J4: watches [handle], just made for the hold [hold] of [queuePermits] permits that [who] requested. Does
     * nothing if [queue] is no longer observed, or if [handle] is [hold] itself (a caller that keeps the hold has
     * no handle to lose).
     */
    fun watch(queue: WaiterQueue, handle: Any?, hold: LockHold, queuePermits: Int, who: Requester) {
        if (handle == null || handle === hold) return
        val observer = queue.observer ?: return
        val taken = queue.withObserver { o, _ ->
            o?.holdOf(who)?.let { Taken(it.permits, it.sinceNanos, it.stack) }
        } ?: Taken(queuePermits, observer.clockNow(), null)
        watched.incrementAndGet()
        cleaner.register(handle, Check(queue, hold, observer.primitive, observer.kind, who, taken))
    }

    /** What the observer knew of a watched hold (J4). */
    private class Taken(val permits: Int, val sinceNanos: Long, val stack: CapturedStack?)

    /** The Cleaner's action for one handle: references everything but the handle (J4). */
    private class Check(
        private val queue: WaiterQueue,
        private val hold: LockHold,
        private val primitive: Inspectable,
        private val kind: String,
        private val who: Requester,
        private val taken: Taken,
    ) : Runnable {
        override fun run() {
            try {
                if (hold.isHeld) report()
            } catch (t: Throwable) {
                Observer.LOG.log(System.Logger.Level.WARNING, "the leak check of a handle of ${describe()} failed", t)
            }
        }

        private fun report() {
            val observer = queue.observer
            val since = taken.sinceNanos
            val held = if (since == UNKNOWN_NANOS) UNKNOWN_NANOS else (observer?.clockNow() ?: System.nanoTime()) - since
            val info = HoldInfo(who, who.owner, taken.permits, since, held, taken.stack?.frames ?: emptyList())
            observer?.leaked(info)
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
