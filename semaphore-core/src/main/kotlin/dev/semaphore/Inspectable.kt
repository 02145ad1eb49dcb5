package dev.semaphore

/**
 * A primitive that can tell what it looks like: every [Semaphore], [PrioritySemaphore], [Lock] and
 * [ReadWriteLock] of this library (and their Java views) is one. What each figure means, and which are
 * exact, is in [SemaphoreSnapshot]; what a primitive reports beyond it is chosen at creation with
 * [Diagnostics].
 */
public interface Inspectable {
    /** The name given at creation ([Diagnostics.name]), or null. */
    public val name: String?

    /** The primitive's counts, line and counters now: weakly consistent, as [SemaphoreSnapshot] details. */
    public fun snapshot(): SemaphoreSnapshot
}
