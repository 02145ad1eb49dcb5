/*
 * THE ENGINE. Every primitive of the library (Semaphore, Lock, PrioritySemaphore, ReadWriteLock, and
 * through them the Java module's AsyncSemaphore, AsyncLock, AsyncPrioritySemaphore) is a thin
 * front-end over one WaiterQueue, so Kotlin coroutines, Java futures and blocked Java threads stand
 * in one line.
 * The engine knows permits, order and waiters; nothing here knows about locks or owners.
 * One file of about 900 lines on purpose: the invariants below (I1-I12, W1-W5) are the engine's one
 * specification, and the code here (the state word and every path that changes it, the waiter and
 * grantee types that W1-W5 define, the wakes of I7) relies on several of them at once, so the rules and
 * the code that keeps them are read together. What stands alone is elsewhere: the orders (WaitOrder.kt,
 * PhaseFairOrder.kt), the coroutine waiter (Suspending.kt), the JVM pieces (src/jvmMain).
 *
 * STATE. One 64-bit atomic word, read as two 32-bit halves, and the total in a field of its own:
 *     FAST word (high half >= 0, so the word is >= 0): nobody waits, the queue is open, the word is
 *         unlocked and there is no debt.
 *         high half: available, 0..total   low half: total, 0..Int.MAX_VALUE (held = total - available)
 *         so the fast paths need nothing but the word (I2).
 *     SLOW word (high half < 0, so the word is < 0): anything else.
 *         high half: SLOW_HI = -2^29 (unlocked) or LOCKED_HI = -2^30 (the engine's lock, I3)
 *         low half: available, signed (below zero after reducePermits took permits still held: debt)
 *     total: the permits that exist (held + available), 0..Int.MAX_VALUE; changed only under the
 *         lock (addPermits, reducePermits), published before the unlock.
 *     While a release's add is on it (I11) the word is unsettled: a FAST word with available above its
 *     total (or past Int.MAX_VALUE, which makes it negative: top bits 1000), a SLOW word with a high half
 *     above SLOW_HI (top bits 1110), a locked word above LOCKED_HI (top bits 1100: still locked).
 * Why two shapes: a fast acquire is then one compare of the whole word (word >= permits shl 32: it
 * is FAST with enough available), one more that it is settled, and one CAS that takes permits from the
 * high half (expecting a guess at the word, not a read of it: I12); a fast release of one permit is
 * one add to the high half, kept if the word was FAST with available < total (exact, no
 * over-release, I11). A SLOW word sends every caller to the locked slow
 * path, which keeps what the word cannot say (the total, the waiters).
 * The waiters live in a WaitOrder (WaitOrder.kt): intrusive lists whose nodes are the waiters.
 *
 * INVARIANTS.
 * I1  held + available == total, where held is the sum of permits granted and not yet released.
 *     Every path that grants permits either delivers them to a live requester or hands them back
 *     through release() (W3); nothing else changes `available`.
 * I2  Fast path: only while the word is FAST may a thread change it without the lock: by a single CAS
 *     from a settled FAST word to a FAST word (tryAcquire takes permits from available, a release of
 *     several permits gives them back), or by a release's add of one permit (I11). No lock, no
 *     allocation. A CAS that races with the lock holder making the word SLOW fails and retries, then
 *     sees SLOW and takes the slow path.
 * I3  Slow path: a thread takes the lock by one CAS from a settled unlocked word (I11) to the LOCKED
 *     word holding the same available count; from then until it sets the word back (the unlock, a CAS
 *     from that LOCKED word), it alone writes the word and the total. It stores a FAST word
 *     only if no waiter is queued, the queue is not closed, nothing is owed (available >= 0) and no
 *     observer is installed (jvmMain/.../Observer.kt, O1: then every call takes this locked path).
 *     A thread that finds the word locked spins, then parks until an unlock (Platform.kt). The lock is
 *     not re-entrant: the engine never takes it twice (W4: callbacks under it do not call back).
 *     The published queue length and a waiter's status are release stores, not full fences: no
 *     decision reads one of them and then relies on a store of another thread without a CAS on the
 *     word in between, and every reader meets them through a volatile load or the lock.
 * I4  No barging: while a waiter is queued, the word is SLOW, so no fast-path tryAcquire can take
 *     permits; on the slow path a newcomer may take permits only if it would be served before every
 *     queued waiter (newcomerLeads: never, in FIFO order, while anyone waits) and they fit.
 * I5  Grant whole, head first: after every change that can free permits (release, addPermits,
 *     cancel, reducePermits), the waiter served next is granted all its permits if they fit
 *     (available >= its request), then the next, and so on; the first that does not fit stops the
 *     loop (head-of-line blocking, on purpose: large requests are not starved by small ones).
 *     Hence at rest: no queued waiter is the head with a request that fits.
 * I6  A waiter's status moves NEW -> QUEUED -> (GRANTED | FAILED | CANCELLED), or NEW -> GRANTED
 *     (granted at enqueue), or NEW -> CANCELLED (its requester gone when its offer would queue it,
 *     W2), only under the lock; exactly one of grant, fail (close, or a request grown larger than the
 *     total) and cancel wins. One move back, outside the lock: a coroutine's waiter whose wait has ended
 *     is set to NEW again by its own coroutine's next wait, before that wait's offer, when its grantee
 *     reuses waiters (W4) and nothing but its Job's handler refers to it (Suspending.kt, C4).
 * I7  Waking happens outside the lock, and the stack stays flat however long a chain of
 *     release-in-callback is. A waiter whose wake runs no caller code on this thread (a coroutine
 *     whose dispatcher dispatches its resume; a thread is unparked) is woken directly. A chain with
 *     any other waiter (a future runs its dependents inline, an unconfined coroutine resumes in place:
 *     Suspending.kt, C2) goes through a per-thread trampoline: a callback that releases again queues
 *     that wake instead of recursing.
 * I8  After close(): every queued waiter fails with SemaphoreClosedException and every later
 *     acquisition throws it; release, resizing and the metrics keep working.
 * I9  Bad input throws before anything changes: every check runs before the first write.
 * I10 Exact reads: readLocked runs a front-end's read-only check under the lock, given the available
 *     count and the queue length of one instant. The queue is then at rest (I5: no head whose
 *     request fits), and every grant has already recorded itself in its grantee (W4, under this
 *     same lock), so the check can compare the front-end's records with the count exactly. What it
 *     cannot see is another thread's own step outside the lock (a fast-path take not yet recorded,
 *     a record cleared whose release has not run yet): those show as more permits taken than
 *     recorded (ReadWriteLockImpl.kt uses this, rule RW3).
 * I11 A release of one permit adds one to the high half with no read before it (on some CPUs a read
 *     that the atomic step waits for costs more than the step: docs/profiles.md), and keeps the add only
 *     if the word it changed was FAST with available < total (then it is a FAST word with one more
 *     available: I2). Otherwise it takes the add back (subtracts it) at once, before it reads or
 *     writes anything else, and then goes on as a release that never added: over-release if that word
 *     was settled FAST with every permit free, the slow path if it was SLOW, a new try if it was
 *     unsettled. Why a kept add is always right: every add is +1 on the high half only, and an add
 *     fails only on a word that is not FAST with available < total, so from the first failing add
 *     until the last is taken back the word is unsettled (STATE): a FAST word then had every permit
 *     free and shows available above its total, a SLOW or locked one shows a high half above its
 *     exact value. Meanwhile nothing can change the word under the adds: a kept add needs available
 *     < total, a CAS (a take, the lock, a release of several permits) needs a settled word, and the
 *     unlock is a CAS from the exact LOCKED word its lock stored, so it waits for adds that landed on
 *     the locked word (a release that found it locked takes its add back, then waits for the lock).
 *     Whoever meets an unsettled word spins (spinWait) for the few instructions between an add and its
 *     take-back. Ranges: fewer than 2^28 adds at once (one per thread) keep the top bits of STATE;
 *     adds never touch the low half, so available (SLOW), total (FAST) and debt read right throughout.
 *     Only releases add: a take that added -1 could cancel a failing add out and make an unsettled
 *     word look settled (docs/profiles.md), so takes stay a CAS.
 * I12 A take's first CAS expects a guess instead of a read of the word: the hint, a plain field next
 *     to the word (Platform.kt), read and written by any thread without ordering. (The read would cost
 *     what I11 says; a guess does not, because the CAS does not wait for it: docs/profiles.md.) The
 *     take checks the guess exactly as it checks a read (FAST, settled, enough available), and the CAS
 *     succeeds only if the word equals it, so nothing relies on the hint's value: a wrong, stale or
 *     torn guess costs one failed CAS, whose witness (the word as it was) is then used as the read.
 *     A guess that could not take (NO_GUESS, too few available, SLOW) is followed by a read, not a CAS.
 *     The hint is written rarely, because under contention a store to it, or a failed CAS, costs a
 *     take more than the read saves (docs/profiles.md): a take whose guess missed sets NO_GUESS, so
 *     that takes read first while the word changes between them; a take that read first, once in
 *     1,024 by the fast path's acquired count, sets the word it took from (which its own release will
 *     most likely restore), so guessing comes back where nothing else changes the word. Nothing but
 *     these two stores writes the hint after construction.
 *
 * THE WAITER PROTOCOL: the one rule every way of waiting follows. There are three kinds of waiter,
 * subclasses of PermitWaiter: a suspended coroutine (SuspendWaiter, Suspending.kt), a pending
 * CompletableFuture and a parked thread (FutureWaiter and BlockingWaiter, jvmMain/.../JvmWaiters.kt).
 * W1  Claim at grant. Before granting a queued waiter, the queue asks it, under the queue's lock, to
 *     claim its requester (tryClaim). A requester that is already gone refuses: a cancelled
 *     coroutine, a future that anyone already completed or cancelled, a thread that gave up. The
 *     waiter is then dropped as CANCELLED and the permits go on to the next in line. A successful
 *     claim commits the requester to the grant, which is delivered outside the lock (onGranted).
 *     The grant is finished only when its status is GRANTED, written last (after the grantee is
 *     told, W4): a requester that sees its claim outside the lock (a thread looking at its own
 *     state) calls cancel(w) before acting on it, and cancel's false return orders it after the
 *     whole grant.
 * W2  Giving up while queued: the requester's side calls cancel(w); true means w left the line with
 *     nothing held and no callback will run. False means a grant or a failure already won (I6): a
 *     failure holds nothing, and a grant was claimed (W1), so the permits are the requester's.
 *     A requester already gone never stands in line, even for a moment: the offer asks mayQueue()
 *     under the lock when the request does not fit at once, and drops a waiter whose requester is gone
 *     as CANCELLED; one whose permits fit is granted, as the fast path would have granted it. cancel(w)
 *     of a waiter not offered yet changes nothing (false), but takes the lock, so an offer in progress
 *     finishes first (a coroutine's Job handler, registered before the offer, relies on that).
 * W3  Prompt cancellation is the only hand-back: a requester that goes away after its successful
 *     claim but before it takes the permits (the coroutine's Job cancelled before it resumes, or its
 *     dispatcher refusing to wake it, the future completed by someone else before onGranted completes
 *     it, the thread interrupted) gives them back through PermitWaiter.handBack, which releases them. So a grant is taken by its
 *     requester or handed back, never both, never neither.
 * W4  The front-end on whose behalf a waiter asks is its Grantee: told of the grant under the lock
 *     (a Lock records its holder there, a ReadWriteLock its holds, in the same step as the grant),
 *     and the one that takes a hand-back (a Lock clears that holder first). It is also told, under
 *     the lock, when an offered waiter is queued instead of granted (a ReadWriteLock marks its
 *     upgrade as waiting there). Callbacks of waiters
 *     and grantees are short, do not throw, and do not call back into the queue while it is locked.
 *     A grantee that relies on no waiter once its wait has ended says so (reusesWaiters): then a
 *     coroutine's waiter may serve that coroutine's next wait (I6).
 * W5  The grantee's own check at the offer: when a request does not fit at once, the offer asks its
 *     grantee, under the lock and before anything changes, whether it may be queued (readyToQueue).
 *     The grantee may throw there (a Lock's relock by the owner that holds it: I9, nothing changed), so
 *     its check and the queueing are one step. It answers false only while its own record is being
 *     changed by another thread that needs no queue lock to finish (Lock.kt L3: a permit taken, its
 *     holder not yet recorded); the offer then unlocks, waits a moment and starts again.
 */
