/*
 * The implementations of the PostgreSQL section, each named as in the benchmark methods (<operation>_<impl>):
 * - "ours", "oursLock": our DistributedSemaphore / DistributedLock on PostgreSQL (PostgresSemaphoreClient, its defaults:
 *   at most 4 connections for statements and one for LISTEN);
 * - "advisory": the pg_try_advisory_lock slot recipe, N permits as N advisory lock keys, polled ([AdvisoryPeer]);
 * - "springJdbcLock": Spring Integration's JdbcLockRegistry with its defaults ([SpringJdbcLockPeer]), a lock only;
 * - "oursRedis", "oursRedisLock": our DistributedSemaphore / DistributedLock on a local redis-server, the engine the
 *   PostgreSQL rows are compared with in the same run.
 * The method: docs/benchmarking.md#postgresql.
 */
package dev.semaphore.benchmarks.distributed

import dev.semaphore.postgres.LocalPostgresServer
import dev.semaphore.postgres.PostgresSemaphoreClient
import dev.semaphore.redis.LocalRedisServer
import dev.semaphore.redis.RedisSemaphoreClient
import org.springframework.integration.jdbc.lock.DefaultLockRepository
import org.springframework.integration.jdbc.lock.JdbcLockRegistry
import org.springframework.jdbc.datasource.DataSourceTransactionManager
import java.io.PrintWriter
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.sql.Connection
import java.sql.DriverManager
import java.sql.SQLFeatureNotSupportedException
import java.sql.SQLTransientConnectionException
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.logging.Logger
import javax.sql.DataSource
import kotlin.concurrent.thread
import kotlin.system.exitProcess

/** The implementations of the PostgreSQL section, in the order of its tables. */
val postgresImpls = listOf("ours", "oursLock", "advisory", "springJdbcLock", "oursRedis", "oursRedisLock")

/**
 * Connections per process of the peers that borrow from a pool (the advisory recipe, Spring's registry): 10, HikariCP's
 * default `maximumPoolSize`, what a user who takes a pool's defaults gets.
 */
const val POOL_SIZE = 10

/** The advisory recipe's sleep after a pass over every slot found none free, in ms. */
const val POLL_MS = 10L

/**
 * A pool of [size] connections to [url], all opened at once and kept, as a [DataSource] (HikariCP is not a dependency of
 * this build; this is the least a pool does): [getConnection] lends one, waiting up to 30 s for one to be given back
 * (HikariCP's default `connectionTimeout`), and the lent connection's `close()` gives it back, rolled back and in
 * autocommit if it was left in a transaction.
 */
class FixedPool(url: String, val size: Int) : DataSource, AutoCloseable {
    private val all = List(size) { DriverManager.getConnection(url) }
    private val idle = ArrayBlockingQueue<Connection>(size).apply { addAll(all) }

    override fun getConnection(): Connection {
        val c = idle.poll(30, TimeUnit.SECONDS) ?: throw SQLTransientConnectionException("no connection free within 30 s (a pool of $size)")
        val returned = AtomicBoolean()
        return Proxy.newProxyInstance(Connection::class.java.classLoader, arrayOf(Connection::class.java)) { _, method, args ->
            when (method.name) {
                "close" -> {
                    if (returned.compareAndSet(false, true)) giveBack(c)
                    null
                }
                "isClosed" -> returned.get() || c.isClosed
                else -> {
                    check(!returned.get() || method.declaringClass == Any::class.java) { "a connection used after it was given back" }
                    try {
                        method.invoke(c, *(args ?: emptyArray()))
                    } catch (e: InvocationTargetException) {
                        throw e.targetException
                    }
                }
            }
        } as Connection
    }

    private fun giveBack(c: Connection) {
        if (!c.autoCommit) {
            c.rollback()
            c.autoCommit = true
        }
        idle.put(c)
    }

    override fun getConnection(username: String?, password: String?): Connection = throw SQLFeatureNotSupportedException()
    override fun getLogWriter(): PrintWriter? = null
    override fun setLogWriter(out: PrintWriter?) {}
    override fun setLoginTimeout(seconds: Int) {}
    override fun getLoginTimeout(): Int = 0
    override fun getParentLogger(): Logger = throw SQLFeatureNotSupportedException()
    override fun <T : Any?> unwrap(iface: Class<T>): T = if (iface.isInstance(this)) iface.cast(this) else throw SQLFeatureNotSupportedException()
    override fun isWrapperFor(iface: Class<*>): Boolean = iface.isInstance(this)

    override fun close() = all.forEach { runCatching { it.close() } }
}

