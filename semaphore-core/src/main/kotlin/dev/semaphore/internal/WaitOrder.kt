/*
 * The orders in which queued waiters are served. Common Kotlin; every method is called with the
 * owning WaiterQueue's lock held, so nothing here is thread-safe on its own.
 *
 * Invariants (checked by the tests through WaiterQueue):
 * - A waiter is in at most one WaiterList at a time (FifoOrder's one list, the Level of its
 *   priority, or PhaseFairOrder's readers' or exclusive line; the upgrade of PhaseFairOrder and of UpgradeFirstOrder is in none). `prev`/`next` link it to its neighbours; `head.prev == null`, `tail.next == null`.
 * - Link, unlink and the size count are O(1); nothing walks a list to find a waiter.
 * - FifoOrder: one list; the head is the longest-waiting waiter.
 * - UpgradeFirstOrder (ReadWriteLock's FIFO policy): FifoOrder's list for priority 0, and the one queued
 *   upgrade (priority 1, in no list) served first; the order PriorityOrder without aging gives them. O(1).
 * - PriorityOrder: one non-empty Level (a WaiterList) per priority in use, found by a hash map, and a
 *   binary max-heap of those levels ordered by `before()` on their heads. A level leaves the heap and
 *   the map the moment it becomes empty, so L (levels in the heap) is the number of distinct
 *   priorities that have waiters. peek() is O(1); add, remove and poll are O(1) + O(log L).
 * - Ordering with aging: the effective priority of a waiter of priority p that has waited d is
 *   p + d / aging (a real number; exactly one higher per whole `aging` interval). Comparing two
 *   waiters at the same instant `now` cancels `now` out: w1 goes first iff
 *   (p1 - p2) * aging > t1 - t2, where t is the enqueue time. The order between two waiters therefore
 *   never changes while they wait, so a heap keyed on enqueue data stays valid without re-sorting.
 *   Ties go to the older waiter (FIFO), then to the higher base priority.
 * - PhaseFairOrder (PhaseFairOrder.kt; ReadWriteLock's PHASE_FAIR policy): the upgrade (at most one), a
 *   readers' line (requests of 1 permit) and an exclusive line (writes and upgradable reads), each FIFO,
 *   and a turn, WRITERS, OPEN or CLOSED. peek() is the upgrade; else, unless the turn is WRITERS, the
 *   readers' head; else the exclusive head, else the readers' head. All steps are O(1).
 *   PF1 The batch. A reader granted from the line while the turn is not CLOSED closes the batch at the
 *       reader then last in the readers' line (CLOSED): the readers waiting at that instant are the
 *       batch, and readers that join later stand after it. When the batch's last reader is granted, or
 *       leaves the line as the last of the batch still queued, the turn becomes WRITERS.
 *   PF2 A reader that joins an empty readers' line sets the turn: OPEN if the exclusive line is empty or
 *       the write hold is taken (no permit available and no plain read recorded: the front-end's check,
 *       made under the queue's lock), else WRITERS (readers hold the lock and an exclusive request waits:
 *       this reader waits for that one's turn). One that joins a non-empty readers' line stands behind
 *       the readers there and keeps the turn, with two exceptions: while the turn is CLOSED and the
 *       exclusive line is empty, it joins the batch (it becomes its last); while the turn is OPEN, an
 *       exclusive request waits and the write hold is not taken (readers hold the lock), it closes the
 *       batch before joining (CLOSED at the reader ahead of it), so it waits for that request's turn.
 *       When the exclusive line empties because its last request leaves (cancel, timeout), no reader has
 *       anyone to wait for: a CLOSED batch grows to the whole readers' line, WRITERS becomes OPEN.
 *   PF3 A write granted from the exclusive line, or the upgrade, opens the turn (OPEN): the readers waiting
 *       then, and those that join while that write hold is taken, are the next batch. An upgradable read
 *       granted from the line closes a batch at once of the readers waiting then (it shares the lock with
 *       them), or sets WRITERS if none waits.
 *   PF4 Newcomers (I4): the upgrade leads unless one is queued; any other request only if nobody waits.
 *   Hence: while the write hold is taken, the turn is OPEN or the readers' line is empty (a write is
 *   granted from the line, PF3, or to a newcomer, when nobody waits, PF4, and a reader joining during it
 *   sees it, PF2); so when it ends, I5 grants every waiting reader before the next exclusive request, and
 *   after that batch the exclusive line's head is served before any reader that came later (PF1). An add
 *   never makes the head a request that fits (I5 at rest): a turn set by PF2 is OPEN only when the
 *   readers' head was the head anyway (exclusive line empty) or nothing fits (no permit available).
 */
package dev.semaphore.internal

/** An intrusive doubly linked list of waiters: the waiter is the node. */
internal open class WaiterList {
    var head: PermitWaiter? = null
        private set
    var tail: PermitWaiter? = null
        private set
    var size: Int = 0
        private set

    fun isEmpty(): Boolean = head == null

    fun linkLast(w: PermitWaiter) {
        val t = tail
        w.prev = t
        w.next = null
        if (t == null) head = w else t.next = w
        tail = w
        size++
    }

