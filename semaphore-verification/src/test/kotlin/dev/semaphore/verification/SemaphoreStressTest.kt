package dev.semaphore.verification

import org.junit.jupiter.api.Test

/** Cancellation storms on [dev.semaphore.Semaphore]; see PoolStorms.kt for the invariants P1..P4. */
class SemaphoreStressTest {
    @Test
    fun cancellationStormWithMultiPermitRequests() = runStorm(PoolUnderTest.semaphore(4), initial = 4, maxRequest = 3, resize = false)

    @Test
    fun singlePermitStorm() = runStorm(PoolUnderTest.semaphore(2), initial = 2, maxRequest = 1, resize = false)

    @Test
    fun releasesRaceCloseAndResizing() = runStorm(PoolUnderTest.semaphore(4), initial = 4, maxRequest = 2, resize = true)
}

/** Cancellation storms on [dev.semaphore.PrioritySemaphore], with and without (real-time) aging. */
class PrioritySemaphoreStressTest {
    @Test
    fun cancellationStormWithPriorities() =
        runStorm(PoolUnderTest.priority(4, aging = null), initial = 4, maxRequest = 3, resize = false)

    @Test
    fun cancellationStormWithAging() =
        runStorm(PoolUnderTest.priority(4, aging = kotlin.time.Duration.parse("1ms")), initial = 4, maxRequest = 3, resize = false)

    @Test
    fun releasesRaceCloseAndResizing() =
        runStorm(PoolUnderTest.priority(4, aging = null), initial = 4, maxRequest = 2, resize = true)
}