/** Runs [workers] threads of [cycles] calls of [cycle] each on [threads]; returns when all are done. */
internal fun onThreads(threads: ExecutorService, impl: String, workers: Int, cycles: Int, cycle: () -> Unit) {
    val done = CountDownLatch(workers)
    val failure = java.util.concurrent.atomic.AtomicReference<Throwable>()
    repeat(workers) {
        threads.execute {
            try {
                repeat(cycles) { cycle() }
            } catch (e: Throwable) {
                failure.compareAndSet(null, e)
            } finally {
                done.countDown()
            }
        }
    }
    check(done.await(10, TimeUnit.MINUTES)) { "$impl: the workers did not finish" }
    failure.get()?.let { throw IllegalStateException("$impl: a worker failed", it) }
}

/**
 * The pg_try_advisory_lock slot recipe, in its usual unfair, polling form: a semaphore of [slots] permits is [slots]
 * advisory lock keys (the semaphore's key, the slot's number). An acquirer borrows a connection from a pool of
 * [POOL_SIZE], tries `SELECT pg_try_advisory_lock(key, slot)` on every slot once, from a random one on (one statement
 * each), and if none was free gives the connection back, sleeps [POLL_MS] ms and tries again. A session-level advisory
 * lock belongs to its session, so the connection that took it is held for the whole hold and the release,
 * `pg_advisory_unlock(key, slot)`, runs on it; then it goes back to the pool. Nothing queues, so nothing is fair: whoever
 * polls when a slot is free gets it. A blocking thread per worker.
 */
class AdvisoryPeer(url: String, impl: String, name: String, private val slots: Int) : Peer(impl) {
    private val pool = FixedPool(url, POOL_SIZE)
    private val key = name.hashCode()
    private val threads: ExecutorService = Executors.newCachedThreadPool()

    /** A slot held, with the connection whose session holds it. */
    class Held(val connection: Connection, val slot: Int)

    private fun call(c: Connection, sql: String, slot: Int): Boolean = c.prepareStatement(sql).use { st ->
        st.setInt(1, key)
        st.setInt(2, slot)
        st.executeQuery().use { rs -> rs.next() && rs.getBoolean(1) }
    }

    override fun acquire(): Any {
        while (true) {
            val c = pool.connection
            try {
                val first = ThreadLocalRandom.current().nextInt(slots)
                for (i in 0 until slots) {
                    val slot = (first + i) % slots
                    if (call(c, "SELECT pg_try_advisory_lock(?, ?)", slot)) return Held(c, slot)
                }
            } catch (e: Throwable) {
                c.close()
                throw e
            }
            c.close()
            Thread.sleep(POLL_MS)
        }
    }

    override fun release(held: Any) {
        held as Held
        try {
            check(call(held.connection, "SELECT pg_advisory_unlock(?, ?)", held.slot)) { "$impl: slot ${held.slot} was not held" }
        } finally {
            held.connection.close()
        }
    }

    override fun contended(workers: Int, cycles: Int) = onThreads(threads, impl, workers, cycles) { acquireRelease() }

    override fun close() {
        threads.shutdownNow()
        pool.close()
    }
}

/**
 * Spring Integration's JdbcLockRegistry (spring-integration-jdbc) with its defaults: a `DefaultLockRepository` on a pool
 * of [POOL_SIZE] with a `DataSourceTransactionManager`, locks that expire after 10 s (not renewed), 100 ms between tries.
 * Each try is a transaction (UPDATE of the lock's row in INT_LOCK, else an INSERT); the release a DELETE. The registry
 * keeps a ReentrantLock per key, so within a process only one thread at a time tries the database. A lock only.
 */
class SpringJdbcLockPeer(url: String, impl: String, name: String) : Peer(impl) {
    private val pool = FixedPool(url, POOL_SIZE)
    private val repository = DefaultLockRepository(pool).apply {
        setTransactionManager(DataSourceTransactionManager(pool))
        afterPropertiesSet()
        afterSingletonsInstantiated()
        start() // checks that INT_LOCK exists
    }
    private val registry = JdbcLockRegistry(repository)
    private val lock = registry.obtain(name)
    private val threads: ExecutorService = Executors.newCachedThreadPool()

    override fun acquire(): Any {
        lock.lock()
        return lock
    }

    override fun release(held: Any) = lock.unlock()

    override fun contended(workers: Int, cycles: Int) = onThreads(threads, impl, workers, cycles) { acquireRelease() }

    override fun close() {
        threads.shutdownNow()
        pool.close()
    }

