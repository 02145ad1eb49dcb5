/*
 * The Lincheck sizes of this module, in one place. Each has a default size and a -Pstress size. The default
 * build (`mvn verify`, stress.scale 1) is cut to a budget of about 4 minutes for this module's Lincheck tests and
 * storms on 2 cores, so that the test command stays well inside 10 minutes: measured at 212 s at a load average of
 * 4 to 6, against 485 s before the cut at 2 to 4 (565 s in a run whose load rose from 4 to 25). -Pstress
 * (stress.scale 5) runs at least what the default build ran before that cut, times 5 (LincheckSize: perScale x
 * scale; defaultOrStress for the sizes that do not scale), so it stays the full verification run (about 17
 * minutes for this module).
 *
 *                                           default (scale 1)          -Pstress (scale 5)   default before the cut
 *   random scenarios, model checking        5 scen. x 40 inv.          50 x 100             10 x 100
 *     with a shared Job (jobMcOptions)      5 scen. x 25 inv.          50 x 60              10 x 60
 *   random scenarios, stress strategy       4 scen. x 1000 inv.        50 x 1000            10 x 1000
 *   fixed scenarios (checkOnly), model-checking invocations of each:
 *     LockRegressionTest (6)                200                        10,000               2000
 *     FutureWaiterLincheckTest (2)          300                        5000                 1000
 *     BlockingWaiter*LincheckTest (2 x 2)   100                        5000                 1000
 *     JobCancellationLincheckTest (4),
 *     PrioritySemaphoreLincheckTest (2)     50                         1000                 200
 *     ReadWriteLockScenariosTest (6)        50                         500                  100
 *     ReadWriteFutureLincheckTest (2)       50                         750                  150
 * The storms (PoolStorms.kt, LockStressTest, ReadWriteLockStressTest) keep their sizes: 24 workers x 3000 rounds
 * (ReadWriteLock 2000), 5x the rounds under -Pstress; they take about 15 s of the default build.
 *
 * Random scenarios: one model-checking and one stress run per class. mcOptions()/stressOptions():
 * FutureWaiterLincheckTest, BlockingWaiterSemaphoreLincheckTest, BlockingWaiterLockLincheckTest,
 * ReadWriteFutureLincheckTest. jobMcOptions()/jobStressOptions() (operations in a shared Job that an operation
 * cancels: fewer model-checking invocations per scenario, no operation after the parallel part, see below):
 * Semaphore1LincheckTest, Semaphore2LincheckTest, LockLincheckTest, PrioritySemaphoreLincheckTest,
 * ReadWriteLockLincheckTest, SmallReadWriteLockLincheckTest, and JobCancellationLincheckTest's JobSemaphore1,
 * JobSemaphore2 and JobLock. Scenario shape: 3 threads x 2 operations, 1 operation before and 1 after the
 * parallel part.
 *
 * What the default size covers. Every test runs and asserts. Lincheck's model checker explores a scenario's
 * interleavings in order of their number of thread switches, so a smaller number of invocations keeps those
 * with the fewest switches and drops deeper ones. The fixed scenarios that stand for a known bug still catch it
 * at the default size: with the fix taken out of semaphore-core again (each mutant on its own, on the engine of
 * this commit), these failed within their first 15 invocations, the future waiter's within their first 110:
 *  - Lock's L3 wait removed (tryTake answers false, R1-R3): racingUnlockThenTryLock, holdsLockFalseThenTryLockFails,
 *    anonymousUnlockRacesHoldersRelock, sameOwnerTryLockFromTwoThreads;
 *  - L5's owner check at the offer removed (R5): relockQueuedBehindTheOwnersOwnHold;
 *  - RW5's wait for TRYING removed from unlockUpgradableRead: upgradeThatDoesNotWaitRacesAnUnlock,
 *    upgradeGrantedAtOnceRacesAnUnlock;
 *  - W2 removed (a coroutine's mayQueue() always true): semaphore2CancelledBeforeOffer,
 *    cancelledHeadLetsTheLowerPriorityIn, cancelledWriterLetsReadersIn;
 *  - a requester whose Job is cancelled dropped at the offer even when its request fits (kotlinx's way):
 *    semaphore1OfferAfterTheCancellation;
 *  - W3's hand-back dropped (PermitWaiter.handBack does nothing): cancelRacingTheGrant, timeoutRacingTheGrant,
 *    interruptRacingTheGrant (Semaphore and Lock), upgradeGivenUpAsItIsGranted.
 * The other fixed scenarios (semaphore1HandBack, lockHandBack, grantHandedBackWhenTheJobIsCancelled,
 * deadlineRacingTheGrant, downgradeWithALine, triesRaceAnUnlock, upgradeRacesReadersAndWriter,
 * upgradableClosedAsItsUpgradeTimesOut, isLockedTrueButHolderNotYetRecorded) have no such mutant on record; the
 * dropped hand-back above passes the three coroutine hand-back scenarios even at 1000 invocations. The random
 * scenarios are a sample at the default size: 5 per class for model checking, each over its first 40
 * interleavings (25 with a Job), and 4 for the stress strategy. Of the random runs tried against the mutants
 * above at the default size, LockLincheckTest's model checking caught L3's and JobCancellationLincheckTest's
 * Semaphore(2) runs caught W2's; LockLincheckTest missed L5's, the two ReadWriteLock classes missed TRYING's,
 * FutureWaiterLincheckTest missed the dropped hand-back, and JobSemaphore1's runs missed the offer's.
 *
 * What -Pstress adds: 10x the random model-checking scenarios, each explored about 2.5x as deep (100, or 60
 * with a Job), 12.5x the stress-strategy scenarios, 10x to 50x the fixed scenarios' interleavings (the table),
 * and 5x the storm rounds. The random breadth is where Lincheck found most of the bugs that now have a fixed
 * scenario (R5 by LockLincheckTest's stress strategy, the TRYING regression by model checking, both at the
 * -Pstress size), so a change to the engine is verified by -Pstress, not by the default build alone.
 *
 * The model-checking numbers are small because the engine's slow path goes through a lock (a bit of
 * its state word, with spinning and parking), which Lincheck explores event by event: on a loaded
 * 2-core machine one invocation costs ~40 ms, and the first ones of each run more (classes are instrumented
 * as Lincheck reaches them), so each run has a floor of about a second whatever its size.
 */
