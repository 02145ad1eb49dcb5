package dev.semaphore

import java.lang.ref.ReferenceQueue
import java.lang.ref.WeakReference
import java.util.concurrent.ConcurrentHashMap

/**
 * What a primitive reports about itself, chosen at its creation: `Semaphore(8, Diagnostics(name = "db"))`
 * in Kotlin, `AsyncSemaphore.create(8, Diagnostics.named("db"))` in Java. Every primitive keeps its
 * counts and counters ([Inspectable.snapshot]) whatever this says; the options here add what costs
 * something, and are off by default ([NONE]).
 *
 * A [name] labels the primitive in its snapshot, its dump, its metrics and its events, and registers it
 * in the process-wide list of named primitives ([namedPrimitives], [dumpAll]), which holds it weakly:
 * a primitive nobody else references leaves the list when it is garbage-collected. Names need not be
 * unique, but metrics and dashboards are easier to read when they are.
 *
 * @property name the primitive's name: 1 to 200 characters, not blank; null for none.
 */
public class Diagnostics(
    public val name: String? = null,
) {
    init {
        if (name != null) {
            require(name.isNotBlank() && name.length <= MAX_NAME) {
                "a name must be 1 to $MAX_NAME characters and not blank, was \"$name\" (${name.length} characters)"
            }
        }
    }

    override fun toString(): String = if (name == null) "Diagnostics(none)" else "Diagnostics(name=\"$name\")"

    public companion object {
        /** No name, nothing beyond the snapshot: the default of every factory. */
        @JvmField
        public val NONE: Diagnostics = Diagnostics()

        /** The longest name accepted. */
        public const val MAX_NAME: Int = 200

        /** Diagnostics with a [name] (Java: `Diagnostics.named("db")`). */
        @JvmStatic
        public fun named(name: String): Diagnostics = Diagnostics(name)

        /** The named primitives alive now, in the order they were created. */
        @JvmStatic
        public fun namedPrimitives(): List<Inspectable> = NamedPrimitives.list()

        /** One line per named primitive alive now: its snapshot ([SemaphoreSnapshot.toString]). */
        @JvmStatic
        public fun dumpAll(): String = namedPrimitives().joinToString("\n") { it.snapshot().toString() }
    }
}

/**
 * The process-wide list of named primitives, held weakly. Its size is the number of named primitives
 * alive, plus those collected since the last registration or listing (purged by both).
 */
internal object NamedPrimitives {
    private class Entry(primitive: Inspectable, q: ReferenceQueue<Inspectable>, val seq: Long) :
        WeakReference<Inspectable>(primitive, q)

    private val gone = ReferenceQueue<Inspectable>()
    private val entries = ConcurrentHashMap<Long, Entry>()
    private val counter = java.util.concurrent.atomic.AtomicLong()

    fun register(primitive: Inspectable) {
        purge()
        val seq = counter.incrementAndGet()
        entries[seq] = Entry(primitive, gone, seq)
    }

    fun list(): List<Inspectable> {
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
            val e = gone.poll() as Entry? ?: return
            entries.remove(e.seq)
        }
    }
}
