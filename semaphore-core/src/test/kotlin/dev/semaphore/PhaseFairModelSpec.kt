package dev.semaphore

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import kotlin.random.Random
import kotlin.time.Duration

/**
 * The phase-fair lock against an independent model of ReadWritePolicy.PHASE_FAIR's guarantees, step by step
 * over random sequences of every operation (requests of each kind, upgrades, cancellations of waiters,
 * unlocks, downgrades, the try forms), at N = 4 (the reader limit within reach) and N = 8. After each step,
 * the requests granted, the holds and the try forms' answers must be the model's.
 *
 * The model is written in the guarantees' own terms, with nothing of PhaseFairOrder's: read phases are
 * numbered; a reader that waits belongs to the read phase now due (`current`) if no writer or upgradable
 * reader waits or the write hold is taken, else to the next one; every grant of a writer, an upgradable
 * reader or the upgrade starts the next read phase; readers of a due phase are served before the exclusive
 * line, and any reader when the exclusive line is empty; when the exclusive line empties by a withdrawal,
 * the readers waiting for the next phase are due in the current one. The upgrade goes first; requests are
 * granted whole, head of each line first.
 */
class PhaseFairModelSpec : FunSpec({
    for (n in listOf(4, 8)) {
        test("N = $n: 300 random sequences of 80 steps agree with the model") {
            var grantsChecked = 0
            var batchesOfSeveral = 0
            repeat(300) { seed ->
                runTest {
                    val rnd = Random(seed * 31 + n)
                    val lock = ReadWriteLockImpl(n, policy = ReadWritePolicy.PHASE_FAIR)
                    val model = Model(n)
                    val jobs = HashMap<Int, Job>()
                    val resumedNow = ArrayList<Int>() // the requests that resumed in this step, in order
                    val holds = HashMap<Int, Kind>() // id -> the hold it has (real and model agree on these)
                    var nextId = 0
                    var upgrader: Int? = null // the id whose upgrade waits
                    val log = ArrayList<String>()

                    fun launchRequest(kind: Kind, id: Int) {
                        jobs[id] = launch {
                            when (kind) {
                                Kind.READ -> lock.lockRead()
                                Kind.WRITE -> lock.lockWrite()
                                Kind.UPGRADABLE -> lock.lockUpgradableRead()
                                Kind.UPGRADE -> lock.upgrade()
                            }
                            resumedNow += id
                        }
                    }

                    repeat(80) { step ->
                        val waiting = model.waitingIds()
                        val held = holds.keys.toList()
                        when (val op = rnd.nextInt(10)) {
                            in 0..3 -> { // a request
                                val kind = when (rnd.nextInt(6)) { in 0..2 -> Kind.READ; in 3..4 -> Kind.WRITE; else -> Kind.UPGRADABLE }
                                val id = nextId++
                                log += "$step: request $kind #$id"
                                if (model.request(id, kind)) model.granted += id
                                launchRequest(kind, id)
                            }
                            4 -> { // an upgrade of the upgradable read, if held and not upgrading
                                val owner = holds.entries.firstOrNull { it.value == Kind.UPGRADABLE }?.key
                                if (owner != null && upgrader == null) {
                                    log += "$step: upgrade #$owner"
                                    if (model.request(owner, Kind.UPGRADE)) model.granted += owner else upgrader = owner
                                    launchRequest(Kind.UPGRADE, owner)
                                }
                            }
                            5 -> if (waiting.isNotEmpty()) { // a waiter cancelled
                                val id = waiting[rnd.nextInt(waiting.size)]
                                log += "$step: cancel #$id"
                                model.cancel(id)
                                if (id == upgrader) upgrader = null
                                jobs.getValue(id).cancel()
                            }
                            in 6..7 -> if (held.isNotEmpty()) { // a hold ends
                                val id = held[rnd.nextInt(held.size)]
                                if (id != upgrader) {
                                    val kind = holds.remove(id)!!
                                    log += "$step: unlock $kind #$id"
                                    when (kind) {
                                        Kind.READ -> lock.unlockRead()
                                        Kind.WRITE -> lock.unlockWrite()
                                        else -> lock.unlockUpgradableRead()
                                    }
                                    model.release(kind)
                                }
                            }
                            8 -> { // downgrade
                                val writer = holds.entries.firstOrNull { it.value == Kind.WRITE }?.key
                                if (writer != null) {
                                    log += "$step: downgrade #$writer"
                                    lock.downgrade()
                                    holds[writer] = Kind.READ
                                    model.downgrade()
                                }
                            }
                            else -> { // a try form: the same answer as the model
                                val kind = listOf(Kind.READ, Kind.WRITE, Kind.UPGRADABLE)[rnd.nextInt(3)]
                                val expected = model.tryTake(kind)
                                val id = nextId++
                                log += "$step: try $kind #$id -> $expected"
                                val got = when (kind) {
                                    Kind.READ -> lock.tryLockRead()
                                    Kind.WRITE -> lock.tryLockWrite()
                                    else -> lock.tryLockUpgradableRead()
                                }
                                withClue(log.joinToString("\n")) { got shouldBe expected }
                                if (got) holds[id] = kind
                            }
                        }
                        testScheduler.runCurrent()
                        // Every grant of the model has resumed, and nothing else has.
                        for (id in model.granted) {
                            val kind = model.kindOf.getValue(id)
                            holds[id] = if (kind == Kind.UPGRADE) Kind.WRITE else kind
                            if (id == upgrader) upgrader = null
                        }
                        if (model.granted.count { model.kindOf[it] == Kind.READ } > 1) batchesOfSeveral++
                        withClue(log.joinToString("\n") + "\nmodel: $model\nlock: $lock") {
                            resumedNow shouldBe model.granted.toList()
                            lock.readHolds shouldBe model.readHolds
                            lock.isWriteLocked shouldBe model.write
                            lock.queueLength shouldBe model.waitingIds().size
                        }
                        grantsChecked += model.granted.size
                        model.granted.clear()
                        resumedNow.clear()
                    }
                    // Clean up: cancel every waiter, end every hold.
                    jobs.values.forEach { it.cancel() }
                    testScheduler.runCurrent()
                    lock.close()
                }
            }
            grantsChecked shouldBeGreaterThan 1000
            batchesOfSeveral shouldBeGreaterThan 20
        }
    }
})

