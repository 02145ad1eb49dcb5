/*
 * Lincheck for ReadWriteLock: every operation of the contract (the suspending ones never cancelled,
 * and requestInJob: any of them in the test's SharedJob, which the run-once cancelJob() cancels
 * from another thread, see JobCancellationLincheckTest.kt), tryUpgrade with a zero timeout, and the two queries. The
 * timed forms with a positive timeout are left to the storm (ReadWriteLockStressTest): their timer
 * runs on kotlinx's DefaultExecutor thread, which the model checker takes for a thread of the test
 * and reports as hung while it waits; their timeout is a cancellation of the same waiter, which is
 * an operation here. The holds are anonymous (ReadWriteLockImpl.kt, RW4), so any thread may end any hold;
 * misuse (ending a hold of a kind that is not held, upgrading without the upgradable read) is caught
 * and returned as the MISUSE result, so its linearizability is checked too.
 *
 * The sequential specification is the ReadWriteLock itself run sequentially: Lincheck's sequential
 * semantics for suspending operations (a suspended request stays pending until a later operation
 * resumes it) is one FIFO line with grant-whole requests and an upgrade served first, which is the
 * contract.
 *
 * Two sizes: the factory's lock (N = 2^30), and N = 4, where the upgradable read takes 3 permits and
 * an upgrade 1, so a third plain read beside the upgradable read waits (the reader limit, scaled
 * down) and the encoding's edges are within a few operations.
 *
 * queueLength is not an operation (a second snapshot, as for Semaphore); it is checked at rest
 * (@Validate) against the engine, with the holds word: the engine has handed out exactly the
 * permits the holds account for (RW2, nobody between two steps at rest), and a lock that holds
 * nothing has nobody queued (everything fits an empty lock: I5).
 */
package dev.semaphore.verification

import dev.semaphore.ReadWriteLock
import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.ReadWritePolicy
import org.jetbrains.kotlinx.lincheck.annotations.Operation
import org.jetbrains.kotlinx.lincheck.annotations.Param
import org.jetbrains.kotlinx.lincheck.annotations.Validate
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen
import org.junit.jupiter.api.Test
import kotlin.time.Duration

/** requestInJob's kinds used by the fixed scenarios. */
const val WRITE_REQUEST = 1
const val UPGRADE_REQUEST = 3

/** The operations, shared by the two sizes and the three policies (PhaseFairLincheckTest.kt, WritersLineLincheckTest.kt). */
abstract class ReadWriteLockOps(total: Int, policy: ReadWritePolicy = ReadWritePolicy.FIFO) {
    private val impl = ReadWriteLockImpl(total, policy = policy)
    private val lock: ReadWriteLock = impl
    private val shared = SharedJob()

    /** One of the four suspending requests (0 read, 1 write, 2 upgradable read, 3 upgrade), in the SharedJob. */
    @Operation(cancellableOnSuspension = false) // cancelled through the shared Job only
    suspend fun requestInJob(@Param(gen = IntGen::class, conf = "0:3") kind: Int) = outcome {
        shared.acquire {
            when (kind) {
                0 -> lock.lockRead()
                1 -> lock.lockWrite()
                2 -> lock.lockUpgradableRead()
                else -> lock.upgrade()
            }
        }
    }

    @Operation(runOnce = true)
    fun cancelJob() = shared.cancel()

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun lockRead() = outcome { lock.lockRead(); OK }

    @Operation
    fun tryLockRead() = outcome { lock.tryLockRead() }

    @Operation
    fun unlockRead() = outcome { lock.unlockRead(); OK }

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun lockWrite() = outcome { lock.lockWrite(); OK }

    @Operation
    fun tryLockWrite() = outcome { lock.tryLockWrite() }

    @Operation
    fun unlockWrite() = outcome { lock.unlockWrite(); OK }

    @Operation
    fun downgrade() = outcome { lock.downgrade(); OK }

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun lockUpgradableRead() = outcome { lock.lockUpgradableRead(); OK }

    @Operation
    fun tryLockUpgradableRead() = outcome { lock.tryLockUpgradableRead() }

    @Operation
    fun unlockUpgradableRead() = outcome { lock.unlockUpgradableRead(); OK }

    @Operation(cancellableOnSuspension = false) // never cancelled
    suspend fun upgrade() = outcome { lock.upgrade(); OK }

    /** The timed upgrade with a zero timeout: it only tries now (RW3's upgrade form), so it never suspends. */
    @Operation
    suspend fun tryUpgradeNow() = outcome { lock.tryUpgrade(Duration.ZERO) }

    @Operation
    fun readHolds() = lock.readHolds

    @Operation
    fun isWriteLocked() = lock.isWriteLocked

