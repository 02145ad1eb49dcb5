/*
 * Shared helpers of the verification module: the scale factor and the mapping of expected misuse
 * to plain result values, so that Lincheck compares outcomes instead of failing on an exception.
 *
 * Invariant: a CancellationException is never turned into a result (it is an IllegalStateException
 * on the JVM, so it is rethrown before the generic catch); Lincheck must see cancellation as such.
 */
package dev.semaphore.verification

import dev.semaphore.SemaphoreClosedException
import kotlin.coroutines.cancellation.CancellationException

/** The factor every test size is multiplied by: the `stress.scale` system property (1, or 5 under -Pstress). */
val STRESS_SCALE: Int = (System.getProperty("stress.scale") ?: "1").toIntOrNull()?.coerceAtLeast(1) ?: 1

/** Result of an operation that succeeded without a value of its own. */
const val OK = "ok"

/** Result of an acquisition attempted on (or failed by) a closed primitive. */
const val CLOSED = "closed"

/** Result of a request larger than the total (IllegalArgumentException at call time). */
const val TOO_MANY = "too-many"

/** Result of a queued request failed because the total shrank below it (IllegalStateException). */
const val NEVER = "never"

/** Result of a release of permits that are not held, or a misused unlock (IllegalStateException). */
const val MISUSE = "misuse"

/** Maps the library's documented misuse exceptions to result values; rethrows anything else. */
inline fun <T> outcome(block: () -> T): Any? =
    try {
        block()
    } catch (e: CancellationException) {
        throw e
    } catch (e: SemaphoreClosedException) {
        CLOSED
    } catch (e: IllegalArgumentException) {
        TOO_MANY
    } catch (e: IllegalStateException) {
        if (e.message?.contains("can never be granted") == true) NEVER else MISUSE
    }
