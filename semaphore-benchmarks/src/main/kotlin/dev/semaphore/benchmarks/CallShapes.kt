/*
 * The call shapes users write (issue 30), each with ours and kotlinx's Semaphore behind the same code:
 * - Sem: the interface of the independent harness of issue 30 (suspend acquire, tryAcquire, release), a
 *   one-line wrapper class per implementation, so the benchmark calls each method through an interface.
 * - Holder: the primitive in a field of another class, called directly.
 * Loops run in runBlocking (the harness's shape), in a coroutine launched from it, and through a suspend lambda.
 */
package dev.semaphore.benchmarks

import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import dev.semaphore.Semaphore as OurSemaphore
import kotlinx.coroutines.sync.Semaphore as KotlinxSemaphore

/** The independent harness's interface: one wrapper class per implementation. */
public interface Sem {
    public suspend fun acquire()
    public fun tryAcquire(): Boolean
    public fun release()
    public val available: Int
}

private class OursSem(private val s: OurSemaphore) : Sem {
    override suspend fun acquire() = s.acquire()
    override fun tryAcquire() = s.tryAcquire()
    override fun release() = s.release()
    override val available: Int get() = s.availablePermits
}

private class KotlinxSem(private val s: KotlinxSemaphore) : Sem {
    override suspend fun acquire() = s.acquire()
    override fun tryAcquire() = s.tryAcquire()
    override fun release() = s.release()
    override val available: Int get() = s.availablePermits
}

/** The call shapes, by implementation name ("ours" or "kotlinx"). */
public object CallShapes {
    /** A new semaphore of [permits] behind [Sem]. @throws IllegalArgumentException for an unknown [impl]. */
    @JvmStatic
    public fun sem(impl: String, permits: Int): Sem = when (impl) {
        "ours" -> OursSem(OurSemaphore(permits))
        "kotlinx" -> KotlinxSem(KotlinxSemaphore(permits))
        else -> throw IllegalArgumentException("unknown impl '$impl' (expected ours or kotlinx)")
    }

    /** runBlocking { repeat(n) { acquire(); release() } }, the harness's loop. */
    @JvmStatic
    public fun runBlockingLoop(sem: Sem, n: Int): Unit = runBlocking {
        repeat(n) {
            sem.acquire()
            sem.release()
        }
    }

    /** The same loop in a coroutine launched from runBlocking. */
    @JvmStatic
    public fun launchLoop(sem: Sem, n: Int): Unit = runBlocking {
        launch {
            repeat(n) {
                sem.acquire()
                sem.release()
            }
        }
    }

    /** The loop calling a suspend lambda that does acquire() + release(). */
    @JvmStatic
    public fun lambdaLoop(sem: Sem, n: Int): Unit = runBlocking {
        val section: suspend () -> Unit = {
            sem.acquire()
            sem.release()
        }
        repeat(n) { section() }
    }

    /**
     * Hand-off through [sem] (no permit free at the start): one coroutine launched on Unconfined acquires n
     * times, the other releases n times, yielding after each release.
     */
    @JvmStatic
    public fun handoff(sem: Sem, n: Int): Unit = runBlocking {
        val taker = launch(kotlinx.coroutines.Dispatchers.Unconfined) { repeat(n) { sem.acquire() } }
        repeat(n) {
            sem.release()
            yield()
        }
        taker.join()
    }
}

/** Our semaphore in a field of another class, called directly (no interface between). */
public class OursHolder(permits: Int) {
    private val s = OurSemaphore(permits)

    /** tryAcquire() + release(). */
    public fun cycle(): Boolean {
        val ok = s.tryAcquire()
        if (ok) s.release()
        return ok
    }

    /** runBlocking { repeat(n) { acquire(); release() } } on the field. */
    public fun runBlockingLoop(n: Int): Unit = runBlocking {
        repeat(n) {
            s.acquire()
            s.release()
        }
    }
}

/** kotlinx's semaphore in a field of another class, as [OursHolder]. */
public class KotlinxHolder(permits: Int) {
    private val s = KotlinxSemaphore(permits)

    /** tryAcquire() + release(). */
    public fun cycle(): Boolean {
        val ok = s.tryAcquire()
        if (ok) s.release()
        return ok
    }

    /** runBlocking { repeat(n) { acquire(); release() } } on the field. */
    public fun runBlockingLoop(n: Int): Unit = runBlocking {
        repeat(n) {
            s.acquire()
            s.release()
        }
    }
}