package dev.semaphore.internal

import dev.semaphore.SemaphoreClosedException
import kotlin.concurrent.Volatile
import kotlin.time.Duration
import kotlin.time.TimeMark
import kotlin.time.TimeSource

/**
 * The front-end on whose behalf a waiter asks (W4): a semaphore, or one hold of a Lock. It belongs to
 * one queue, so a waiter reaches its queue through its grantee instead of a field of its own.
 */
internal interface Grantee {
    /** The queue this grantee's waiters stand in. */
    val queue: WaiterQueue

    /** [w] was granted, under the queue's lock (after its claim, or at enqueue). */
    fun granted(w: PermitWaiter)

    /** [w] was granted but its requester went away before taking the permits (W3): give them back. */
    fun handBack(w: PermitWaiter)

    /** The Lock owner this grantee asks for, or null (observation only). */
    val owner: Any? get() = null

    /** [w] was offered and queued instead of granted, under the queue's lock (W4). */
    fun queued(w: PermitWaiter) {}

    /**
     * W5: asked under the queue's lock by the offer of [w], when its request does not fit at once,
     * before anything changed. It may throw (misuse: nothing changes, I9). False means the grantee's
     * own record is in the middle of a change by another thread that needs no queue lock to finish it
     * (Lock.kt L3): the offer then unlocks, waits a moment (spinWait) and starts again.
     */
    fun readyToQueue(w: PermitWaiter): Boolean = true