    fun unlink(w: PermitWaiter) {
        val p = w.prev
        val n = w.next
        if (p == null) head = n else p.next = n
        if (n == null) tail = p else n.prev = p
        w.prev = null
        w.next = null
        size--
    }

    /** [unlink] of the head [w], with the stores an unlinked head needs and no more (its prev is null). */
    fun unlinkFirst(w: PermitWaiter) {
        val n = w.next
        head = n
        if (n == null) tail = null else n.prev = null
        w.next = null
        size--
    }
}

/** How a WaiterQueue orders its waiters. */
internal sealed interface WaitOrder {
    /** Number of queued waiters. */
    val size: Int

    /** The waiter to serve next, or null if none waits. */
    fun peek(): PermitWaiter?

    /**
     * Queues [w] with [priority], stamped with `now` (nanoseconds on the queue's clock, used only for
     * aging), when [available] permits are free (read only by PhaseFairOrder, PF2).
     */
    fun add(w: PermitWaiter, priority: Int, now: Long, available: Int)

    /** Removes [w], which must be queued here. */
    fun remove(w: PermitWaiter)

    /** Removes [w], which must be the waiter [peek] returns. */
    fun removeFirst(w: PermitWaiter)

    /** Whether a newcomer of [priority] arriving at `now` would be served before everyone queued. */
    fun newcomerLeads(priority: Int, now: Long): Boolean

    /** Number of waiters queued with base [priority]. */
    fun countAt(priority: Int): Int

    /** The waiters queued per base priority, highest first, levels with waiters only (empty in FIFO order). */
    fun countsByPriority(): Map<Int, Int>

    /** The priority queued [w] (of base [priority]) is served at, at `now`, after aging. */
    fun effectivePriority(w: PermitWaiter, priority: Int, now: Long): Int = priority

    /** Whether `now` is used at all (false: the queue never reads its clock). */
    val usesClock: Boolean
}

/** Plain first-come, first-served order; priorities are ignored. The order is its one list. */
internal class FifoOrder : WaiterList(), WaitOrder {
    override fun peek(): PermitWaiter? = head

    override fun add(w: PermitWaiter, priority: Int, now: Long, available: Int) = linkLast(w)

    override fun remove(w: PermitWaiter) = unlink(w)

    override fun removeFirst(w: PermitWaiter) = unlinkFirst(w)

    override fun newcomerLeads(priority: Int, now: Long): Boolean = isEmpty()

    override fun countAt(priority: Int): Int = size

    override fun countsByPriority(): Map<Int, Int> = emptyMap()

    override val usesClock: Boolean get() = false
}

/**
 * ReadWriteLock's FIFO policy: one first-come, first-served list for priority 0 (every request but the
 * upgrade), and the upgrade (priority 1, at most one queued: ReadWriteLockImpl.kt) served before it. The
 * order PriorityOrder without aging gives those two priorities, without its map and heap.
 */
internal class UpgradeFirstOrder : WaitOrder {
    private val line = WaiterList()
    private var upgrade: PermitWaiter? = null

    override val size: Int get() = line.size + (if (upgrade != null) 1 else 0)

    override fun peek(): PermitWaiter? = upgrade ?: line.head

    override fun add(w: PermitWaiter, priority: Int, now: Long, available: Int) {
        if (priority == 0) return line.linkLast(w)
        check(priority == 1) { "priority must be 0, or 1 for the upgrade, was $priority" }
        check(upgrade == null) { "only one upgrade may wait, and one already does" }
        upgrade = w
    }

    override fun remove(w: PermitWaiter) = if (w === upgrade) upgrade = null else line.unlink(w)

    override fun removeFirst(w: PermitWaiter) = if (w === upgrade) upgrade = null else line.unlinkFirst(w)

    /** As PriorityOrder's: the upgrade leads while none waits; any other newcomer only while nobody waits. */
    override fun newcomerLeads(priority: Int, now: Long): Boolean =
        if (priority > 0) upgrade == null else size == 0

    override fun countAt(priority: Int): Int = when (priority) {
        0 -> line.size
        1 -> if (upgrade != null) 1 else 0
        else -> 0
    }

    override fun countsByPriority(): Map<Int, Int> = when {
        upgrade != null && line.size > 0 -> mapOf(1 to 1, 0 to line.size)
        upgrade != null -> mapOf(1 to 1)
        line.size > 0 -> mapOf(0 to line.size)
        else -> emptyMap()
    }

    override val usesClock: Boolean get() = false
}

/** One FIFO list per priority, levels kept in a max-heap. [agingNanos] is 0 for no aging. */
internal class PriorityOrder(private val agingNanos: Long) : WaitOrder {
    private class Level(val priority: Int) : WaiterList() {
        var heapIndex: Int = -1
    }

    /** What a queued waiter's slot holds with aging: its level and its enqueue time (without aging, the level alone). */
    private class AgingStamp(val level: Level, val enqueuedAt: Long)

    private val levels = HashMap<Int, Level>()
    private var heap = arrayOfNulls<Level>(8)
    private var heapSize = 0
    private var count = 0

