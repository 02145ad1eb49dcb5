/*
 * PhaseFairOrder: the order of a ReadWriteLock made with ReadWritePolicy.PHASE_FAIR (after Brandenburg
 * and Anderson's phase-fair reader-writer locks), as one more WaitOrder of the engine, so that the one
 * waiter protocol (W1-W5), cancellation, timeouts, close, futures and blocked threads work unchanged.
 * Made for ReadWriteLock's encoding (ReadWriteLockImpl.kt): it tells the requests apart by what they ask,
 * a request of priority > 0 is the upgrade, one of 1 permit a plain read, any other (N for a write, U for
 * an upgradable read) an exclusive request (two of them never hold together). Its rules are WaitOrder.kt's
 * PF1-PF4.
 */
package dev.semaphore.internal

/**
 * Three lines: the upgrade (at most one, served before everyone), the readers' line and the exclusive
 * line (writers and upgradable readers, FIFO among themselves), and a turn that says which of the two
 * lines is served next (WaitOrder.kt, PF1-PF4).
 *
 * [writePermits] is N, what a write asks. [writeHeld] is asked under the queue's lock, with the permits
 * available at that instant, when a reader joins the readers' line: true if the write hold is taken (PF2).
 */
internal class PhaseFairOrder(
    private val writePermits: Int,
    private val writeHeld: (available: Int) -> Boolean,
) : WaitOrder {
    private val readers = WaiterList()
    private val exclusive = WaiterList()
    private var upgrade: PermitWaiter? = null

    /** PF1: OPEN, CLOSED (the batch ends at [batchTail]) or WRITERS. */
    private var turn = WRITERS

    /** PF1: the last reader of the batch being granted, while the turn is CLOSED; null otherwise. */
    private var batchTail: PermitWaiter? = null

    override val size: Int get() = readers.size + exclusive.size + (if (upgrade != null) 1 else 0)

    override val usesClock: Boolean get() = false

    override fun peek(): PermitWaiter? {
        upgrade?.let { return it }
        if (turn != WRITERS) readers.head?.let { return it }
        return exclusive.head ?: readers.head
    }

    override fun add(w: PermitWaiter, priority: Int, now: Long, available: Int) {
        when {
            priority > 0 -> {
                check(upgrade == null) { "a second upgrade queued" } // RW5 allows one upgrade at a time
                upgrade = w
                w.slot = UPGRADE
            }
            w.permits == 1 -> {
                // PF2: a reader that starts the readers' line sets the turn.
                if (readers.isEmpty()) {
                    turn = if (exclusive.isEmpty() || writeHeld(available)) OPEN else WRITERS
                } else if (exclusive.isEmpty()) {
                    if (turn == CLOSED) batchTail = w // no writer waits: it joins the batch being granted
                } else if (turn == OPEN && !writeHeld(available)) {
                    closeBatch() // a read phase with a writer waiting: the batch is those ahead of it
                }
                readers.linkLast(w)
                w.slot = readers
            }
            else -> {
                exclusive.linkLast(w)
                w.slot = exclusive
            }
        }
    }

    override fun removeFirst(w: PermitWaiter) {
        when (val line = w.slot) {
            UPGRADE -> {
                upgrade = null
                openBatch() // PF3: the upgrade's write phase starts
            }
            exclusive -> {
                exclusive.unlinkFirst(w)
                if (w.permits == writePermits) {
                    openBatch() // PF3: a write phase starts
                } else {
                    closeBatch() // PF3: an upgradable read shares with the readers waiting now, and only them
                }
            }
            else -> {
                check(line === readers) { "not a queued waiter of this order" }
                if (turn != CLOSED) closeBatch() // PF1: the batch is the readers waiting now
                val last = w === batchTail
                readers.unlinkFirst(w)
                if (last) endBatch()
            }
        }
        w.slot = null
    }

    override fun remove(w: PermitWaiter) {
        when (val line = w.slot) {
            UPGRADE -> upgrade = null
            exclusive -> {
                exclusive.unlink(w)
                if (exclusive.isEmpty() && !readers.isEmpty()) { // PF2: nobody to wait for any more
                    if (turn == CLOSED) batchTail = readers.tail else turn = OPEN
                }
            }
            else -> {
                check(line === readers) { "not a queued waiter of this order" }
                if (w === batchTail) { // PF1: the batch now ends one earlier, or has ended
                    val p = w.prev
                    if (p == null) endBatch() else batchTail = p
                }
                readers.unlink(w)
            }
        }
        w.slot = null
    }

    /** The upgrade leads while none waits; any other newcomer only while nobody waits (PF4). */
    override fun newcomerLeads(priority: Int, now: Long): Boolean =
        if (priority > 0) upgrade == null else size == 0

    /** As in the FIFO policy's UpgradeFirstOrder: priority 1 is the upgrade, 0 every other request. */
    override fun countAt(priority: Int): Int = when (priority) {
        0 -> readers.size + exclusive.size
        1 -> if (upgrade != null) 1 else 0
        else -> 0
    }

    override fun countsByPriority(): Map<Int, Int> {
        val others = readers.size + exclusive.size
        return when {
            upgrade != null && others > 0 -> mapOf(1 to 1, 0 to others)
            upgrade != null -> mapOf(1 to 1)
            others > 0 -> mapOf(0 to others)
            else -> emptyMap()
        }
    }

    /** The number of readers in the batch being granted, for the tests (O(batch)). */
    internal fun batchSizeForTests(): Int {
        if (turn != CLOSED) return 0
        var n = 0
        var r = readers.head
        while (r != null) {
            n++
            if (r === batchTail) break
            r = r.next
        }
        return n
    }

    /** PF1: readers waiting now, and those that join until the batch is granted, go before the exclusive line. */
    private fun openBatch() {
        batchTail = null
        turn = OPEN
    }

    /** PF1: the batch is the readers waiting now; later readers wait for the exclusive line's head. */
    private fun closeBatch() {
        val t = readers.tail
        batchTail = t
        turn = if (t == null) WRITERS else CLOSED
    }

    private fun endBatch() {
        batchTail = null
        turn = WRITERS
    }

    private companion object {
        const val OPEN = 0
        const val CLOSED = 1
        const val WRITERS = 2

        /** What a queued upgrade's slot holds. */
        val UPGRADE = Any()
    }
}