    /**
     * True if nothing this grantee keeps relies on a waiter once its wait has ended (granted, failed or
     * cancelled): a Semaphore's or a PrioritySemaphore's, and a ReadWriteLock's shared grantees of reads, writes,
     * upgradable reads and the writers' line, which only count; and a Lock's owner-less grantee, which records
     * the waiter as the holder but compares it only in that wait's own hand-back (Lock.kt, L1). A coroutine's
     * waiter may then serve the same coroutine's next wait (Suspending.kt, C4). False for a grantee made for one
     * call (a Lock's Hold, an upgrade's request), which no later wait would match.
     */
    val reusesWaiters: Boolean get() = false
}

/**
 * A request for [permits] permits waiting in a [WaiterQueue]: the node of the queue's intrusive list.
 * A subclass is one kind of waiting (W1..W3): it claims its requester, and wakes it.
 *
 * A waiter serves one wait at a time. For each wait the queue calls exactly one of [onGranted] or [onFailed], once,
 * outside its lock, unless [WaiterQueue.cancel] removed the waiter first or its claim was refused (then neither).
 * Most waiters serve one wait; a coroutine's waiter for a grantee that [Grantee.reusesWaiters] may serve the same
 * coroutine's next wait once this one has ended (I6; Suspending.kt, C4).
 */
internal abstract class PermitWaiter(
    permits: Int,
    val grantee: Grantee,
) : StatusCell() {
    /** The number of permits requested. */
    val permits: Int = checkPermitCount(permits)

    /**
     * The queue this waiter stands in (its grantee's). A waiter keeps only what every kind needs, so that
     * a coroutine's is 48 bytes; its priority is given to [WaiterQueue.enqueue] and kept by the order.
     */
    val queue: WaiterQueue get() = grantee.queue

    var prev: PermitWaiter? = null

    /** The next waiter in its list while queued; once granted or failed (unlinked), the next in the wake chain. */
    var next: PermitWaiter? = null

    /**
     * One reference whose meaning follows the status (one field instead of three keeps a waiter
     * small): while QUEUED in a PriorityOrder or a PhaseFairOrder, what the order keeps for it (its line,
     * or its level and with aging its enqueue time); between a successful claim and onGranted, whatever
     * the subclass keeps for its claim (W1); once FAILED, the failure.
     */
    var slot: Any? = null

    /** The failure, once FAILED. */
    val failure: Throwable? get() = if (status == FAILED) slot as Throwable else null


    /** W1: under the queue's lock; false if the requester is gone. Quick, and must not touch the queue. */
    abstract fun tryClaim(): Boolean

    /**
     * W2: asked under the queue's lock by the offer, only when the request does not fit at once: false
     * if the requester is already gone, and the offer then drops the waiter (CANCELLED) instead of
     * queueing it. Quick, no side effect, and must not touch the queue.
     */
    open fun mayQueue(): Boolean = true

    /** Called once, outside the queue's lock, after the permits were granted to this waiter. */
    abstract fun onGranted()

    /** Called once, outside the queue's lock, when the request failed (closed, say); nothing is held. */
    abstract fun onFailed(cause: Throwable)

    /** I7: true if [onGranted] and [onFailed] run no caller code on the calling thread. */
    open val wakesWithoutCallbacks: Boolean get() = false

    /**
     * Who asks, for observation (Observer.kt): called under the lock on the requester's own thread, at its
     * offer. A coroutine's waiter names the coroutine; the default names the thread.
     */
    open fun requester(): Requester = Requester.ofThread(grantee.owner)

    /** W3: the requester went away after a successful claim; the permits go back through the grantee. */
    fun handBack() {
        check(status == GRANTED) { "only a granted waiter can hand its permits back" }
        grantee.handBack(this)
    }

    fun deliver() {
        if (status == GRANTED) onGranted() else onFailed(slot as Throwable)
    }

    companion object {
        const val NEW = 0
        const val QUEUED = 1
        const val GRANTED = 2
        const val FAILED = 3
        const val CANCELLED = 4
    }
}

