/*
 * What the diagnostics keep of primitives without keeping them alive: registries held weakly (the named
 * primitives, the deadlock-detecting locks) and periodic watches on the one diagnostics thread that stop
 * when their primitive is collected.
 */
package dev.semaphore.internal

import java.lang.ref.ReferenceQueue
import java.lang.ref.WeakReference
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ScheduledFuture
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

/** The library's one diagnostics thread (a daemon, "semaphore-diagnostics"), started by the first watch. */
internal object DiagnosticsThread {
    val executor: ScheduledThreadPoolExecutor by lazy {
        ScheduledThreadPoolExecutor(1) { r -> Thread(r, "semaphore-diagnostics").apply { isDaemon = true } }
            .apply { removeOnCancelPolicy = true }
    }

    /**
     * Runs [look] on [queue] every [periodNanos] while [queue] is alive: the watch holds it weakly and
     * cancels itself once it is collected. [look] must not capture [queue] (it is handed it each time);
     * its exceptions are logged as [what]'s, and the watch goes on.
     */
    fun watch(queue: WaiterQueue, periodNanos: Long, what: String, look: (WaiterQueue) -> Unit) {
        val task = Watch(WeakReference(queue), what, look)
        task.future = executor.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS)
    }

    private class Watch(
        private val ref: WeakReference<WaiterQueue>,
        private val what: String,
        private val look: (WaiterQueue) -> Unit,
    ) : Runnable {
        @Volatile
        var future: ScheduledFuture<*>? = null

        override fun run() {
            val q = ref.get()
            if (q == null) {
                future?.cancel(false)
                return
            }
            try {
                look(q)
            } catch (t: Throwable) {
                Observer.LOG.log(System.Logger.Level.WARNING, "$what failed once; it goes on", t)
            }
        }
    }
}