package dev.semaphore.verification

import org.jetbrains.kotlinx.lincheck.DSLScenarioBuilder
import kotlin.reflect.KClass
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions

/**
 * One size of this module's Lincheck runs: [default] in the default build; under -Pstress (stress.scale s > 1)
 * [perScale] x s, never less than [default]. So -Pstress runs what it ran before the default build was cut to its
 * budget (5x the former default), and the default build is not a fixed fraction of it.
 */
class LincheckSize(val default: Int, val perScale: Int) {
    val value: Int get() = if (STRESS_SCALE == 1) default else maxOf(default, perScale * STRESS_SCALE)
}

/** [default] in the default build, [stress] under -Pstress (any stress.scale above 1): a size that is not scaled further. */
fun defaultOrStress(default: Int, stress: Int): Int = if (STRESS_SCALE == 1) default else stress

/** Scenarios (iterations) of one model-checking run: 5 by default, 50 under -Pstress. */
val MC_SCENARIOS: Int = LincheckSize(default = 5, perScale = 10).value

/** Invocations (interleavings) explored per model-checking scenario: 40 by default, 100 under -Pstress (not scaled further). */
val MC_INVOCATIONS: Int = defaultOrStress(default = 40, stress = 100)

/** Scenarios (iterations) of one stress run: 4 by default, 50 under -Pstress. */
val STRESS_SCENARIOS: Int = LincheckSize(default = 4, perScale = 10).value

/** Invocations (real-thread runs) per stress scenario, at every scale. */
const val STRESS_INVOCATIONS: Int = 1000

/** The model-checking options shared by every Lincheck test of this module. */
fun mcOptions(): ModelCheckingOptions = ModelCheckingOptions()
    .iterations(MC_SCENARIOS).invocationsPerIteration(MC_INVOCATIONS)
    .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)

/** The stress options shared by every Lincheck test of this module. */
fun stressOptions(): StressOptions = StressOptions()
    .iterations(STRESS_SCENARIOS).invocationsPerIteration(STRESS_INVOCATIONS)
    .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)

/** Fixed scenarios of the future waiter (FutureWaiterLincheckTest). */
val FUTURE_FIXED_INVOCATIONS = LincheckSize(default = 300, perScale = 1000)

/** Fixed scenarios of the blocking waiter (BlockingWaiter*LincheckTest). */
val BLOCKING_FIXED_INVOCATIONS = LincheckSize(default = 100, perScale = 1000)

/** Fixed regression scenarios of the Lock (LockRegressionTest). */
val LOCK_REGRESSION_INVOCATIONS = LincheckSize(default = 200, perScale = 2000)

/** Fixed scenarios with a shared cancellable Job (JobCancellationLincheckTest, PrioritySemaphoreLincheckTest). */
val JOB_FIXED_INVOCATIONS = LincheckSize(default = 50, perScale = 200)

/** Fixed ReadWriteLock scenarios (ReadWriteLockScenariosTest): each invocation runs several queued waiters. */
val RW_FIXED_INVOCATIONS = LincheckSize(default = 50, perScale = 100)

/** Fixed scenarios of ReadWriteLock's bridge (ReadWriteFutureLincheckTest). */
val RW_FUTURE_FIXED_INVOCATIONS = LincheckSize(default = 50, perScale = 150)

/**
 * Model-checks only the fixed [scenario] of [testClass]: every interleaving Lincheck reaches in
 * [invocations] runs, for races that random scenarios reach too rarely. Lincheck's model checker explores a
 * scenario's interleavings in order of their number of thread switches, so a smaller size cuts the deeper ones.
 */
fun checkOnly(testClass: KClass<*>, invocations: LincheckSize, scenario: DSLScenarioBuilder.() -> Unit) =
    ModelCheckingOptions().iterations(0).invocationsPerIteration(invocations.value)
        .addCustomScenario(scenario)
        .check(testClass)

/** Model-checking invocations per scenario of the tests with a shared cancellable Job: 25 by default, 60 under -Pstress (MC_INVOCATIONS: 40, 100). */
val JOB_MC_INVOCATIONS: Int = defaultOrStress(default = 25, stress = 60)

/*
 * The options of the tests with a shared cancellable Job: no operation after the parallel part. Lincheck 2.39 can
 * generate a suspending operation there, and then fails inside its runner (IndexOutOfBoundsException in
 * ParallelThreadsRunner.processInvocationResult, the operation reported as hung), as -Pstress's larger scenario
 * count found with lockInJob(2) after a parallel unlock(0). The at-rest checks (@Validate) still look at the end
 * state. Model checking explores fewer invocations per scenario: kotlinx's Job machinery is explored event by event too.
 */

/** Model checking for the tests with a shared cancellable Job. */
fun jobMcOptions(): ModelCheckingOptions = mcOptions().invocationsPerIteration(JOB_MC_INVOCATIONS).actorsAfter(0)

/** Stress for the tests with a shared cancellable Job. */
fun jobStressOptions(): StressOptions = stressOptions().actorsAfter(0)