    /**
     * At rest: the engine handed out what the holds account for (RW2), an empty lock has no line (I5),
     * and no acquisition of the cancelled shared Job still waits (W2).
     */
    @Validate
    fun atRest() {
        val h = impl.holdsSnapshot
        val reads = h and ReadWriteLockImpl.READS
        val accounted = reads +
            (if (h and ReadWriteLockImpl.UPGRADABLE != 0L) impl.upgradablePermits.toLong() else 0L) +
            (if (h and ReadWriteLockImpl.WRITER != 0L) impl.total.toLong() else 0L)
        val (available, queued) = impl.waiterQueue.readLocked { available, queued -> available to queued }
        check(impl.total.toLong() - available == accounted) {
            "the engine handed out ${impl.total - available} permits, the holds account for $accounted: $lock"
        }
        check(accounted != 0L || queued == 0) { "nothing held, yet $queued queued: $lock" }
        val writersLine = impl.writersLine // WRITERS_LINE (WL1): nothing held, so no writer waits or is on its way
        check(accounted != 0L || writersLine == null || (writersLine.queueLength == 0 && writersLine.availablePermits == 1)) {
            "nothing held, yet the writers' line is taken or has waiters: $writersLine, $lock"
        }
        check(h and ReadWriteLockImpl.WRITER == 0L || h and (ReadWriteLockImpl.READS or ReadWriteLockImpl.UPGRADABLE) == 0L) {
            "a write hold beside other holds: $lock"
        }
        shared.checkAtRest()
    }
}

/** The factory's lock: N = 2^30. */
class ReadWriteLockLincheckTest : ReadWriteLockOps(ReadWriteLockImpl.TOTAL) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/** N = 4: the upgradable read (3) leaves room for one plain read; an upgrade asks for the last 1. */
class SmallReadWriteLockLincheckTest : ReadWriteLockOps(4) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/**
 * Fixed scenarios for the races that the anchors got wrong (AsyncEx 134, vs-threading 252:
 * a cancelled queued writer left the readers behind it blocked; parking_lot 101/489: an upgrade let
 * a writer in), model-checked over every interleaving Lincheck reaches, with the operations of
 * [ReadWriteLockLincheckTest]; a request that may be cancelled runs in the test's Job (requestInJob),
 * which a thread of its own cancels (a grant racing the cancellation is handed back, W3).
 */
class ReadWriteLockScenariosTest {
    /** A queued writer, maybe cancelled, between a read hold that ends and a reader behind it. */
    @Test
    fun cancelledWriterLetsReadersIn() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::requestInJob, WRITE_REQUEST) }
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::unlockRead) }
            thread { actor(ReadWriteLockOps::cancelJob) }
        }
    }

    /** An upgrade waiting for a read hold to end, a writer and a reader queued behind it. */
    @Test
    fun upgradeRacesReadersAndWriter() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockUpgradableRead); actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::requestInJob, UPGRADE_REQUEST); actor(ReadWriteLockOps::isWriteLocked) }
            thread { actor(ReadWriteLockOps::unlockRead); actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::cancelJob) }
        }
    }

    /** A downgrade while a reader and a writer are queued, with a try racing it. */
    @Test
    fun downgradeWithALine() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::lockWrite) }
            thread { actor(ReadWriteLockOps::downgrade); actor(ReadWriteLockOps::tryLockRead) }
        }
    }

    /** Tries racing an unlock that is between its two steps (RW2, RW3), and a suspending reader. */
    @Test
    fun triesRaceAnUnlock() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::unlockWrite) }
            thread { actor(ReadWriteLockOps::tryLockRead); actor(ReadWriteLockOps::tryLockUpgradableRead) }
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::tryUpgradeNow) }
        }
    }

    /**
     * Found by the model checker at the -Pstress size: an upgrade that does not wait was visible half
     * done. Its "in progress" mark made a racing unlockUpgradableRead() throw while readHolds() still
     * counted the upgradable read, and then the upgrade succeeded: no order of the three explains
     * that. RW5's TRYING step (waited out by the others) makes such an upgrade atomic.
     */
    @Test
    fun upgradeThatDoesNotWaitRacesAnUnlock() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockUpgradableRead) }
        parallel {
            thread { actor(ReadWriteLockOps::unlockUpgradableRead); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::tryUpgradeNow) }
        }
    }

    /** The same with upgrade(), granted when offered: it does not suspend, so it too must look atomic. */
    @Test
    fun upgradeGrantedAtOnceRacesAnUnlock() = checkOnly(ReadWriteLockLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockUpgradableRead) }
        parallel {
            thread { actor(ReadWriteLockOps::unlockUpgradableRead); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::upgrade) }
        }
    }
}
