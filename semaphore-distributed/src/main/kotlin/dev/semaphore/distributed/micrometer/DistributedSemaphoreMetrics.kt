/*
 * Micrometer meters for a DistributedSemaphore or DistributedLock. Everything in this package needs micrometer-core,
 * which semaphore-redis has as a `provided` dependency: the application that binds meters has it (in
 * the version it chose), and one that does not never loads this package.
 */
package dev.semaphore.distributed.micrometer

import dev.semaphore.ListenerRegistration
import dev.semaphore.distributed.LeaseInfo
import dev.semaphore.distributed.LeaseLostException
import dev.semaphore.distributed.LeaseListener
import dev.semaphore.distributed.DistributedLock
import dev.semaphore.distributed.DistributedSemaphore
import dev.semaphore.distributed.SemaphoreHandle
import dev.semaphore.distributed.SemaphoreInspection
import dev.semaphore.distributed.asSemaphore
import dev.semaphore.distributed.handle
import io.micrometer.core.instrument.FunctionCounter
import io.micrometer.core.instrument.Gauge
import io.micrometer.core.instrument.Meter
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Tag
import io.micrometer.core.instrument.Tags
import io.micrometer.core.instrument.TimeGauge
import io.micrometer.core.instrument.binder.MeterBinder
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import java.util.IdentityHashMap
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.TimeSource
import kotlin.time.toKotlinDuration

/**
 * Binds the meters of one [DistributedSemaphore] or [DistributedLock] to a Micrometer [MeterRegistry], with the
 * names and tags of `semaphore-micrometer` (`semaphore.*`, tagged `kind` and `name`), so that a
 * distributed semaphore's series sit beside the local ones.
 *
 * ```kotlin
 * val db = DistributedSemaphoreMetrics.of(client.semaphore("db", 8))                 // figures read every 10 s
 * val jobs = DistributedSemaphoreMetrics.of(client.lock("jobs")).refreshEvery(5.seconds).tag("region", "eu")
 * db.bindTo(registry)
 * jobs.bindTo(registry)
 * // ...
 * db.close() // removes its meters, stops reading
 * jobs.close()
 * ```
 * ```java
 * AsyncDistributedSemaphore db = AsyncDistributedSemaphore.create(client, "db", 8);
 * DistributedSemaphoreMetrics.of(db.asKotlin()).refreshEvery(Duration.ofSeconds(5)).bindTo(registry);
 * ```
 *
 * **The gauges never wait for Redis.** The semaphore's figures live on the server, and reading them
 * there takes a round trip, so they are read in the background, every [refreshEvery] period (10 s by
 * default), as one read-only [DistributedSemaphore.inspect] of one entry (it creates nothing and ends
 * nothing), on the client's background threads; a gauge shows the last figures read. Before the first
 * read, once the figures are older than three periods (the server has not answered for that long), and
 * once the binder or its client is closed, the gauges show NaN: a figure nobody knows is not shown. A
 * failed read is logged (System.Logger "dev.semaphore.distributed", WARNING, once until a read succeeds
 * again). The figures are the server's, from every JVM: every JVM that binds the semaphore shows the
 * same (aggregate them with `max`, not `sum`). A semaphore not on the server (never used, or expired
 * when idle) shows no holder and no waiter, and the total its handle would create it with.
 *
 * **The counters are this client's**: its lease renewals, by outcome, and its leases lost, from a
 * [LeaseListener] that this binder adds to the client (see [LeaseListener] for what each
 * counts). Other JVMs count theirs (aggregate them with `sum`).
 *
 * **Tags.** Every meter is tagged `kind` (`DistributedSemaphore` or `DistributedLock`) and `name` (the semaphore's
 * name), plus the binder's own tags ([tag], [tags]); `outcome` where the meter says. Never a client,
 * a lease or a token: their number has no bound. Two binders with the same kind, name and tags cannot
 * share a registry (their series would be one): the second is refused.
 *
 * **Lifetime.** The binder owns what it made: the meters in each registry it is bound to, the
 * background read and the listener. [close] removes them all; the client's close stops the read and the
 * listener (the gauges then show NaN until the binder is closed). A binder that is dropped without
 * being closed keeps reading until its client is closed: close it.
 *
 * Configure, then bind: [tag], [tags] and [refreshEvery] return a new binder. A binder may be bound to
 * several registries (one read and one listener serve them all). Thread-safe.
 */