private enum class Kind { READ, WRITE, UPGRADABLE, UPGRADE }

/** ReadWritePolicy.PHASE_FAIR in its guarantees' terms (see the spec's KDoc). */
private class Model(val n: Int) {
    private val u = n / 2 + 1
    var plainReads = 0
    var upgradable = false
    var write = false

    private class Waiter(val id: Int, val kind: Kind, var phase: Int)

    private val readers = ArrayList<Waiter>()
    private val exclusive = ArrayList<Waiter>()
    private var upgrade: Waiter? = null

    /** The read phase due next. */
    private var current = 0
    val granted = LinkedHashSet<Int>()
    val kindOf = HashMap<Int, Kind>()

    val readHolds: Int get() = plainReads + (if (upgradable) 1 else 0)

    fun waitingIds(): List<Int> = readers.map { it.id } + exclusive.map { it.id } + listOfNotNull(upgrade?.id)

    private fun nobodyWaits() = readers.isEmpty() && exclusive.isEmpty() && upgrade == null

    private fun fits(kind: Kind): Boolean = when (kind) {
        Kind.READ -> !write && plainReads + (if (upgradable) u else 0) + 1 <= n
        Kind.WRITE -> !write && !upgradable && plainReads == 0
        Kind.UPGRADABLE -> !write && !upgradable && plainReads + u <= n
        Kind.UPGRADE -> plainReads == 0
    }

    private fun take(kind: Kind) {
        when (kind) {
            Kind.READ -> plainReads++
            Kind.WRITE -> write = true
            Kind.UPGRADABLE -> upgradable = true
            Kind.UPGRADE -> { upgradable = false; write = true }
        }
    }

    /** A request of [kind] by [id]: true if granted at once, else it waits. */
    fun request(id: Int, kind: Kind): Boolean {
        kindOf[id] = kind
        if (kind == Kind.UPGRADE) {
            if (fits(kind)) { take(kind); return true }
            upgrade = Waiter(id, kind, 0)
            return false
        }
        if (nobodyWaits() && fits(kind)) { take(kind); return true }
        if (kind == Kind.READ) {
            readers += Waiter(id, kind, if (exclusive.isEmpty() || write) current else current + 1)
        } else {
            exclusive += Waiter(id, kind, 0)
        }
        return false
    }

    fun tryTake(kind: Kind): Boolean = if (nobodyWaits() && fits(kind)) { take(kind); true } else false

    fun cancel(id: Int) {
        readers.removeAll { it.id == id }
        exclusive.removeAll { it.id == id }
        if (upgrade?.id == id) upgrade = null
        // Guarantee 2: once no writer or upgradable reader waits, no reader waits for one any more.
        if (exclusive.isEmpty()) readers.forEach { it.phase = minOf(it.phase, current) }
        serve()
    }

    fun release(kind: Kind) {
        when (kind) {
            Kind.READ -> plainReads--
            Kind.WRITE -> write = false
            else -> upgradable = false
        }
        serve()
    }

    fun downgrade() {
        write = false
        plainReads++
        serve()
    }

    private fun serve() {
        while (true) {
            val up = upgrade
            if (up != null) {
                if (!fits(Kind.UPGRADE)) return
                take(Kind.UPGRADE)
                upgrade = null
                granted += up.id
                current++ // a write phase: the readers waiting now are the next batch
                continue
            }
            val r = readers.firstOrNull()
            if (r != null && (r.phase <= current || exclusive.isEmpty())) {
                if (!fits(Kind.READ)) return
                readers.removeAt(0)
                take(Kind.READ)
                granted += r.id
                continue
            }
            val x = exclusive.firstOrNull() ?: return
            if (!fits(x.kind)) return
            exclusive.removeAt(0)
            take(x.kind)
            granted += x.id
            current++
        }
    }

    override fun toString() =
        "reads=$plainReads upgradable=$upgradable write=$write current=$current " +
            "readers=${readers.map { "#${it.id}@${it.phase}" }} exclusive=${exclusive.map { "#${it.id}:${it.kind}" }} upgrade=${upgrade?.id}"
}
