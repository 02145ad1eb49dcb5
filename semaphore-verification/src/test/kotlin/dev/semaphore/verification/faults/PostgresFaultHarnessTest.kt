package dev.semaphore.verification.faults

import org.junit.jupiter.api.Test

/**
 * The fault harness against semaphore-postgres ([FaultHarness], the same schedule and checker as
 * [RedisFaultHarnessTest]; a primary with a synchronous standby): a short run in the default build (4 rounds: one of each
 * process fault; beside [RedisFaultHarnessTest], in a JVM of its own), five times as many under `-Pstress`.
 * The seed is random unless `-Dfaults.seed=` sets it; a failing run prints its seed and the command that replays it
 * ([FaultHarnessMain]). The report also goes to target/fault-harness.txt.
 */
class PostgresFaultHarnessTest {
    @Test
    fun `seeded faults against several clients and worker JVMs, every history checked, no violation`() =
        FaultHarnessMain.runAndCheck(engine = "postgres", rounds = 4)
}
