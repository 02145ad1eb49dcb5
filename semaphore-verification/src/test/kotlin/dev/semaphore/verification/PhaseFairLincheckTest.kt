/*
 * Lincheck for ReadWriteLock with ReadWritePolicy.PHASE_FAIR: the operations of ReadWriteLockOps
 * (every operation of the contract, requestInJob in the SharedJob that cancelJob cancels from another
 * thread, tryUpgrade with a zero timeout, the two queries, and the @Validate check at rest), on a lock
 * made with the phase-fair policy.
 *
 * Its sequential specification is its own: the phase-fair lock run sequentially, as the FIFO policy's is
 * the FIFO lock (ReadWriteLockLincheckTest.kt). Lincheck's sequential semantics for suspending operations
 * (a suspended request stays pending until a later operation resumes it) makes that the phase-fair order
 * of PhaseFairOrder (WaitOrder.kt, PF1-PF4): so this checks that every concurrent history, cancellations
 * through the Job included, is one that the phase-fair lock gives when its operations run one at a time.
 * That the sequential behaviour is the policy's guarantees (ReadWritePolicy.PHASE_FAIR, 1-7) is checked
 * against an independent model, step by step over random sequences, by PhaseFairModelSpec in semaphore-core.
 *
 * Two sizes, as for FIFO: N = 2^30 and N = 4 (the reader limit within a few operations, so a batch can
 * be cut by it and PF1's closed batch is reached). Sizes from LincheckSizes.kt.
 */
package dev.semaphore.verification

import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.ReadWritePolicy
import org.jetbrains.kotlinx.lincheck.check
import org.junit.jupiter.api.Test

/** The factory's size, N = 2^30, phase-fair. */
class PhaseFairLincheckTest : ReadWriteLockOps(ReadWriteLockImpl.TOTAL, ReadWritePolicy.PHASE_FAIR) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/** N = 4, phase-fair: four plain reads fill the lock, so a batch of more readers is cut by the limit. */
class SmallPhaseFairLincheckTest : ReadWriteLockOps(4, ReadWritePolicy.PHASE_FAIR) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/**
 * Fixed scenarios for the phase-fair order's own steps, model-checked over the interleavings Lincheck
 * reaches (RW_FIXED_INVOCATIONS), with the operations of [PhaseFairLincheckTest].
 */
class PhaseFairScenariosTest {
    /**
     * PF1, PF2: a write taken on the fast path, a reader and a writer queueing behind it in either order,
     * the write ending meanwhile: the reader joins the batch at the write's end, or the read phase if it
     * came after the end, never after the writer when it queued during the write.
     */
    @Test
    fun readerAndWriterQueueBehindAFastPathWrite() = checkOnly(PhaseFairLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::isWriteLocked) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::unlockWrite); actor(ReadWriteLockOps::tryLockRead) }
        }
    }

    /**
     * PF1, PF3 with cancellation: a writer in the Job waits behind a read hold, a reader queues behind it
     * (the next read phase), the read hold ends and the Job is cancelled, racing the writer's grant.
     */
    @Test
    fun cancelledWriterAndTheNextReadPhase() = checkOnly(PhaseFairLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::requestInJob, WRITE_REQUEST) }
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::unlockRead) }
            thread { actor(ReadWriteLockOps::cancelJob) }
        }
    }

    /** PF3: a downgrade ends the write phase while a reader and a writer queue, a try racing it. */
    @Test
    fun downgradeEndsTheWritePhase() = checkOnly(PhaseFairLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::isWriteLocked) }
            thread { actor(ReadWriteLockOps::downgrade); actor(ReadWriteLockOps::tryLockRead) }
        }
    }

    /** PF1 at the reader limit (N = 4): a batch of readers cut by the limit, a writer behind, an unlock. */
    @Test
    fun batchCutByTheLimit() = checkOnly(SmallPhaseFairLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::lockWrite) }
            thread { actor(ReadWriteLockOps::unlockWrite); actor(ReadWriteLockOps::unlockRead) }
        }
    }

    /** PF3, PF4: an upgrade waits for a read hold, a writer and a reader queue; the Job's upgrade is cancelled. */
    @Test
    fun upgradeRacesReadersAndWriter() = checkOnly(PhaseFairLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockUpgradableRead); actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::requestInJob, UPGRADE_REQUEST); actor(ReadWriteLockOps::isWriteLocked) }
            thread { actor(ReadWriteLockOps::unlockRead); actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::cancelJob) }
        }
    }
}