    companion object {
        /** The CREATE TABLE of INT_LOCK from the DDL Spring ships for PostgreSQL (schema-postgresql.sql in its jar). */
        val intLockDdl: String by lazy {
            val script = checkNotNull(DefaultLockRepository::class.java.classLoader.getResource("org/springframework/integration/jdbc/schema-postgresql.sql")) {
                "no schema-postgresql.sql in spring-integration-jdbc"
            }.readText()
            checkNotNull(Regex("CREATE TABLE INT_LOCK\\s*\\(.*?\\);", RegexOption.DOT_MATCHES_ALL).find(script)) {
                "no CREATE TABLE INT_LOCK in Spring's schema-postgresql.sql"
            }.value
        }

        /** Creates INT_LOCK at [url] unless it exists (called before any second process connects). */
        fun createTable(url: String) = DriverManager.getConnection(url).use { c ->
            val exists = c.createStatement().use { st -> st.executeQuery("SELECT to_regclass('int_lock') IS NOT NULL").use { it.next(); it.getBoolean(1) } }
            if (!exists) c.createStatement().use { it.execute(intLockDdl) }
        }
    }
}

/** True for the implementations that run on Redis, not PostgreSQL. */
fun onRedis(impl: String) = impl.startsWith("oursRedis")

/**
 * The peer for [impl] (one of [postgresImpls]) on the server at [target] (a JDBC URL, or a Redis URI for "oursRedis..."),
 * on a semaphore or lock named [name] of [permits] (slots, for the advisory recipe).
 */
fun postgresPeer(target: String, impl: String, name: String, permits: Int): Peer = when (impl) {
    "ours", "oursLock" -> OursPeer(PostgresSemaphoreClient.connect(target), impl, name, permits)
    "oursRedis", "oursRedisLock" -> OursPeer(RedisSemaphoreClient.connect(target), impl, name, permits)
    "advisory" -> AdvisoryPeer(target, impl, name, permits)
    "springJdbcLock" -> {
        require(permits == 1) { "$impl is a lock: 1 permit, was $permits" }
        SpringJdbcLockPeer(target, impl, name)
    }
    else -> error("unknown implementation $impl; known: $postgresImpls")
}

/**
 * The server an implementation runs on, started for it: a local redis-server for "oursRedis...", else a local PostgreSQL
 * (as semaphore-postgres's tests start it, with [settings]), with Spring's INT_LOCK table for "springJdbcLock".
 */
class PeerServer(impl: String, vararg settings: String) : AutoCloseable {
    private val redis: LocalRedisServer? = if (onRedis(impl)) LocalRedisServer.start() else null
    private val postgres: LocalPostgresServer? = if (redis == null) LocalPostgresServer.start(*settings) else null

    /** The URI or JDBC URL peers connect to. */
    val target: String = redis?.uri ?: postgres!!.url

    init {
        if (impl == "springJdbcLock") SpringJdbcLockPeer.createTable(target)
    }

    override fun close() {
        redis?.close()
        postgres?.close()
    }
}

/** The second process of the contended PostgreSQL benchmarks: `impl target name permits workers`, cycling until its parent dies. */
object PostgresLoad {
    @JvmStatic fun main(args: Array<String>) {
        val (impl, target, name, permits, workers) = args
        val parent = ProcessHandle.current().parent()
        thread(isDaemon = true) {
            while (parent.map { it.isAlive }.orElse(false)) Thread.sleep(500)
            exitProcess(0)
        }
        postgresPeer(target, impl, name, permits.toInt()).use { p ->
            println("LOAD RUNNING")
            System.out.flush()
            while (true) p.contended(workers.toInt(), 100)
        }
    }
}

/**
 * One trial of the contended PostgreSQL benchmarks: the server [impl] runs on ([PeerServer]), this process's peer on a
 * semaphore (or lock) of [permits], and a second JVM ([PostgresLoad]) running [workers] more workers of the same
 * implementation on it the whole time.
 */
class ContendedTrial(impl: String, permits: Int, workers: Int) : AutoCloseable {
    private val server = PeerServer(impl)
    val peer: Peer
    private val load: Process

    init {
        val name = "contended-$impl"
        peer = postgresPeer(server.target, impl, name, permits)
        load = ProcessBuilder(
            java.io.File(System.getProperty("java.home"), "bin/java").path, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
            PostgresLoad::class.java.name, impl, server.target, name, "$permits", "$workers",
        ).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        val first = load.inputReader().readLine()
        if (first != "LOAD RUNNING") {
            close()
            error("the load process said $first")
        }
    }

    override fun close() {
        load.destroyForcibly().waitFor()
        peer.close()
        server.close()
    }
}
