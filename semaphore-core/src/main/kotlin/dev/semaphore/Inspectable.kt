package dev.semaphore

/**
 * A primitive that can tell what it looks like and what happens to it: every [Semaphore],
 * [PrioritySemaphore], [Lock] and [ReadWriteLock] of this library (and their Java views) is one. What is
 * recorded, and what it costs, is chosen at creation with [Diagnostics]; docs/diagnostics.md has the
 * whole story.
 */
public interface Inspectable {
    /** The name given at creation ([Diagnostics.name]), or null. */
    public val name: String?

    /** The primitive's counts, line and counters now: weakly consistent, as [SemaphoreSnapshot] details. */
    public fun snapshot(): SemaphoreSnapshot

    /**
     * Adds [listener]: it is told of every acquisition, release, refusal, timeout, cancellation, close,
     * resize and long hold from now on, and of every leaked Java `Permit`, until the returned registration
     * is closed. The primitive is
     * observed while it has a listener (its calls take its internal lock: see [SemaphoreListener]).
     */
    public fun addListener(listener: SemaphoreListener): ListenerRegistration

    /**
     * The holds alive now, oldest first, as recorded while the primitive is observed ([Tracking], or a
     * listener); empty when it is not. A hold taken before observation began is not listed.
     */
    public fun holders(): List<HoldInfo>

    /** The requests in line now, in the order they joined it, as recorded while observed; empty when not. */
    public fun waiters(): List<WaitInfo>

    /** A human-readable dump: the snapshot's line, then one line per holder and per request in line. */
    public fun dump(): String
}
