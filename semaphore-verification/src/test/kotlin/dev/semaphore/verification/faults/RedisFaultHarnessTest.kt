package dev.semaphore.verification.faults

import org.junit.jupiter.api.Test

/**
 * The fault harness against semaphore-redis ([FaultHarness]): a short run in the default build (4 rounds: one of each
 * process fault; beside [PostgresFaultHarnessTest], in a JVM of its own), five times as many rounds under `-Pstress`.
 * The seed is random unless `-Dfaults.seed=` sets it; a failing run prints its seed and the command that replays it
 * ([FaultHarnessMain]). The report also goes to target/fault-harness.txt.
 */
class RedisFaultHarnessTest {
    @Test
    fun `seeded faults against several clients and worker JVMs, every history checked, no violation`() =
        FaultHarnessMain.runAndCheck(engine = "redis", rounds = 4)
}
