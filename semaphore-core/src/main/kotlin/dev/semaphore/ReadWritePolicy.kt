package dev.semaphore

/**
 * The order in which a [ReadWriteLock] serves its waiters, chosen at creation:
 * `ReadWriteLock(ReadWritePolicy.PHASE_FAIR)` (Java: `AsyncReadWriteLock.create(ReadWritePolicy.PHASE_FAIR)`).
 * Which to choose, with measurements: docs/read-write-lock.md. Every policy is fair (nobody starves), never barge (the `try` forms succeed only when the request would
 * be served now with nobody waiting ahead of it), and keep everything else the same: cancellation and
 * timeouts that never lose a hold, [ReadWriteLock.close], downgrade, one upgradable reader at a time, the
 * upgrade served before everyone queued, the limit of 2^30 read holds, and one line for coroutines, Java
 * futures and blocked threads.
 */
public enum class ReadWritePolicy {
    /**
     * Strict FIFO, the default: readers, writers and upgradable readers stand in one line, and the readers
     * consecutive at its head are granted together. A queued writer makes every later request wait. With
     * many writers, few readers share: only those queued between two writers get in together.
     */
    FIFO,

    /**
     * Phase-fair (after Brandenburg and Anderson's phase-fair reader-writer locks): read phases and write
     * phases alternate, and each read phase admits *every* reader waiting when it starts. Readers wait in
     * a readers' line; writers and upgradable readers in an exclusive line, first come, first served among
     * themselves. A *write phase* is the time the write hold is taken (by a writer, or by an upgrade).
     *
     * 1. **Batches.** When a write phase ends (`unlockWrite`, `downgrade`, or a granted write handed
     *    back), every reader waiting at that moment is granted, together, before the next writer or
     *    upgradable reader (after a `downgrade`, together with the downgraded read hold).
     * 2. **A reader waits for at most one write phase.** A reader is granted at once if nobody waits and the
     *    write hold is not taken. Otherwise: if the write hold is taken (or an upgrade waits), it is granted
     *    when that write phase ends (1); if a writer or upgradable reader waits while readers hold the lock,
     *    the reader waits for the first of them to be granted (*no newcomer joins a read phase while a
     *    writer waits*), then for that writer's write phase to end; an upgradable reader's grant lets
     *    it in at once, beside it. If the ones it waits for leave the line (cancelled, timed out) and no
     *    writer or upgradable reader waits any more, it waits for no writer: it is granted as soon as it
     *    fits, before any writer that comes later.
     * 3. **A writer never starves.** Between two writers or upgradable readers granted from the line, at
     *    most one batch of readers is admitted, and that batch is closed when it starts: readers that come
     *    later wait for the next writer in line. So a writer waits for the holds taken before it queued,
     *    for the writers and upgradable readers ahead of it, and for at most one batch after each.
     * 4. **Upgrade.** [ReadWriteLock.upgrade] is served before everyone queued, as in [FIFO]: while it
     *    waits, no reader is let in; once granted it is a write phase, and when that phase ends the readers
     *    waiting then are admitted (1), before the next writer. A cancelled or timed-out upgrade keeps the
     *    upgradable read, and the readers that it held back are let in if no writer is due first (2).
     * 5. **Upgradable read.** It waits in the exclusive line (one at a time, as in [FIFO]). When it is
     *    granted, the readers waiting at that moment are granted with it; later readers wait for the next
     *    writer in line. A reader behind a waiting upgradable reader that is held back by another one
     *    (still held) waits until that other one ends or upgrades and its write phase ends.
     * 6. **Try forms never barge.** `tryLockRead()` succeeds only if nobody waits (in either line) and the
     *    write hold is not taken: it never joins a read phase that a waiting writer closed.
     *    `tryLockWrite()` and `tryLockUpgradableRead()` succeed only if nobody waits and they fit; a
     *    timed try waits in line like the untimed call and leaves it, with nothing held, at its timeout.
     * 7. **Cancellation.** A reader that leaves the line (cancelled or timed out) before its batch is
     *    granted is simply not part of it; a batch reader granted but cancelled before it resumed gives its
     *    read hold back. A writer that leaves the line lets the readers behind it in if no other writer
     *    or upgradable reader waits (2), else they wait for that one.
     *
     * Limit: at most 2^30 read holds at once (2^29 - 1 beside the upgradable read). A batch larger than
     * that is granted as read holds end, before the next writer; readers that come meanwhile join it only
     * while no writer or upgradable reader waits (3).
     */
    PHASE_FAIR,

    /**
     * A line of writers in front of [FIFO]'s line, for read-mostly work: readers and upgradable readers
     * stand in the lock's line as in [FIFO], but writers first wait in a *writers' line* of their own,
     * and only its first writer stands in the lock's line at a time. So readers wait behind at most one
     * waiting writer instead of behind every one, and while the next writer is being woken (its
     * coroutine dispatched, its thread unparked) the readers that arrive are granted at once.
     *
     * 1. **Writers' line.** Writers are served first come, first served among themselves. A writer
     *    waits in the writers' line while another writer is *on its way*: standing in the lock's line,
     *    or granted there but not yet returned from its lock call. When that call returns (or the writer
     *    leaves: cancelled, timed out), the next writer is woken, and it joins the lock's line once it
     *    runs (a future's request joins at once, on the thread that woke it).
     * 2. **A reader waits for at most two writes**: the write hold taken now, and the one writer on its
     *    way. Writers in the writers' line hold back no reader. Otherwise a reader waits as in [FIFO]:
     *    behind everything in the lock's line (an upgrade, a blocked upgradable reader).
     * 3. **A writer never starves.** Once it stands in the lock's line it is served as in [FIFO]: later
     *    readers wait behind it, and it waits for the holds taken and the requests queued before it.
     *    Readers that arrive while it is being woken get in first, and it waits for them too.
     * 4. **Upgrade and upgradable read** as in [FIFO]: the upgrade is served before everyone in the
     *    lock's line and never passes through the writers' line (the writer on its way may be waiting
     *    for the upgradable reader, so a line between them could deadlock); the upgradable read waits in
     *    the lock's line, one at a time.
     * 5. **Try forms never barge.** `tryLockWrite()` succeeds only if no hold is taken and no writer
     *    waits or is on its way; `tryLockRead()` and `tryLockUpgradableRead()` as in [FIFO] (writers in
     *    the writers' line do not count, as in 2). A timed try waits in both lines, with one deadline.
     * 6. **Cancellation and timeouts.** A writer that leaves the writers' line changes nothing else;
     *    one that leaves the lock's line lets the readers behind it in, as in [FIFO], and wakes the next
     *    writer. Nothing is held after either.
     * 7. **Everything else** as in [FIFO]: `unlockWrite`, `downgrade`, `close` (which fails the writers'
     *    line too), the limits.
     *
     * The price: writers as a whole get the lock less often when readers keep arriving (3), and an
     * uncontended `lockWrite` takes and gives back the writers' line (two more atomic operations).
     * Diagnostics: [ReadWriteLock.queueLength] and the snapshot count the writers in the writers' line as
     * requests of the write hold (queued, cancelled, timed out). A lock observed from its creation
     * ([Diagnostics.tracking], a long-hold threshold, deadlock detection) also lists them in
     * [Inspectable.waiters], and its deadlock detection sees a writer there wait for the one on its way.
     * Listeners, JFR and the snapshot's `acquiredAfterWait` see a write's wait from when it stands in the
     * lock's line (a writer that waited only in the writers' line counts as acquired at once).
     */
    WRITERS_LINE,
}
