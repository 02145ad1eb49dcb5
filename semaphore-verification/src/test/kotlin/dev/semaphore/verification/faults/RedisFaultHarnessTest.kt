package dev.semaphore.verification.faults

import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/**
 * The fault harness against semaphore-redis ([FaultHarness]): a short run in the default build (6 rounds: one of each
 * process fault; beside [PostgresFaultHarnessTest], in a JVM of its own), five times as many rounds under `-Pstress`. The seed is random unless `-Dfaults.seed=` sets it; a failing
 * run prints its seed and the command that replays it ([FaultHarnessMain]). The report also goes to
 * target/fault-harness.txt.
 */
class RedisFaultHarnessTest {
    @Test
    fun `seeded faults against several clients and worker JVMs, every history checked, no violation`() {
        val scale = System.getProperty("stress.scale")?.toIntOrNull() ?: 1
        val options = FaultHarnessMain.options(defaultRounds = 6 * scale, engine = "redis")
        println("fault harness: seed ${options.seed}, ${options.rounds} rounds (replay: ${FaultHarnessMain.replay(options)})")
        val report = FaultHarness(options).run()
        println("fault harness: $report")
        File("target").mkdirs()
        File("target/fault-harness.txt").appendText("$report\n" + report.violations.joinToString("") { "  $it\n" })
        assertTrue(report.violations.isEmpty()) {
            "the fault harness found ${report.violations.size} violations (seed ${report.seed}; replay: ${FaultHarnessMain.replay(options)}):\n" +
                report.violations.take(30).joinToString("\n")
        }
    }
}
