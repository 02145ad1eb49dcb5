/*
 * The package dev.semaphore.bridge: what the library's own Java front-end (module semaphore-java-api,
 * JPMS dev.semaphore.async) builds on. It is not API for applications: JPMS exports it to that module
 * only, and Kotlin code that uses it without opting in to InternalSemaphoreApi does not compile, so a
 * Kotlin user's completion of `semaphore.` shows the Kotlin API alone. Java callers use
 * dev.semaphore.async.
 */
package dev.semaphore.bridge

/**
 * Marks what exists only for the library's own modules (the Java front-end's bridge to the engine).
 * It may change in any release without notice; use the Kotlin API in `dev.semaphore`, or the Java API
 * in `dev.semaphore.async`, instead.
 */
@RequiresOptIn(
    message = "For the library's own Java front-end (dev.semaphore.async) only; use the Kotlin API in dev.semaphore",
    level = RequiresOptIn.Level.ERROR,
)
@Retention(AnnotationRetention.BINARY)
@Target(AnnotationTarget.CLASS, AnnotationTarget.FUNCTION, AnnotationTarget.PROPERTY)
public annotation class InternalSemaphoreApi
