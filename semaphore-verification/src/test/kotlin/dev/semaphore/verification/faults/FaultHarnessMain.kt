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

    /**
     * A default build's run on [engine] ([rounds] times -Dstress.scale rounds), its report printed and appended to
     * target/fault-harness.txt; fails, naming the seed and the command that replays it, if a violation was found.
     */
    fun runAndCheck(engine: String, rounds: Int) {
        val scale = System.getProperty("stress.scale")?.toIntOrNull() ?: 1
        val options = options(defaultRounds = rounds * scale, engine = engine)
        println("fault harness: seed ${options.seed}, ${options.rounds} rounds (replay: ${replay(options)})")
        val report = FaultHarness(options).run()
        println("fault harness: $report")
        java.io.File("target").mkdirs()
        java.io.File("target/fault-harness.txt").appendText("$report\n" + report.violations.joinToString("") { "  $it\n" })
        org.junit.jupiter.api.Assertions.assertTrue(report.violations.isEmpty()) {
            "the fault harness found ${report.violations.size} violations (seed ${report.seed}; replay: ${replay(options)}):\n" +
                report.violations.take(30).joinToString("\n")
        }
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val report = FaultHarness(options(defaultRounds = 8)).run()
        println(report)
        report.violations.forEach { println("  $it") }
        exitProcess(if (report.violations.isEmpty()) 0 else 1)
    }
}
