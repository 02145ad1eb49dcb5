/**
 * The Java face of the semaphore library: {@code AsyncSemaphore}, {@code AsyncPrioritySemaphore},
 * {@code AsyncLock} and {@code AsyncReadWriteLock}, a facade over {@code dev.semaphore.core}'s public API.
 */
module dev.semaphore.async {
    requires transitive dev.semaphore.core;
    requires static transitive org.jspecify;

    exports dev.semaphore.async;
}
