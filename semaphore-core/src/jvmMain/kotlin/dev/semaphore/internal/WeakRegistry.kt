/*
 * What the diagnostics keep of primitives without keeping them alive: registries held weakly (the named
 * primitives, the deadlock-detecting locks), and the diagnostics threads whose one-shot watches hold their
 * primitive weakly (Observer.kt, O5).
 */
package dev.semaphore.internal

import java.lang.ref.ReferenceQueue
import java.lang.ref.WeakReference
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong

/**
 * Values held weakly, listed in the order they were added. Bound: the values alive plus those
 * collected since the last [add], [list] or [size] (each purges them).
 */
internal class WeakRegistry<T : Any> {
    private class Entry<T : Any>(value: T, q: ReferenceQueue<T>, val seq: Long) : WeakReference<T>(value, q)

    private val gone = ReferenceQueue<T>()
    private val entries = ConcurrentHashMap<Long, Entry<T>>()
    private val counter = AtomicLong()

    fun add(value: T) {
        purge()
        val seq = counter.incrementAndGet()
        entries[seq] = Entry(value, gone, seq)
    }

    /** The values alive, oldest first. */
    fun list(): List<T> {
        purge()
        return entries.values.sortedBy { it.seq }.mapNotNull { it.get() }
    }

    /** How many entries are kept now (for the tests of the bound). */
    fun size(): Int {
        purge()
        return entries.size
    }

    private fun purge() {
        while (true) {
            val e = gone.poll() as Entry<*>? ?: return
            entries.remove(e.seq)
        }
    }
}

/**
 * The library's diagnostics threads (daemons, started when first needed): "semaphore-diagnostics" runs the
 * watches (Observer.kt, O5) and deadlock searches; "semaphore-diagnostics-events" tells listeners what they
 * found, so that a slow listener never delays a watch.
 */
internal object DiagnosticsThread {
    val executor: ScheduledThreadPoolExecutor by lazy {
        ScheduledThreadPoolExecutor(1) { r -> Thread(r, "semaphore-diagnostics").apply { isDaemon = true } }
            .apply { removeOnCancelPolicy = true }
    }

    /** Threads for the listeners (Observer.tell): as many as primitives are being told at once, gone after a minute idle. */
    val events: java.util.concurrent.ExecutorService by lazy {
        java.util.concurrent.ThreadPoolExecutor(0, Int.MAX_VALUE, 60, TimeUnit.SECONDS, java.util.concurrent.SynchronousQueue()) { r ->
            Thread(r, "semaphore-diagnostics-events").apply { isDaemon = true }
        }
    }

    /** O5: looks at [queue] once, [delayNanos] from now, holding it weakly; the look may arm the next one. */
    fun watchOnce(queue: WaiterQueue, delayNanos: Long, armedAt: Long) {
        executor.schedule(Look(WeakReference(queue), armedAt), delayNanos, TimeUnit.NANOSECONDS)
    }

    private class Look(private val ref: WeakReference<WaiterQueue>, private val armedAt: Long) : Runnable {
        override fun run() {
            val q = ref.get() ?: return
            try {
                var holds: List<Pending.LongHold> = emptyList()
                var search = false
                var observer: Observer? = null
                q.withObserver { o, _ ->
                    observer = o
                    o?.watchNow(armedAt) { h, s ->
                        holds = h
                        search = s
                    }
                }
                val o = observer ?: return
                if (holds.isNotEmpty()) o.tell { o.deliver(holds) }
                if (search) Deadlocks.requestSearch()
            } catch (t: Throwable) {
                Observer.LOG.log(System.Logger.Level.WARNING, "a diagnostics watch failed once", t)
            }
        }
    }
}
