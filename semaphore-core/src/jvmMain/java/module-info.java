/**
 * The semaphore library's core: the suspending {@code Semaphore}, {@code Lock},
 * {@code PrioritySemaphore} and {@code ReadWriteLock} for coroutines, and {@code JavaBridge}'s
 * futures and blocking calls.
 * Only the public API is exported; the engine ({@code dev.semaphore.internal}) is exported to nobody.
 */
module dev.semaphore.core {
    requires transitive kotlin.stdlib;
    requires transitive kotlinx.coroutines.core;

    exports dev.semaphore;
}
