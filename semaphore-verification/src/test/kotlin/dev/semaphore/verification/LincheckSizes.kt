/*
 * The Lincheck sizes of this module, in one place, scaled by STRESS_SCALE (1 by default, 5 under
 * -Pstress): the number of scenarios (iterations) grows with the scale, the invocations per
 * scenario stay fixed, so -Pstress runs 5x the scenarios and 5x the invocations.
 *
 *                            default (scale 1)                  -Pstress (scale 5)
 *   model checking   per test class: 10 scenarios x 100 inv.    50 scenarios x 100 inv.
 *   stress           per test class: 10 scenarios x 1000 inv.   50 scenarios x 1000 inv.
 * Test classes: Semaphore1LincheckTest, Semaphore2LincheckTest, LockLincheckTest, FutureWaiterLincheckTest,
 * ReadWriteLockLincheckTest, SmallReadWriteLockLincheckTest,
 * BlockingWaiterSemaphoreLincheckTest, BlockingWaiterLockLincheckTest,
 * PrioritySemaphoreLincheckTest, each with one model-checking and one stress run; so per primitive
 * (Semaphore counts twice: 1 and 2 permits) 1,000 model-checking and 10,000 stress invocations
 * by default, 5,000 and 50,000 under -Pstress. The tests with operations in a shared Job that an
 * operation cancels (JobCancellationLincheckTest.kt) use jobMcOptions()/jobStressOptions(): fewer
 * model-checking invocations per scenario and no operation after the parallel part.
 *
 * Scenario shape: 3 threads x 2 operations, 1 operation before and 1 after the parallel part.
 * The fixed regression scenarios (LockRegressionTest) get 2000 model-checking invocations each
 * (10,000 under -Pstress); the fixed ReadWriteLock scenarios 100 each in ReadWriteLockScenariosTest
 * and 150 in ReadWriteFutureLincheckTest (5x under -Pstress), because each of their invocations runs
 * several queued waiters (the regressions among them fail well within that on the code before their fix).
 * The model-checking numbers are small because the engine's slow path goes through a lock (a bit of
 * its state word, with spinning and parking), which Lincheck explores event by event: on a loaded
 * 2-core machine one invocation costs ~40 ms.
 */
package dev.semaphore.verification

import org.jetbrains.kotlinx.lincheck.DSLScenarioBuilder
import kotlin.reflect.KClass
import org.jetbrains.kotlinx.lincheck.check
import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions

/** Scenarios (iterations) of one model-checking run. */
val MC_SCENARIOS: Int = 10 * STRESS_SCALE

/** Invocations (interleavings) explored per model-checking scenario. */
const val MC_INVOCATIONS: Int = 100

/** Scenarios (iterations) of one stress run. */
val STRESS_SCENARIOS: Int = 10 * STRESS_SCALE

/** Invocations (real-thread runs) per stress scenario. */
const val STRESS_INVOCATIONS: Int = 1000

/** The model-checking options shared by every Lincheck test of this module. */
fun mcOptions(): ModelCheckingOptions = ModelCheckingOptions()
    .iterations(MC_SCENARIOS).invocationsPerIteration(MC_INVOCATIONS)
    .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)

/** The stress options shared by every Lincheck test of this module. */
fun stressOptions(): StressOptions = StressOptions()
    .iterations(STRESS_SCENARIOS).invocationsPerIteration(STRESS_INVOCATIONS)
    .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)

/**
 * Model-checks only the fixed [scenario] of [testClass]: every interleaving Lincheck reaches in
 * [invocations] runs (5 times as many under -Pstress), for races that random scenarios reach too rarely.
 */
fun checkOnly(testClass: KClass<*>, invocations: Int = 1000, scenario: DSLScenarioBuilder.() -> Unit) =
    ModelCheckingOptions().iterations(0).invocationsPerIteration(invocations * STRESS_SCALE)
        .addCustomScenario(scenario)
        .check(testClass)

/** Model-checking invocations per scenario of the tests with a shared cancellable Job (the shared MC_INVOCATIONS is 100). */
const val JOB_MC_INVOCATIONS: Int = 60

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
