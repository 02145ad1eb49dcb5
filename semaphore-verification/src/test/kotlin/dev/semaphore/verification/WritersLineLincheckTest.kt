/*
 * Lincheck for ReadWriteLock with ReadWritePolicy.WRITERS_LINE: the operations of ReadWriteLockOps on a
 * lock made with that policy, and the @Validate check at rest, which for this policy also checks that a
 * lock holding nothing has nobody in its writers' line and its permit free (ReadWriteLockImpl.kt, WL1).
 *
 * Its sequential specification is its own: the lock run sequentially, as for the other two policies.
 * There a writer woken from the writers' line joins the lock's line in the step that woke it; in a real
 * run it joins when it runs again, and readers that come in between get in first (the policy's rule 2).
 * Lincheck accepts a concurrent history only if some such sequential run explains it, with the
 * cancellations through the Job included.
 *
 * Two sizes, as for the other policies: N = 2^30 and N = 4. Sizes from LincheckSizes.kt.
 */
package dev.semaphore.verification

import dev.semaphore.ReadWriteLockImpl
import dev.semaphore.ReadWritePolicy
import org.jetbrains.kotlinx.lincheck.check
import org.junit.jupiter.api.Test

/** The factory's size, N = 2^30, with the writers' line. */
class WritersLineLincheckTest : ReadWriteLockOps(ReadWriteLockImpl.TOTAL, ReadWritePolicy.WRITERS_LINE) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/** N = 4, with the writers' line. */
class SmallWritersLineLincheckTest : ReadWriteLockOps(4, ReadWritePolicy.WRITERS_LINE) {
    @Test
    fun modelChecking() = jobMcOptions().check(this::class)

    @Test
    fun stressStrategy() = jobStressOptions().check(this::class)
}

/** Fixed scenarios for the writers' line's own steps, model-checked over the interleavings Lincheck reaches. */
class WritersLineScenariosTest {
    /** WL1: two writers behind a write hold, one in the Job that is cancelled, a reader and the unlock racing. */
    @Test
    fun writersBehindAWriteAndACancellation() = checkOnly(WritersLineLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::requestInJob, WRITE_REQUEST) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::unlockWrite) }
            thread { actor(ReadWriteLockOps::unlockWrite); actor(ReadWriteLockOps::lockRead) }
            thread { actor(ReadWriteLockOps::cancelJob) }
        }
    }

    /** Rule 2: a writer woken from the writers' line while a reader comes and the write before it ends. */
    @Test
    fun readerRacesAWokenWriter() = checkOnly(WritersLineLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockWrite) }
        parallel {
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::unlockWrite) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::readHolds) }
            thread { actor(ReadWriteLockOps::unlockWrite); actor(ReadWriteLockOps::lockRead); actor(ReadWriteLockOps::isWriteLocked) }
        }
    }

    /** Rule 4: an upgrade while the writer on its way waits for the upgradable read, a second writer behind. */
    @Test
    fun upgradeBypassesTheWritersLine() = checkOnly(WritersLineLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockUpgradableRead) }
        parallel {
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::unlockWrite) }
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::isWriteLocked) }
            thread { actor(ReadWriteLockOps::upgrade); actor(ReadWriteLockOps::unlockWrite) }
        }
    }

    /**
     * Rule 5: write tries racing each other and an unlock. A try that finds a read held must not make the
     * other one fail after the unlock (the first version's tries took the writers' line's permit briefly,
     * which -Pstress's Lincheck found).
     */
    @Test
    fun triesRaceEachOther() = checkOnly(WritersLineLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::unlockRead); actor(ReadWriteLockOps::tryLockWrite) }
            thread { actor(ReadWriteLockOps::tryLockWrite); actor(ReadWriteLockOps::tryLockWrite) }
        }
    }

    /** Rule 5: tries racing a writer that moves from the writers' line to the lock's line. */
    @Test
    fun triesRaceAWriterOnItsWay() = checkOnly(WritersLineLincheckTest::class, RW_FIXED_INVOCATIONS) {
        initial { actor(ReadWriteLockOps::tryLockRead) }
        parallel {
            thread { actor(ReadWriteLockOps::lockWrite); actor(ReadWriteLockOps::unlockWrite) }
            thread { actor(ReadWriteLockOps::unlockRead); actor(ReadWriteLockOps::tryLockWrite) }
            thread { actor(ReadWriteLockOps::tryLockRead); actor(ReadWriteLockOps::readHolds) }
        }
    }
}