/**
 * The one engine: a permit count and a queue of [PermitWaiter]s. See the invariants at the top of
 * this file. All counts must be at least 1; every method checks its input before changing anything.
 *
 * Open so that a front-end whose whole state is the engine's (Semaphore, PrioritySemaphore: see
 * QueueBackedPool) can be the engine itself, and its fast paths reach the state word without
 * following a reference first. Its members are final.
 */
internal open class WaiterQueue(
    initialPermits: Int,
    private val order: WaitOrder,
    timeSource: TimeSource? = null,
) : AtomicStateCell(packFast(checkInitialPermits(initialPermits), initialPermits)) {
    private val epoch: TimeMark? = if (order.usesClock) (timeSource ?: TimeSource.Monotonic).markNow() else null

    /** The permits that exist (STATE): written only by the lock holder, before its unlock (I3). */
    @Volatile
    private var total = initialPermits

    @Volatile
    private var closed = false
    private var closeCause: Throwable? = null

    // The word's fields while locked (I3), and the waiters to wake after unlocking.
    private var wTotal = 0
    private var wAvail = 0
    private var wakeHead: PermitWaiter? = null
    private var wakeTail: PermitWaiter? = null

    // ---- counters since creation, read by snapshot() (SemaphoreSnapshot says which are exact) ----
    // On the lock-free paths (I2) a plain increment, not an atomic one: it adds no fence to the fast
    // path, and two threads taking that path in the same instant may lose a count. A take on a guess
    // (I12) counts before its CAS and takes the count back if the guess missed, so a call in progress
    // may show counted for a moment. The count of takes, freeAcquired, is a field of AtomicStateCell (Platform.kt),
    // beside the word, so that its write lands on the cache line the take's CAS took.
    private var freeRefused = 0L

    // Suspending.kt C5: how many of the next coroutine waits skip their spin for a grant, and how many the next
    // spin that sees none makes skip. Plain fields, read and written without the lock: a heuristic's counters.
    internal var spinSkip = 0
    internal var spinBackoff = 1

    // Under the lock only (I3): exact.
    private var lockedAcquired = 0L
    private var afterWait = 0L
    private var timedOutCount = 0L
    private var cancelledCount = 0L
    private var closedCount = 0L
    private var queuedPermits = 0L

    /**
     * The observer while this primitive is observed (Observer.kt): written under the lock only, read once
     * per locked step into [wObs], and by [refused].
     */
    @Volatile
    var observer: Observer? = null
        private set
    private var wObs: Observer? = null

    /**
     * [observer] != null, for the fast paths of callers outside this class (the Java bridge's whoAsks, the scoped
     * forms' release in ScopedRelease.kt). Not the getter of [observer]: the JIT does not inline a method whose
     * signature names a class not loaded yet, and Observer is not loaded until something observes, so each
     * unobserved request paid a call there (seen with -XX:+PrintInlining: "unloaded signature classes"). A read of
     * the field inside this class inlines.
     */
    val isObserved: Boolean get() = observer != null

    /** Permits free now; negative while reducePermits' debt is being repaid. */
    val availablePermits: Int get() = avail(load())

    /** Permits that exist: held plus available (the total as of the last unlock, while a resize runs). */
    val totalPermits: Int get() = total

    /** Number of waiters queued. */
    val queueLength: Int get() = loadQueued()

    /** True after [close]. */
    val isClosed: Boolean get() = closed

    /** Number of waiters queued with base priority [priority]. */
    fun queueLength(priority: Int): Int = locked { order.countAt(priority) }

    /**
     * I10: calls [check] under the lock with the available count and the number of queued waiters
     * as they are at that one instant, and returns its result; nothing changes. [check] only reads:
     * it is short, does not throw and does not call back into this queue.
     */
    fun <R> readLocked(check: (available: Int, queued: Int) -> R): R = locked { check(wAvail, order.size) }

    /**
     * Takes [permits] now if they are free and no queued waiter should be served first; false otherwise.
     * @throws IllegalArgumentException if [permits] < 1 or exceeds the total.
     * @throws SemaphoreClosedException if closed.
     */
    fun tryAcquirePermits(permits: Int, priority: Int = 0): Boolean = tryAcquirePermits(permits, priority, false)

    /**
     * [tryAcquirePermits] for a caller that offers a waiter if this fails ([waitsIfRefused] true): while a
     * waiter is queued it answers false without taking the lock, because enqueue takes the same look
     * under the lock anyway (and grants at once if the waiters left meanwhile). A caller that queues
     * behind others then takes the lock once, not twice.
     */
    fun tryAcquirePermits(permits: Int, priority: Int, waitsIfRefused: Boolean): Boolean =
        tryAcquirePermits(permits, priority, waitsIfRefused, null)

    /**
     * [tryAcquirePermits], naming for observation only the Lock [owner] that asks and who asks ([asker]:
     * null for the calling thread, the caller's CoroutineContext for a coroutine, [Requester.FUTURE_ASKER]
     * for a future; Observer.kt, H1).
     */
    fun tryAcquirePermits(permits: Int, priority: Int, waitsIfRefused: Boolean, owner: Any?, asker: Any? = null): Boolean {
        checkPermitCount(permits)
        val need = permits.toLong() shl 32
        var s = hint // I12: a guess at the word (NO_GUESS: read first)
        if (s >= need && s ushr 32 <= s and LOW) { // FAST, available >= permits (I2), settled (I11)
            // Counted before the CAS (after it, the count's read and write would wait for the CAS: about 1.5 ns a
            // cycle on some CPUs, docs/profiles.md), and taken back if the guess missed.
            freeAcquired++
            val w = cax(s, s - need)
            if (w == s) return true
            freeAcquired--
            hint = NO_GUESS // I12: the guess missed; read first from now on
            s = w
        } else {
            s = load()
        }
        var step = 0
        while (true) {
            if (s >= need) { // FAST, and available >= permits (I2)
                if (s ushr 32 <= s and LOW) { // settled (I11): available <= total
                    val w = cax(s, s - need)
                    if (w == s) {
                        val n = freeAcquired + 1
                        freeAcquired = n
                        if (n and GUESS_AGAIN == 0L) hint = s // I12: now and then, guess again
                        return true
                    }
                    s = w
                    continue
                }
                spinWait(step++) // I11: a release's add, about to be taken back
                s = load()
                continue
            }
            if (s < 0) break
            val t = (s and LOW).toInt() // FAST: the low half is the total (an add in flight only raises the high one)
            require(permits <= t) { tooMany(permits, t) }
            return false
        }
        if (waitsIfRefused && loadQueued() > 0) return false
        return tryAcquireSlow(permits, priority, waitsIfRefused, owner, asker)
    }

    // Out of line, so that the fast path above stays small enough for the JIT to inline.
    private fun tryAcquireSlow(permits: Int, priority: Int, waitsIfRefused: Boolean, owner: Any?, asker: Any?): Boolean {
        return locked {
            checkOpenLocked()
            require(permits <= wTotal) { tooMany(permits, wTotal) }
            val obs = wObs
            if (obs != null && waitsIfRefused && asker == null) {
                false // observed: the caller's waiter asks next, and says who it is (O1)
            } else if (wAvail >= permits && order.newcomerLeads(priority, now())) {
                wAvail -= permits
                lockedAcquired++
                obs?.acquiredNow(permits, Requester.of(asker, owner))
                true
            } else {
                false
            }
        }
    }

    /**
     * Offers [waiter], of [priority] (ignored in FIFO order), to the queue. Returns true if it was granted at once: the caller then holds the
     * permits, and [PermitWaiter.onGranted] will NOT be called (nor tryClaim: the requester is present). Returns false if it was queued: one of
     * its callbacks will be called later (possibly before this method returns, on another thread),
     * unless [cancel] removes it first. A waiter whose requester is gone when it would have to wait
     * ([PermitWaiter.mayQueue], W2) is neither granted nor queued: false, its status CANCELLED, and no
     * callback will run.
     * @throws IllegalArgumentException if the request exceeds the total (nothing is queued).
     * @throws SemaphoreClosedException if closed (nothing is queued).
     * @throws IllegalStateException if [waiter] was offered before.
     */
    fun enqueue(waiter: PermitWaiter, priority: Int = 0): Boolean {
        val st = waiter.status
        check(st == PermitWaiter.NEW) { "this waiter was already offered to a queue" }
        var step = 0
        while (true) {
            val outcome = locked {
                checkOpenLocked()
                require(waiter.permits <= wTotal) { tooMany(waiter.permits, wTotal) }
                val now = now()
                if (wAvail >= waiter.permits && order.newcomerLeads(priority, now)) {
                    wAvail -= waiter.permits
                    lockedAcquired++
                    wObs?.acquiredNow(waiter.permits, waiter.requester())
                    waiter.grantee.granted(waiter) // W4, before the status (W1)
                    waiter.setStatus(PermitWaiter.GRANTED)
                    OFFER_GRANTED
                } else if (!waiter.grantee.readyToQueue(waiter)) { // W5: nothing changed; try again
                    OFFER_AGAIN
                } else if (!waiter.mayQueue()) { // W2: its requester is gone, and it would have to wait
                    waiter.setStatus(PermitWaiter.CANCELLED)
                    cancelledCount++
                    OFFER_NOT_GRANTED
                } else {
                    order.add(waiter, priority, now, wAvail)
                    queuedPermits += waiter.permits
                    wObs?.queued(waiter, priority)
                    waiter.setStatus(PermitWaiter.QUEUED)
                    waiter.grantee.queued(waiter) // W4
                    OFFER_NOT_GRANTED
                }
            }
            if (outcome != OFFER_AGAIN) return outcome == OFFER_GRANTED
            spinWait(step++)
        }
    }

    /**
     * Removes a queued [waiter]; true if it was removed (nothing is held and no callback will run).
     * False if it was already granted, failed or cancelled: then the grant or failure stands (W2). If
     * the removal lets the waiters behind fit, they are granted at once. [timedOut] says why the requester
     * gave up (its deadline passed, or anything else), for the counters only. A [waiter] not offered yet is
     * left to its offer (false; W2: the offer asks [PermitWaiter.mayQueue]); the lock is still taken, so
     * that an offer in progress finishes first and this call then finds the waiter queued, or granted.
     */
    fun cancel(waiter: PermitWaiter, timedOut: Boolean = false): Boolean {
        val st = waiter.status
        if (st != PermitWaiter.QUEUED && st != PermitWaiter.NEW) return false
        return cancelLocked(waiter, timedOut)
    }

    /**
     * [cancel] without its first look at the status outside the lock: for a waiter that may be set NEW again by
     * another thread (I6's move back), whose status is read only under the lock here (Suspending.kt, C4).
     */
    fun cancelLocked(waiter: PermitWaiter, timedOut: Boolean = false): Boolean {
        return locked {
            when (waiter.status) {
                PermitWaiter.QUEUED -> {
                    order.remove(waiter)
                    queuedPermits -= waiter.permits
                    if (timedOut) timedOutCount++ else cancelledCount++
                    wObs?.leftLine(waiter, timedOut)
                    waiter.setStatus(PermitWaiter.CANCELLED)
                    grantLocked()
                    true
                }
                PermitWaiter.NEW -> false // not offered yet: its offer asks mayQueue() (W2)
                else -> false
            }
        }
    }

    /**
     * Gives back [permits]; waiters that now fit are granted, in order.
     * @throws IllegalArgumentException if [permits] < 1.
     * @throws IllegalStateException if that would make more permits available than exist (over-release).
     */
    fun release(permits: Int) {
        if (permits == 1) {
            // I11: one add, with no read before it (a read that the atomic step must wait for costs more than
            // the step itself on some CPUs), kept if the word it changed was FAST with a permit held.
            val old = getAndAdd(ONE)
            if (old >= 0 && old ushr 32 < old and LOW) return
            getAndAdd(-ONE) // I11: taken back before anything else, whatever the word was
            if (old < 0) return releaseSlow(1)
        } else {
            checkPermitCount(permits)
        }
        val add = permits.toLong() shl 32
        var step = 0
        while (true) {
            val s = load()
            if (s < 0) break
            val a = (s ushr 32).toInt()
            val t = (s and LOW).toInt() // FAST: available high, total low
            if (a > t) { // I11: another release's add, about to be taken back
                spinWait(step++)
                continue
            }
            check(permits <= t - a) { overRelease(permits, a, t) }
            if (cas(s, s + add)) return // available + permits <= total: stays in its half
        }
        releaseSlow(permits)
    }

    /**
     * [release] by a caller that names the hold it ends ([key]: the coroutine's Job of a scoped form such as
     * withPermit, a Java handle's hold), so that observation ends exactly that hold (Observer.kt, H2).
     * Unobserved, it is [release].
     */
    fun releaseNamed(permits: Int, key: Any?) {
        if (key == null || observer == null) return release(permits)
        checkPermitCount(permits)
        releaseSlow(permits, key)
    }

    // Out of line, like tryAcquireSlow.
    private fun releaseSlow(permits: Int, key: Any? = null) {
        locked {
            check(wAvail.toLong() + permits <= wTotal) { overRelease(permits, wAvail, wTotal) }
            wAvail += permits
            wObs?.released(permits, key)
            grantLocked()
        }
    }

    /** Adds [permits] to the total and to the available count; waiters that now fit are granted. */
    fun addPermits(permits: Int) {
        checkPermitCount(permits)
        locked {
            require(wTotal.toLong() + permits <= Int.MAX_VALUE) {
                "cannot add $permits permits to a total of $wTotal: the total may not exceed ${Int.MAX_VALUE}"
            }
            wTotal += permits
            wAvail += permits
            wObs?.resized(wTotal - permits, wTotal)
            grantLocked()
        }
    }

    /**
     * Removes [permits] from the total and from the available count, which may go below zero: the
     * debt is repaid by later releases before anyone is granted. A queued waiter whose request now
     * exceeds the total fails with IllegalStateException when it reaches the head of the line.
     */
    fun reducePermits(permits: Int) {
        checkPermitCount(permits)
        locked {
            require(permits <= wTotal) { "cannot reduce by $permits permits: the total is only $wTotal" }
            wTotal -= permits
            wAvail -= permits
            wObs?.resized(wTotal + permits, wTotal)
            grantLocked() // the head may now exceed the total and fail, letting those behind it fit
        }
    }

    /** Takes every available permit now (regardless of waiters) and returns how many; 0 if none or in debt. */
    fun drainPermits(): Int = locked {
        val taken = if (wAvail > 0) wAvail else 0
        wAvail -= taken
        if (taken > 0) wObs?.acquiredNow(taken, Requester.ofThread(null, Requester.DRAIN))
        taken
    }

    /**
     * Closes the queue: every queued waiter fails with [SemaphoreClosedException] carrying [cause], and
     * every later acquisition throws it. Holders may still release. A second call does nothing.
     */
    fun close(cause: Throwable?) {
        locked {
            if (!closed) {
                closeCause = cause
                closed = true
                var failed = 0
                while (true) {
                    val w = order.peek() ?: break
                    order.removeFirst(w)
                    queuedPermits -= w.permits
                    closedCount++
                    failed++
                    wObs?.failed(w)
                    failLocked(w, SemaphoreClosedException(cause))
                }
                wObs?.closed(cause, failed)
            }
        }
    }

    override fun toString(): String =
        "WaiterQueue(available=${avail(load())}, total=$total, queued=${loadQueued()}, closed=$closed)"


    // ---- slow path machinery (lock held) ----

    /**
     * Throws what an acquisition of a closed queue throws (I8), or nothing while it is open. A refusal is
     * counted (failedByClose) as the locked paths count it, under the lock, which only a closed queue takes here.
     */
    fun checkOpen() {
        if (closed) locked { checkOpenLocked() }
    }

    /** [checkOpen] under the lock, counting the refusal. */
    private fun checkOpenLocked() {
        if (closed) {
            closedCount++
            throw SemaphoreClosedException(closeCause)
        }
    }

    /**
     * Counts a try of [permits] that took nothing (a plain increment, as on the lock-free path), tells an
     * observer, and returns false, for the front-ends' tryAcquire forms: `tryAcquirePermits(n) || refused(n)`.
     */
    fun refused(permits: Int): Boolean {
        freeRefused++
        observer?.refused(permits)
        return false
    }

    /** Installs an observer (O1) made by [make] if none is, under the lock, and runs [then] with it there. */
    fun <R> observed(make: () -> Observer, then: (Observer) -> R): R = locked {
        val o = wObs ?: make().also {
            observer = it
            wObs = it
        }
        then(o)
    }

    /** Removes [o] if it is still installed and nothing needs it any more: the lock-free paths return. */
    fun observerMayGo(o: Observer) = locked {
        if (wObs === o && !o.needed) {
            observer = null
            wObs = null
        }
    }

    /** Runs [block] under the lock with the observer, if one is installed (O2: its records are read there). */
    fun <R> withObserver(block: (Observer?, WaitOrder) -> R): R = locked { block(wObs, order) }

    /** The queue's clock (for aging), in nanoseconds. */
    fun clockNow(): Long = now()

    /**
     * The engine's part of a snapshot, read under the lock (I10: one instant), given to [build] with
     * the waiting requests per priority level (empty in FIFO order).
     */
    fun <R> readCounts(build: (EngineCounts) -> R): R {
        val c = EngineCounts()
        locked {
            c.total = wTotal
            c.available = wAvail
            c.queuedRequests = order.size
            c.queuedPermits = queuedPermits
            c.byPriority = order.countsByPriority()
            c.acquired = lockedAcquired
            c.acquiredAfterWait = afterWait
            c.timedOut = timedOutCount
            c.cancelled = cancelledCount
            c.failedByClose = closedCount
            c.closed = closed
            c.oldestWaitStart = wObs?.oldestWaitNanos()
        }
        c.acquired += freeAcquired // outside the lock: the lock-free counts are not the lock's (I2)
        c.refused += freeRefused
        return build(c)
    }

    private fun now(): Long = epoch?.elapsedNow()?.inWholeNanoseconds ?: 0L

    /** I5: grants from the head while the request fits; fails a head that can no longer ever fit. */
    private fun grantLocked() {
        while (true) {
            val w = order.peek() ?: return
            if (w.permits > wTotal) {
                order.removeFirst(w)
                queuedPermits -= w.permits
                wObs?.failed(w)
                failLocked(
                    w,
                    IllegalStateException(
                        "a request for ${w.permits} permits can never be granted: the total is now $wTotal",
                    ),
                )
                continue
            }
            if (w.permits > wAvail) return
            order.removeFirst(w)
            queuedPermits -= w.permits
            if (!w.tryClaim()) { // W1
                w.setStatus(PermitWaiter.CANCELLED) // its requester is gone; its cancel() will find nothing to do
                cancelledCount++
                wObs?.leftLine(w, false)
                continue
            }
            wAvail -= w.permits
            lockedAcquired++
            afterWait++
            wObs?.grantedAfterWait(w)
            w.grantee.granted(w) // W4, before the status (W1)
            w.setStatus(PermitWaiter.GRANTED)
            appendWake(w)
        }
    }

    private fun failLocked(w: PermitWaiter, cause: Throwable) {
        w.slot = cause
        w.setStatus(PermitWaiter.FAILED)
        appendWake(w)
    }

    private fun appendWake(w: PermitWaiter) { // w is unlinked, so its `next` is free for the wake chain
        val t = wakeTail
        if (t == null) wakeHead = w else t.next = w
        wakeTail = w
    }

    private inline fun <R> locked(block: () -> R): R {
        val s = lockWord()
        wTotal = total
        wAvail = avail(s)
        val lockedWord = packSlow(wAvail, LOCKED_HI)
        wObs = observer
        var wake: PermitWaiter? = null
        try {
            return block()
        } finally {
            storeQueuedRelease(order.size)
            wake = wakeHead
            wakeHead = null
            wakeTail = null
            if (wTotal != total) total = wTotal
            val a = wAvail
            val obs = wObs
            val events = obs?.takePending()
            wObs = null
            // I3: the unlock (from the word this lock stored, I11)
            unlock(lockedWord, if (a >= 0 && order.size == 0 && !closed && obs == null) packFast(a, wTotal) else packSlow(a, SLOW_HI))
            if (events == null) {
                if (wake != null) wakeAll(wake)
            } else {
                try {
                    if (wake != null) wakeAll(wake)
                } finally {
                    obs.deliver(events) // O2: after the wakes, outside the lock
                }
            }
        }
    }

    /** I3: takes the lock (one CAS from a settled unlocked word to the LOCKED word) and returns the word as it was. */
    private fun lockWord(): Long {
        val s = load()
        if (settledUnlocked(s) && cas(s, packSlow(avail(s), LOCKED_HI))) return s
        return lockWordContended()
    }

    private fun lockWordContended(): Long {
        var step = 0
        var unsettled = 0
        while (true) {
            val s = load()
            if (settledUnlocked(s)) {
                if (cas(s, packSlow(avail(s), LOCKED_HI))) return s
            } else if (s and TOP4 != LOCKED_TOP) {
                spinWait(unsettled++) // I11: an add in flight, taken back in a few instructions (nobody wakes a parker for it)
            } else if (step++ < SPINS) {
                pauseBriefly() // no memory access in between: cheap for the lock holder's core
            } else {
                parkWhileLocked(TOP4, LOCKED_TOP)
            }
        }
    }

    companion object {
        /** The high half of a settled unlocked SLOW word, and of the locked word (STATE, I11): -2^29 and -2^30. */
        private const val SLOW_HI: Int = -0x2000_0000
        private const val LOCKED_HI: Int = -0x4000_0000
        private const val LOW: Long = 0xFFFF_FFFFL

        /** I12: a hint that no take can use (a SLOW word's shape): takes read the word first. */
        private const val NO_GUESS: Long = -1L

        /** I12: a take that read first sets the hint when the fast path's acquired count is a multiple of 1,024. */
        private const val GUESS_AGAIN: Long = 1023L

        /** One permit in the high half: a release's add (I11). */
        private const val ONE: Long = 1L shl 32

        /** I11: a word is locked while its top 4 bits are 1100 (LOCKED_HI plus fewer than 2^28 adds in flight). */
        private const val TOP4: Long = -0x1000_0000_0000_0000L // 0xF0000000_00000000
        private const val LOCKED_TOP: Long = -0x4000_0000_0000_0000L // 0xC0000000_00000000

        /** Looks this many more times at a locked word, pausing briefly in between, before parking. */
        private const val SPINS = 2

        /** What one attempt of an offer did (enqueue). */
        private const val OFFER_GRANTED = 0
        private const val OFFER_NOT_GRANTED = 1
        private const val OFFER_AGAIN = 2

        /**
         * The available count of a settled word: the high half of a FAST word, the low half of a SLOW one. Of
         * an unsettled one (I11), the count without the adds on it, which are all taken back: a FAST word's
         * total if its high half went above it, else the low half (an add changes only the high half; a FAST
         * word pushed past Int.MAX_VALUE by adds had every permit free, and its low half is the total).
         */
        fun avail(s: Long): Int = if (s >= 0) minOf(s ushr 32, s and LOW).toInt() else s.toInt()

        /** I11: a word that nobody's add is on, and not locked: what the lock and a take may start from. */
        fun settledUnlocked(s: Long): Boolean = if (s >= 0) s ushr 32 <= s and LOW else (s ushr 32).toInt() == SLOW_HI

        /** The FAST word: nobody waits, 0 <= [avail] <= [total]: available high, total low (held = total - available). */
        fun packFast(avail: Int, total: Int): Long = (avail.toLong() shl 32) or total.toLong()

        /** A SLOW word with high half [hi] (SLOW_HI or LOCKED_HI) and [avail] in its low half. */
        fun packSlow(avail: Int, hi: Int): Long = (hi.toLong() shl 32) or (avail.toLong() and LOW)

        /** A FIFO queue (Semaphore, Lock). */
        fun fifo(permits: Int): WaiterQueue = WaiterQueue(permits, FifoOrder())

        /** The order of a priority queue, with optional [aging]. */
        fun priorityOrder(aging: Duration?): WaitOrder {
            if (aging != null) {
                require(aging.isPositive() && aging.isFinite()) { "aging must be positive and finite, was $aging" }
            }
            return PriorityOrder(aging?.inWholeNanoseconds?.coerceAtLeast(1L) ?: 0L)
        }
    }
}

