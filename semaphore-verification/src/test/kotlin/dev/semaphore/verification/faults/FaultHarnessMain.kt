package dev.semaphore.verification.faults

import kotlin.system.exitProcess

/**
 * Replays a run of the fault harness from its seed (the faults of each round follow from the seed; the clients'
 * timing does not, as on any real network):
 *
 *     mvn -B -q -pl semaphore-verification -am test-compile exec:java -Dfaults.engine=ENGINE -Dfaults.seed=SEED -Dfaults.rounds=ROUNDS
 *
 * Exits with 1 if it finds a violation.
 */
object FaultHarnessMain {
    /** The options that the system properties `faults.seed` and `faults.rounds` give (a random seed, [defaultRounds] if unset). */
    fun options(defaultRounds: Int, engine: String = System.getProperty("faults.engine") ?: "redis"): FaultHarness.Options = FaultHarness.Options(
        seed = System.getProperty("faults.seed")?.toLong() ?: kotlin.random.Random.nextLong(1, Long.MAX_VALUE),
        rounds = System.getProperty("faults.rounds")?.toInt() ?: defaultRounds,
        engine = engine,
    )

    fun replay(options: FaultHarness.Options): String =
        "mvn -B -q -pl semaphore-verification -am test-compile exec:java -Dfaults.engine=${options.engine} " +
            "-Dfaults.seed=${options.seed} -Dfaults.rounds=${options.rounds}"

    @JvmStatic
    fun main(args: Array<String>) {
        val report = FaultHarness(options(defaultRounds = 8)).run()
        println(report)
        report.violations.forEach { println("  $it") }
        exitProcess(if (report.violations.isEmpty()) 0 else 1)
    }
}
