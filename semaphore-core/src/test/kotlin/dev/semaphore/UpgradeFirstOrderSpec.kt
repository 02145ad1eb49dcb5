package dev.semaphore

import dev.semaphore.internal.PermitWaiter
import dev.semaphore.internal.PriorityOrder
import dev.semaphore.internal.UpgradeFirstOrder
import dev.semaphore.internal.WaitOrder
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlin.random.Random

/** A waiter that is only a node of an order: nothing here asks it anything. */
private class Node(pool: QueueBackedPool) : PermitWaiter(1, pool) {
    override fun tryClaim(): Boolean = true
    override fun onGranted() {}
    override fun onFailed(cause: Throwable) {}
}

/**
 * UpgradeFirstOrder, ReadWriteLock's FIFO policy, must serve exactly as the PriorityOrder without aging it
 * replaced does for the two priorities the lock uses (0, and 1 for at most one upgrade): the same waiter
 * next, the same answer to a newcomer, the same counts, after every step of random sequences of adds,
 * removals anywhere and removals of the head.
 */
class UpgradeFirstOrderSpec : FunSpec({
    val pool = Semaphore(1) as QueueBackedPool

    test("500 random sequences of 60 steps: the same order, answers and counts as PriorityOrder without aging") {
        var upgradesServedFirst = 0
        repeat(500) { seed ->
            val rnd = Random(seed)
            val fifo: WaitOrder = UpgradeFirstOrder()
            val priority: WaitOrder = PriorityOrder(0L)
            // The same waiter cannot be a node of two orders at once, so each order has its own twin of every waiter.
            val queued = ArrayList<Pair<Node, Node>>() // (in fifo, in priority), in no particular order
            var upgrade: Pair<Node, Node>? = null
            val log = ArrayList<String>()
            repeat(60) { step ->
                when (rnd.nextInt(6)) {
                    0, 1, 2 -> {
                        val p = if (upgrade == null && rnd.nextInt(5) == 0) 1 else 0
                        val twins = Node(pool) to Node(pool)
                        log += "$step: add at $p"
                        fifo.add(twins.first, p, 0L, 0)
                        priority.add(twins.second, p, 0L, 0)
                        queued += twins
                        if (p == 1) upgrade = twins
                    }
                    3, 4 -> if (queued.isNotEmpty()) {
                        val twins = queued.removeAt(rnd.nextInt(queued.size))
                        log += "$step: remove one"
                        fifo.remove(twins.first)
                        priority.remove(twins.second)
                        if (twins === upgrade) upgrade = null
                    }
                    else -> {
                        val head = fifo.peek()
                        if (head != null) {
                            val twins = queued.first { it.first === head }
                            log += "$step: remove the head"
                            if (twins === upgrade) {
                                upgradesServedFirst++
                                upgrade = null
                            }
                            fifo.removeFirst(twins.first)
                            priority.removeFirst(twins.second)
                            queued.remove(twins)
                        }
                    }
                }
                withClue("seed $seed, ${log.joinToString("; ")}") {
                    val head = fifo.peek()
                    (if (head == null) null else queued.first { it.first === head }.second) shouldBe priority.peek()
                    fifo.size shouldBe priority.size
                    for (p in 0..1) {
                        fifo.newcomerLeads(p, 0L) shouldBe priority.newcomerLeads(p, 0L)
                        fifo.countAt(p) shouldBe priority.countAt(p)
                    }
                    fifo.countsByPriority() shouldBe priority.countsByPriority()
                }
            }
        }
        upgradesServedFirst shouldBeGreaterThan 100 // the sequences did exercise the upgrade's place
    }

    test("a second upgrade, or a priority the lock never uses, is refused with its value and changes nothing") {
        val order = UpgradeFirstOrder()
        val first = Node(pool)
        order.add(first, 1, 0L, 0)
        shouldThrow<IllegalStateException> { order.add(Node(pool), 1, 0L, 0) }.message shouldBe
            "only one upgrade may wait, and one already does"
        shouldThrow<IllegalStateException> { order.add(Node(pool), 2, 0L, 0) }.message shouldBe
            "priority must be 0, or 1 for the upgrade, was 2"
        order.size shouldBe 1
        order.peek() shouldBe first
    }
})