/** The engine's counts at one instant, for a snapshot (see [WaiterQueue.readCounts]). */
internal class EngineCounts {
    var total = 0
    var available = 0
    var queuedRequests = 0
    var queuedPermits = 0L
    var byPriority: Map<Int, Int> = emptyMap()
    var acquired = 0L
    var acquiredAfterWait = 0L
    var refused = 0L
    var timedOut = 0L
    var cancelled = 0L
    var failedByClose = 0L
    var closed = false

    /** How long the oldest request in line has waited (nanoseconds), if the queue is observed and one waits. */
    var oldestWaitStart: Long? = null
}

// ---- the wake trampoline (I7) ----

private class WakeBatch {
    var head: PermitWaiter? = null
    var tail: PermitWaiter? = null
    var draining = false
}

private val wakeSlot = ThreadSlot<WakeBatch>()

/** Delivers a chain of waiters linked by `next` (I7). */
private fun wakeAll(chain: PermitWaiter) {
    if (chain.next == null && chain.wakesWithoutCallbacks) return chain.deliver() // one waiter: nothing to collect
    var w: PermitWaiter? = chain
    while (w != null) {
        if (!w.wakesWithoutCallbacks) return wakeThroughTrampoline(chain)
        w = w.next
    }
    var error: Throwable? = null
    w = chain
    while (w != null) {
        val next = w.next
        w.next = null
        error = deliverCollecting(w, error)
        w = next
    }
    if (error != null) throw error
}

