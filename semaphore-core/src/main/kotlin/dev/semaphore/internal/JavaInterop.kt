package dev.semaphore.internal

import dev.semaphore.PrioritySemaphore
import dev.semaphore.PrioritySemaphoreImpl
import kotlin.time.Duration.Companion.nanoseconds
import kotlin.time.TimeSource

/**
 * Factories the Java front-end needs but cannot name: the Kotlin `PrioritySemaphore(...)` factory
 * takes a `kotlin.time.Duration`, a value class, so its JVM name is mangled. Part of the internal SPI.
 */
@InternalSemaphoreApi
public object JavaInterop {
    /**
     * Creates an engine-backed [PrioritySemaphore] with [permits] permits and aging of [agingNanos]
     * nanoseconds per priority step (0 for no aging), on the monotonic clock.
     * @throws IllegalArgumentException if [permits] < 0 or [agingNanos] < 0.
     */
    @JvmStatic
    public fun prioritySemaphore(permits: Int, agingNanos: Long): PrioritySemaphore {
        require(agingNanos >= 0) { "aging must be positive (or 0 for none), was $agingNanos ns" }
        return PrioritySemaphoreImpl(permits, if (agingNanos == 0L) null else agingNanos.nanoseconds, TimeSource.Monotonic)
    }
}