    override val size: Int get() = count

    override val usesClock: Boolean get() = agingNanos > 0

    override fun peek(): PermitWaiter? = if (heapSize == 0) null else heap[0]!!.head

    override fun add(w: PermitWaiter, priority: Int, now: Long, available: Int) {
        var level = levels[priority]
        val isNew = level == null
        if (level == null) {
            level = Level(priority)
            levels[priority] = level
        }
        w.slot = if (agingNanos > 0) AgingStamp(level, now) else level
        level.linkLast(w) // an existing level's head, and so its place in the heap, is unchanged
        if (isNew) heapInsert(level)
        count++
    }

    override fun removeFirst(w: PermitWaiter) = remove(w)

    /** The level of a queued waiter, from its slot. */
    private fun levelOf(w: PermitWaiter): Level = (w.slot as? AgingStamp)?.level ?: w.slot as Level

    override fun remove(w: PermitWaiter) {
        val level = levelOf(w)
        val wasHead = level.head === w
        level.unlink(w)
        count--
        when {
            level.isEmpty() -> {
                levels.remove(level.priority)
                heapRemoveAt(level.heapIndex)
            }
            // A younger head can only rank lower: with aging its key drops, without it is the same.
            wasHead && agingNanos > 0 -> siftDown(level.heapIndex)
        }
    }

    override fun newcomerLeads(priority: Int, now: Long): Boolean {
        if (heapSize == 0) return true
        val top = heap[0]!!
        // The newcomer is younger than anyone queued, so on a tie it loses (strictly before needed).
        return before(priority, now, top.priority, enqueuedAt(top.head!!))
    }

    override fun countAt(priority: Int): Int = levels[priority]?.size ?: 0

    override fun effectivePriority(w: PermitWaiter, priority: Int, now: Long): Int {
        if (agingNanos <= 0) return priority
        val raised = priority.toLong() + (now - enqueuedAt(w)) / agingNanos
        return if (raised > Int.MAX_VALUE) Int.MAX_VALUE else raised.toInt()
    }

    override fun countsByPriority(): Map<Int, Int> =
        levels.values.filter { it.size > 0 }.sortedByDescending { it.priority }.associate { it.priority to it.size }

    /** A queued waiter's enqueue time: kept in its slot with aging; without aging every time is 0. */
    private fun enqueuedAt(w: PermitWaiter): Long = if (agingNanos > 0) (w.slot as AgingStamp).enqueuedAt else 0L

    /** True if a waiter (p1, t1) is served strictly before (p2, t2). */
    private fun before(p1: Int, t1: Long, p2: Int, t2: Long): Boolean {
        if (agingNanos == 0L) return if (p1 != p2) p1 > p2 else t1 < t2
        val dp = p1.toLong() - p2.toLong() // |dp| < 2^32
        val dt = t1 - t2
        if (dp != 0L) {
            val limit = Long.MAX_VALUE / agingNanos
            // (p1 - p2) * aging overflows: its sign decides, as no real wait is ~292 years long.
            if (dp > limit) return true
            if (dp < -limit) return false
            val scaled = dp * agingNanos
            if (scaled != dt) return scaled > dt
        }
        return dt < 0 // equal effective priority: the older waiter first
    }

    private fun levelBefore(a: Level, b: Level): Boolean =
        before(a.priority, enqueuedAt(a.head!!), b.priority, enqueuedAt(b.head!!))

    private fun heapInsert(level: Level) {
        if (heapSize == heap.size) heap = heap.copyOf(heapSize * 2)
        heap[heapSize] = level
        level.heapIndex = heapSize
        heapSize++
        siftUp(heapSize - 1)
    }

    private fun heapRemoveAt(index: Int) {
        val removed = heap[index]!!
        heapSize--
        val last = heap[heapSize]!!
        heap[heapSize] = null
        removed.heapIndex = -1
        if (index < heapSize) {
            heap[index] = last
            last.heapIndex = index
            siftDown(index)
            siftUp(last.heapIndex)
        }
        // Shrink a heap that a burst of distinct priorities once grew, so memory follows use.
        if (heap.size > 64 && heapSize < heap.size / 4) heap = heap.copyOf(heap.size / 2)
    }

    private fun siftUp(start: Int) {
        var i = start
        val item = heap[i]!!
        while (i > 0) {
            val parent = (i - 1) ushr 1
            val p = heap[parent]!!
            if (!levelBefore(item, p)) break
            heap[i] = p
            p.heapIndex = i
            i = parent
        }
        heap[i] = item
        item.heapIndex = i
    }

    private fun siftDown(start: Int) {
        var i = start
        val item = heap[i]!!
        while (true) {
            val left = 2 * i + 1
            if (left >= heapSize) break
            val right = left + 1
            var child = left
            if (right < heapSize && levelBefore(heap[right]!!, heap[left]!!)) child = right
            val c = heap[child]!!
            if (!levelBefore(c, item)) break
            heap[i] = c
            c.heapIndex = i
            i = child
        }
        heap[i] = item
        item.heapIndex = i
    }
}