/** Delivers [chain] through this thread's trampoline: calls made while it drains only append. */
private fun wakeThroughTrampoline(chain: PermitWaiter) {
    val batch = wakeSlot.get() ?: WakeBatch().also { wakeSlot.set(it) }
    var last = chain
    while (true) last = last.next ?: break
    val t = batch.tail
    if (t == null) batch.head = chain else t.next = chain
    batch.tail = last
    if (batch.draining) return
    batch.draining = true
    var error: Throwable? = null
    try {
        while (true) {
            val w = batch.head ?: break
            batch.head = w.next
            if (batch.head == null) batch.tail = null
            w.next = null
            error = deliverCollecting(w, error)
        }
    } finally {
        batch.draining = false
    }
    if (error != null) throw error
}

/** Delivers [w]; a throwing callback does not stop the others: its error joins [error], rethrown at the end. */
private fun deliverCollecting(w: PermitWaiter, error: Throwable?): Throwable? {
    try {
        w.deliver()
    } catch (e: Throwable) {
        if (error == null) return e
        error.addSuppressed(e)
    }
    return error
}

// ---- checks and messages shared by every front-end ----

private fun checkInitialPermits(permits: Int): Int {
    require(permits >= 0) { "permits must be >= 0, was $permits" }
    return permits
}

internal fun checkPermitCount(permits: Int): Int {
    require(permits >= 1) { "permits must be >= 1, was $permits" }
    return permits
}

private fun tooMany(permits: Int, total: Int) =
    "a request for $permits permits can never be granted: the semaphore has only $total permits in total"

private fun overRelease(permits: Int, available: Int, total: Int) =
    "cannot release $permits permits: $available of $total are available, so at most ${total - available} are held"
