/*
 * What src/main uses from src/jvmMain, package dev.semaphore: the public diagnostics types, written as
 * `expect` declarations with only the members src/main touches. This directory is compiled by
 * nothing but the common check (semaphore-verification's CommonKotlinTest), which compiles src/main
 * with these for the common platform; the JVM build compiles src/main with src/jvmMain instead.
 * A port to another Kotlin target provides these (and internal/Expect.kt's) for its platform.
 * CommonKotlinTest also checks that each name declared here is declared in src/jvmMain too.
 */
package dev.semaphore

public expect class Diagnostics {
    public val name: String?

    public companion object {
        public val NONE: Diagnostics
    }
}

public expect class SemaphoreSnapshot

public expect interface SemaphoreListener

public expect interface ListenerRegistration : AutoCloseable

public expect class HoldInfo

public expect class WaitInfo
