/**
 * The semaphore library's core: the suspending {@code Semaphore}, {@code Lock},
 * {@code PrioritySemaphore} and {@code ReadWriteLock} for coroutines ({@code dev.semaphore}).
 * The engine ({@code dev.semaphore.internal}) is exported to nobody; the bridge that the Java front-end
 * builds on ({@code dev.semaphore.bridge}: futures and blocking calls) only to that front-end.
 */
@SuppressWarnings("module") // dev.semaphore.async (semaphore-java-api) is built after this module
module dev.semaphore.core {
    requires transitive kotlin.stdlib;
    requires transitive kotlinx.coroutines.core;
    requires static jdk.jfr; // optional: the JFR events are recorded only where the module is present

    exports dev.semaphore;
    exports dev.semaphore.bridge to dev.semaphore.async;
}
