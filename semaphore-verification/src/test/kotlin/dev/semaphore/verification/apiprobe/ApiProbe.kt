/*
 * Fixtures for PublicApiTest: Kotlin declarations of every visibility and the compiler's synthetic
 * classes and members, whose dump the test reads to show what BCV counts as public API.
 * Nothing here is used by any other test.
 */
package dev.semaphore.verification.apiprobe

public enum class ProbeKind { A, B }

public interface ProbeInterface {
    public fun withDefault(x: Int = 1): Int
}

public open class ProbeOpen {
    public fun publicFun(): Int = internalFun() + privateFun()
    protected fun protectedFun(): Int = 1
    internal fun internalFun(): Int = 2
    private fun privateFun(): Int = 3

    /** The body of a public inline function calls this, so it is binary API although `internal`. */
    @PublishedApi
    internal fun publishedFun(): Int = 4

    @Suppress("NOTHING_TO_INLINE")
    public inline fun inlineFun(): Int = publishedFun()

    /** Compiles to a synthetic `$WhenMappings` class. */
    public fun describe(kind: ProbeKind): String = when (kind) {
        ProbeKind.A -> "a"
        ProbeKind.B -> "b"
    }

    /** Compiles to a lambda class or an invokedynamic, neither of them API. */
    public fun lambda(): () -> Int = { privateFun() }
}

internal class ProbeInternal {
    fun visibleInBytecode(): Int = 1
}