public class DistributedSemaphoreMetrics internal constructor(
    private val semaphore: SemaphoreHandle,
    private val kind: String,
    private val extraTags: Tags,
    private val period: Duration,
) : MeterBinder, AutoCloseable {

    /** The last figures read, and the lease counters; what the meters read (they hold it weakly, as Micrometer does). */
    private val state = State()

    /** The meters of each registry this binder is bound to. Guarded by this. */
    private val bound = IdentityHashMap<MeterRegistry, List<Meter>>()

    /** The background read, from the first [bindTo] to [close]. Guarded by this. */
    private var refresher: Job? = null

    /** The listener's registration on the client, from the first [bindTo] to [close]. Guarded by this. */
    private var listening: ListenerRegistration? = null

    /** Guarded by this. */
    private var closed = false

    /** A binder like this one whose meters also carry the tag [key]=[value]. Throws as [tags]. */
    public fun tag(key: String, value: String): DistributedSemaphoreMetrics = tags(Tags.of(key, value))

    /**
     * A binder like this one whose meters also carry [tags] (`Tags.of("region", "eu", "pool", "main")`).
     * @throws IllegalArgumentException if a key is one of those this binder sets: `name`, `kind`, `outcome`.
     */
    public fun tags(tags: Iterable<Tag>): DistributedSemaphoreMetrics {
        val checked = Tags.of(tags)
        for (tag in checked) {
            require(tag.key != TAG_NAME && tag.key != TAG_KIND && tag.key != TAG_OUTCOME) {
                "the tag \"${tag.key}\" is set by the binder itself (name, kind and outcome are); choose another key for \"${tag.value}\""
            }
        }
        return DistributedSemaphoreMetrics(semaphore, kind, extraTags.and(checked), period)
    }

    /**
     * A binder like this one that reads the figures every [period] (10 s by default): each read is one
     * read-only script on the server per binder.
     * @throws IllegalArgumentException if [period] is shorter than 100 ms or infinite.
     */
    public fun refreshEvery(period: Duration): DistributedSemaphoreMetrics {
        require(period >= MIN_PERIOD && period.isFinite()) { "the refresh period must be at least $MIN_PERIOD and finite, was $period" }
        return DistributedSemaphoreMetrics(semaphore, kind, extraTags, period)
    }

    /** [refreshEvery] for Java: `refreshEvery(Duration.ofSeconds(5))`. */
    public fun refreshEvery(period: java.time.Duration): DistributedSemaphoreMetrics = refreshEvery(period.toKotlinDuration())

    /**
     * Registers the meters in [registry]; the first registry also starts the background read and adds
     * the listener. Binding again to the same registry does nothing more.
     * @throws IllegalStateException if this binder is closed, or another binder binds the same kind and
     *   name with the same tags to [registry].
     * @throws dev.semaphore.SemaphoreClosedException if the semaphore's client is closed.
     */
    override fun bindTo(registry: MeterRegistry) {
        synchronized(this) {
            check(!closed) { "this $this is closed" }
            if (registry in bound) return
            val tags = Tags.of(TAG_KIND, kind, TAG_NAME, semaphore.name).and(extraTags)
            synchronized(REGISTRATIONS) {
                val taken = registry.find(PERMITS_LIMIT).meters().any { Tags.of(it.id.tags) == tags }
                check(!taken) {
                    "another binder binds $kind \"${semaphore.name}\" with the tags $tags to this registry " +
                        "(${registry.javaClass.simpleName}): close it first, or tell them apart with a tag of your own"
                }
                if (listening == null) listening = semaphore.client.addListener(state)
                bound[registry] = register(registry, tags)
            }
            if (refresher == null) refresher = startRefreshing()
        }
    }

    /**
     * Removes the meters from every registry this binder is bound to, stops the background read and
     * removes the listener. Closing twice does nothing; a closed binder cannot be bound again.
     */
    override fun close() {
        val meters: List<Pair<MeterRegistry, List<Meter>>>
        val job: Job?
        val registration: ListenerRegistration?
        synchronized(this) {
            closed = true
            meters = bound.map { (registry, list) -> registry to list }
            bound.clear()
            job = refresher
            refresher = null
            registration = listening
            listening = null
        }
        job?.cancel()
        registration?.close()
        state.figures = null
        for ((registry, list) in meters) list.forEach { registry.remove(it) }
    }

    override fun toString(): String =
        "DistributedSemaphoreMetrics($kind \"${semaphore.name}\", every $period" +
            (if (extraTags.stream().findAny().isPresent) ", tags=$extraTags)" else ")")

    private fun startRefreshing(): Job {
        val job = semaphore.client.background.launch {
            var failing = false
            while (true) {
                try {
                    state.figures = Figures(semaphore.inspect(1), semaphore.configuredPermits)
                    if (failing) LOG.log(System.Logger.Level.INFO, "${this@DistributedSemaphoreMetrics}: the figures are read again")
                    failing = false
                } catch (e: CancellationException) {
                    throw e
                } catch (e: Exception) {
                    if (!failing) {
                        LOG.log(
                            System.Logger.Level.WARNING,
                            "${this@DistributedSemaphoreMetrics}: the figures could not be read (the gauges show the last ones for at most 3 periods)",
                            e,
                        )
                    }
                    failing = true
                }
                delay(period)
            }
        }
        job.invokeOnCompletion { state.figures = null } // closed, or the client was: nobody reads any more
        return job
    }

    private fun register(registry: MeterRegistry, tags: Tags): List<Meter> {
        val meters = ArrayList<Meter>()
        val stale = period * 3
        fun gauge(name: String, description: String, value: (Figures) -> Double) {
            meters += Gauge.builder(name, state) { s -> s.fresh(stale)?.let(value) ?: Double.NaN }
                .tags(tags).description(description).register(registry)
        }
        try {
            gauge(PERMITS_LIMIT, "Permits that exist on the server: held plus available") { it.limit.toDouble() }
            gauge(PERMITS_AVAILABLE, "Permits free now; below zero while a reduction's debt is repaid") { it.available.toDouble() }
            gauge(PERMITS_HELD, "Permits held now, by the leases of every JVM") { it.held.toDouble() }
            gauge(HOLD_ACTIVE, "Leases alive now, of every JVM") { it.holders.toDouble() }
            gauge(REQUESTS_WAITING, "Requests waiting in line now, from every JVM") { it.waiting.toDouble() }
            meters += TimeGauge.builder(ACQUIRE_OLDEST, state, TimeUnit.NANOSECONDS) { s ->
                s.fresh(stale)?.oldestWaitNanos ?: Double.NaN
            }.tags(tags).description("How long the request at the head of the line has waited; 0 if none").register(registry)
            fun counter(name: String, extra: Tags, description: String, value: (State) -> Long) {
                meters += FunctionCounter.builder(name, state) { s -> value(s).toDouble() }
                    .tags(tags.and(extra)).description(description).register(registry)
            }
            counter(LEASE_RENEWALS, Tags.of(TAG_OUTCOME, "renewed"), "Renewals of this client's leases, by outcome") { it.renewed.get() }
            counter(LEASE_RENEWALS, Tags.of(TAG_OUTCOME, "failed"), "Renewals of this client's leases, by outcome") { it.failed.get() }
            counter(LEASE_LOST, Tags.empty(), "Leases of this client lost while held") { it.lost.get() }
        } catch (e: RuntimeException) {
            meters.forEach { registry.remove(it) }
            throw e
        }
        return meters
    }

    /** The figures of one read, and when it was made. */
    private class Figures(seen: SemaphoreInspection, configured: Int) {
        val at = TimeSource.Monotonic.markNow()
        val limit: Int = if (seen.exists) seen.totalPermits else configured
        val available: Int = if (seen.exists) seen.availablePermits else configured
        val held: Int = seen.heldPermits
        val holders: Int = seen.holderCount
        val waiting: Int = seen.queueLength
        val oldestWaitNanos: Double = seen.line.firstOrNull()?.waited?.inWholeNanoseconds?.toDouble() ?: 0.0
    }

    /** What the meters read: the last figures, and the counts of this client's lease events for this name. */
    private inner class State : LeaseListener {
        @Volatile
        var figures: Figures? = null
        val renewed = AtomicLong()
        val failed = AtomicLong()
        val lost = AtomicLong()

        /** The last figures, unless older than [stale] (or none). */
        fun fresh(stale: Duration): Figures? = figures?.takeIf { it.at.elapsedNow() <= stale }

        override fun onLeaseRenewed(lease: LeaseInfo) {
            if (lease.semaphoreName == semaphore.name) renewed.incrementAndGet()
        }

        override fun onRenewalFailed(lease: LeaseInfo, cause: Throwable) {
            if (lease.semaphoreName == semaphore.name) failed.incrementAndGet()
        }

        override fun onLeaseLost(lease: LeaseInfo, cause: LeaseLostException) {
            if (lease.semaphoreName == semaphore.name) lost.incrementAndGet()
        }

        override fun toString(): String = "the lease counters of ${this@DistributedSemaphoreMetrics}"
    }

    public companion object {
        /** Gauge: permits that exist on the server, held plus available (the semaphore's total). */
        public const val PERMITS_LIMIT: String = "semaphore.permits.limit"

        /** Gauge: permits free now; below zero while a reduction's debt is repaid. */
        public const val PERMITS_AVAILABLE: String = "semaphore.permits.available"

        /** Gauge: permits held now, by the live leases of every JVM. */
        public const val PERMITS_HELD: String = "semaphore.permits.held"

        /** Gauge: leases alive now, of every JVM. */
        public const val HOLD_ACTIVE: String = "semaphore.hold.active"

        /** Gauge: requests waiting in line now, from every JVM. */
        public const val REQUESTS_WAITING: String = "semaphore.requests.waiting"

        /** Time gauge: how long the request at the head of the line (the oldest) has waited; 0 if none. */
        public const val ACQUIRE_OLDEST: String = "semaphore.acquire.oldest"

        /** Counter, tagged `outcome` (`renewed`, `failed`): the renewals this client made of its leases. */
        public const val LEASE_RENEWALS: String = "semaphore.lease.renewals"

        /** Counter: the leases of this client lost while held. */
        public const val LEASE_LOST: String = "semaphore.lease.lost"

        /** Tag key: the semaphore's name. */
        public const val TAG_NAME: String = "name"

        /** Tag key: `DistributedSemaphore` or `DistributedLock`. */
        public const val TAG_KIND: String = "kind"

        /** Tag key: how a renewal ended ([LEASE_RENEWALS]). */
        public const val TAG_OUTCOME: String = "outcome"

        /** The default refresh period. */
        private val DEFAULT_PERIOD = 10.seconds

        /** The shortest refresh period: each read is a script on the server. */
        private val MIN_PERIOD = 100.milliseconds

        /** Guards the check and the registration of two binders' meters in one registry. */
        private val REGISTRATIONS = Any()

        private val LOG: System.Logger = System.getLogger("dev.semaphore.distributed")

        /**
         * A binder for [semaphore], tagged `kind=DistributedSemaphore` and its name.
         * @throws IllegalArgumentException if it is not a DistributedSemaphore of this library.
         */
        @JvmStatic
        public fun of(semaphore: DistributedSemaphore): DistributedSemaphoreMetrics =
            DistributedSemaphoreMetrics(semaphore.handle(), "DistributedSemaphore", Tags.empty(), DEFAULT_PERIOD)

        /**
         * A binder for [lock], tagged `kind=DistributedLock` and its name.
         * @throws IllegalArgumentException if it is not a DistributedLock of this library.
         */
        @JvmStatic
        public fun of(lock: DistributedLock): DistributedSemaphoreMetrics =
            DistributedSemaphoreMetrics(lock.asSemaphore().handle(), "DistributedLock", Tags.empty(), DEFAULT_PERIOD)
    }
}
