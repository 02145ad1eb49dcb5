package dev.semaphore.verification.faults

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.postgres.LocalPostgresServer
import dev.semaphore.postgres.PostgresSemaphoreClient
import dev.semaphore.redis.LocalRedisServer
import dev.semaphore.redis.RedisSemaphoreClient

/**
 * What the fault harness needs of an engine: a primary whose every answered grant survives its loss (a replica or
 * standby that confirms it), clients that reach it through a relay's port, a restart (kill -9 and the same data) and a
 * failover (the primary killed, its replica or standby promoted). [FaultHarness] is the same for every engine.
 */
interface FaultTarget : AutoCloseable {
    val engine: String

    /** The port the relays forward to: the primary's. */
    val primaryPort: Int

    /** Redis confirms grants by `WAIT` (replicaAcks 1); PostgreSQL by its synchronous standby (replicaAcks 0). */
    val replicaAcks: Int

    /** The URL of a client through the relay listening on [port], whose calls without a timeout of their own wait at most [timeoutSeconds]. */
    fun url(port: Int, timeoutSeconds: Int): String

    /** kill -9 of the primary and a start on the same data. */
    fun restart()

    /** The primary dies; its replica or standby is promoted. Returns the new primary's port. */
    fun failover(): Int

    /** After [failover], once the clients were moved: the new primary gets a replica or standby that confirms its grants. */
    fun replaceReplica()

    companion object {
        fun start(engine: String): FaultTarget = when (engine) {
            "redis" -> RedisTarget()
            "postgres" -> PostgresTarget()
            else -> throw IllegalArgumentException("no engine \"$engine\" (redis or postgres)")
        }

        /** A client of [engine] at [url] (in this JVM, and in a worker JVM from its arguments). */
        fun connect(engine: String, url: String): DistributedSemaphoreClient = when (engine) {
            "redis" -> RedisSemaphoreClient.connect(url)
            "postgres" -> PostgresSemaphoreClient.connect(url)
            else -> throw IllegalArgumentException("no engine \"$engine\"")
        }
    }
}

/** Redis with AOF (fsync always) and a replica that every grant waits for (replicaAcks 1). */
private class RedisTarget : FaultTarget {
    override val engine = "redis"
    private var master = LocalRedisServer.start(appendOnly = true)
    private var replica = LocalRedisServer.startReplica(master)
    override val primaryPort: Int get() = master.port
    override val replicaAcks = 1

    override fun url(port: Int, timeoutSeconds: Int) = "redis://127.0.0.1:$port?timeout=${timeoutSeconds}s"

    override fun restart() = master.restart()

    override fun failover(): Int {
        val old = master
        old.kill()
        replica.promote()
        master = replica
        old.close()
        return master.port
    }

    override fun replaceReplica() {
        replica = LocalRedisServer.startReplica(master)
    }

    override fun close() {
        runCatching { replica.close() }
        runCatching { master.close() }
    }
}

/**
 * PostgreSQL with a synchronous standby: a commit is answered once the standby has it, so a grant answered survives the
 * primary's loss. After a failover the promoted server gets a new standby, synchronous once it streams.
 */
private class PostgresTarget : FaultTarget {
    override val engine = "postgres"
    private var standbys = 1
    private var primary = LocalPostgresServer.start("synchronous_standby_names=standby1")
    private var standby = LocalPostgresServer.startStandby(primary, "standby1").also { primary.awaitStandby("standby1", sync = true) }
    override val primaryPort: Int get() = primary.port
    override val replicaAcks = 0

    override fun url(port: Int, timeoutSeconds: Int) =
        "jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres&socketTimeout=$timeoutSeconds&connectTimeout=$timeoutSeconds"

    override fun restart() = primary.restart()

    override fun failover(): Int {
        val old = primary
        old.kill()
        standby.promote()
        primary = standby
        old.close()
        return primary.port
    }

    override fun replaceReplica() {
        val name = "standby${++standbys}"
        standby = LocalPostgresServer.startStandby(primary, name)
        primary.execute("ALTER SYSTEM SET synchronous_standby_names = '$name'")
        primary.execute("SELECT pg_reload_conf()")
        primary.awaitStandby(name, sync = true)
    }

    override fun close() {
        runCatching { standby.close() }
        runCatching { primary.close() }
    }
}
