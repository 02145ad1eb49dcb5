/*
 * PostgresSemaphoreClient: the distributed semaphore and lock on PostgreSQL. How it connects and what it needs of the
 * database are here (and in PostgresSettings); what it sends is PostgresEngine.kt's; what the client does with the
 * answers is the shared client's (semaphore-distributed).
 */
@file:OptIn(EngineApi::class)

package dev.semaphore.postgres

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.ServerUnavailableException
import dev.semaphore.distributed.spi.EngineApi
import dev.semaphore.distributed.spi.RequestIds
import java.sql.Connection
import java.sql.DriverManager
import java.sql.SQLException
import java.util.Properties
import javax.sql.DataSource

/**
 * A [DistributedSemaphoreClient] on one PostgreSQL database (15 or later): every semaphore and lock made here keeps its
 * state in two tables of the configured schema ([PostgresSettings]), and each operation is one statement, one round
 * trip and one short transaction. Queued callers are woken by `LISTEN`/`NOTIFY` on one connection of the client's own,
 * and by their heartbeats if a notification is lost (at most one heartbeat interval later).
 *
 * Switching from Redis is the line that makes the client: this instead of `RedisSemaphoreClient.connect(...)`; the
 * semaphores, locks, leases and exceptions are the same types (docs/postgres.md lists where the engines differ).
 *
 * **Connections**: at most [PostgresSettings.poolSize] statements run at once (default 4), so the client uses at most that
 * many connections for statements, plus one for `LISTEN`, which it holds while it is open. Waiting callers hold no
 * connection and no thread.
 *
 * Close it when done ([DistributedSemaphoreClient.close]); a DataSource passed to [connect] stays the application's.
 */
public class PostgresSemaphoreClient private constructor(
    /** Its engine (the tests reach the wake-up connection through it). */
    internal val postgres: PostgresEngine,
) : DistributedSemaphoreClient(postgres) {
    public companion object {
        /**
         * Connects to the database at [jdbcUrl] (`jdbc:postgresql://host:5432/db?user=app&password=...`) with connections
         * of the client's own: at most [PostgresSettings.poolSize] for statements, opened when needed and kept, and one for
         * `LISTEN`. Unless the URL sets them, the connections time out a connection attempt after 5 s (`connectTimeout`) and
         * a read after 10 s (`socketTimeout`: a call's longest wait for the server), use TCP keepalive, and carry the client's
         * name as `ApplicationName` (what `pg_stat_activity` shows).
         *
         * The schema is created on first use unless [PostgresSettings.createSchema] is off (then a migration tool runs
         * `schema.sql`, docs/postgres.md#schema), and checked either way.
         * @throws IllegalArgumentException if [jdbcUrl] is not a `jdbc:postgresql:` URL, or a setting is invalid.
         * @throws PostgresUnavailableException if the server cannot be reached (the driver's exception is its cause).
         * @throws PostgresSetupException if the server is older than 15, or the schema, the tables or a right is missing
         *   (the message says which, and what to do).
         */
        @JvmStatic
        @JvmOverloads
        public fun connect(jdbcUrl: String, settings: PostgresSettings = PostgresSettings()): PostgresSemaphoreClient {
            require(jdbcUrl.startsWith("jdbc:postgresql:")) { "not a PostgreSQL JDBC URL (jdbc:postgresql://host/db): \"${redact(jdbcUrl)}\"" }
            val name = settings.clientName ?: RequestIds.defaultName
            val properties = Properties().apply {
                if (!Regex("[?&]connectTimeout=").containsMatchIn(jdbcUrl)) setProperty("connectTimeout", "5")
                if (!Regex("[?&]socketTimeout=").containsMatchIn(jdbcUrl)) setProperty("socketTimeout", "10")
                if (!Regex("[?&]tcpKeepAlive=").containsMatchIn(jdbcUrl)) setProperty("tcpKeepAlive", "true")
                if (!Regex("[?&]ApplicationName=").containsMatchIn(jdbcUrl)) setProperty("ApplicationName", name)
            }
            val open = { DriverManager.getConnection(jdbcUrl, properties) }
            return start(redact(jdbcUrl), name, settings, OwnPool(open, settings.poolSize), open)
        }

        /**
         * Connects through [dataSource], the application's (a HikariCP pool, for example): each statement borrows a
         * connection for its one call and gives it back, at most [PostgresSettings.poolSize] at once; the `LISTEN`
         * connection is borrowed too, and held while the client is open (size the pool for one more). Its timeouts stand:
         * set a socket timeout on it (pgjdbc's `socketTimeout`) so that a call cannot wait for ever on a dead connection.
         * Behind PgBouncer in transaction mode, statements work, but `LISTEN` does not (it belongs to a session): pass
         * [PostgresSettings.withListenUrl], a direct URL for that one connection.
         * @throws PostgresUnavailableException if no connection could be had (the driver's exception is its cause).
         * @throws PostgresSetupException as [connect] with a URL.
         */
        @JvmStatic
        @JvmOverloads
        public fun connect(dataSource: DataSource, settings: PostgresSettings = PostgresSettings()): PostgresSemaphoreClient {
            val name = settings.clientName ?: RequestIds.defaultName
            return start("the database of $dataSource", name, settings, BorrowedConnections(dataSource)) { dataSource.connection }
        }

        private fun start(
            servers: String,
            name: String,
            settings: PostgresSettings,
            connections: ConnectionSource,
            open: () -> Connection,
        ): PostgresSemaphoreClient {
            val listen = settings.listenUrl?.let { url -> { DriverManager.getConnection(url) } } ?: open
            val schema = PostgresSchema(settings.schema, settings.tablePrefix)
            try {
                connections.use { c -> if (settings.createSchema) schema.create(c) else schema.check(c) }
            } catch (e: SQLException) {
                connections.close()
                throw PostgresUnavailableException("cannot connect to the PostgreSQL server $servers: ${e.message}", e)
            } catch (e: Throwable) {
                connections.close()
                throw e
            }
            val client = PostgresSemaphoreClient(PostgresEngine(servers, name, schema, connections, listen, settings.poolSize))
            // The first requests need no LISTEN (heartbeats find their grants), but most find it in place.
            client.postgres.wakeups.awaitListening(2000)
            return client
        }

        /** [url] without a password (`password=...` in its query). */
        private fun redact(url: String): String = url.replace(Regex("(?i)(password=)[^&]*"), "$1***")
    }
}

/**
 * The PostgreSQL server could not be reached or could not serve now: the driver could not connect, a statement got no
 * answer within the socket timeout, the connection broke, the server is shutting down or starting, is a standby (read
 * only), or could not confirm a commit with its synchronous standby (SQLSTATE 08007: the outcome is unknown). [cause]
 * is the driver's exception. What it leaves, and what to do: as [ServerUnavailableException].
 */
public class PostgresUnavailableException(message: String, cause: Throwable? = null) : ServerUnavailableException(message, cause) {
    /** A copy with the same message and cause, for kotlinx.coroutines' stack-trace recovery. */
    override fun createCopy(): PostgresUnavailableException = PostgresUnavailableException(message.orEmpty(), cause)
}
