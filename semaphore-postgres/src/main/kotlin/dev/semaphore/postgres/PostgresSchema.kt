/*
 * Where the server side lives in the database (a schema and a name prefix), how it is created (schema.sql, on first
 * use or by a migration tool), and the checks that turn a missing schema, missing rights or an old server into an
 * error that says what to do.
 */
package dev.semaphore.postgres

import java.sql.Connection
import java.sql.SQLException

/**
 * The server side's place in the database: [schema] (which must exist) and [prefix] (prepended to every table,
 * function, sequence and notification channel of schema.sql).
 * @throws IllegalArgumentException if either is not a plain lowercase SQL name (the message names it).
 */
internal class PostgresSchema(val schema: String = "public", val prefix: String = "dsem_") {
    init {
        require(SCHEMA_NAME.matches(schema)) {
            "schema must be a lowercase SQL name (a letter or '_', then letters, digits or '_', at most 63), was \"$schema\""
        }
        require(PREFIX.matches(prefix)) {
            "prefix must be a lowercase letter followed by at most 19 lowercase letters, digits or '_', was \"$prefix\""
        }
    }

    /** The schema as SQL writes it: quoted, so that a reserved word ("user", "order") is a name like any other. */
    private val quotedSchema = "\"$schema\""

    /** [name] (a table, function or sequence of schema.sql without the prefix), qualified: `"schema".prefix_name`. */
    fun qualified(name: String): String = "$quotedSchema.$prefix$name"

    /**
     * The notification channel of the client with id [clientId] (schema.sql, `wake`): at most 57 bytes, under
     * PostgreSQL's 63.
     * @throws IllegalArgumentException if [clientId] is not 1 to 32 lowercase hexadecimal digits (what the server
     *   reads as the client part of a request id, before its first '-').
     */
    fun channel(clientId: String): String {
        require(CLIENT_ID.matches(clientId)) { "a client id must be 1 to 32 lowercase hexadecimal digits, was \"$clientId\"" }
        return "${prefix}wake_$clientId"
    }

    /** schema.sql with this schema and prefix in place of its placeholders. */
    val sql: String by lazy { template.replace("\${schema}", quotedSchema).replace("\${prefix}", prefix) }

    /**
     * Creates the tables and functions if they are missing (schema.sql runs again harmlessly), in one transaction
     * under an advisory lock, so that clients starting together do not collide.
     * @throws PostgresSetupException naming what is wrong: the server's version, the schema, or the rights.
     */
    fun create(connection: Connection) {
        checkServer(connection)
        val autoCommit = connection.autoCommit
        connection.autoCommit = false
        try {
            connection.createStatement().use { st ->
                st.execute("SELECT pg_advisory_xact_lock(hashtext('${qualified("schema")}'))")
                st.execute(sql)
            }
            connection.commit()
        } catch (e: SQLException) {
            runCatching { connection.rollback() }
            throw setupFailure(e, creating = true)
        } finally {
            connection.autoCommit = autoCommit
        }
        check(connection)
    }

    /**
     * Checks that the server is PostgreSQL 15 or later and that schema.sql's objects are there, in the version this
     * client speaks.
     * @throws PostgresSetupException naming what is wrong and what to do.
     */
    fun check(connection: Connection) {
        checkServer(connection)
        val version = try {
            connection.createStatement().use { st ->
                st.executeQuery("SELECT ${qualified("schema_version")}()").use { rs -> rs.next(); rs.getInt(1) }
            }
        } catch (e: SQLException) {
            throw setupFailure(e, creating = false)
        }
        if (version != VERSION) {
            throw PostgresSetupException(
                "the semaphore tables in schema \"$schema\" (prefix \"$prefix\") are version $version, and this client " +
                    "speaks version $VERSION: run the schema.sql of this client's version (docs/postgres.md, \"Schema\")",
            )
        }
        // One privilege at a time: has_table_privilege with several answers true if any one of them is held.
        val tables = listOf("semaphores", "requests").flatMap { table ->
            listOf("SELECT", "INSERT", "UPDATE", "DELETE").map { "('${qualified(table)}', '$it', true)" }
        } + "('${qualified("fencing_tokens")}', 'USAGE', false)"
        val missing = try {
            connection.createStatement().use { st ->
                st.executeQuery(
                    "SELECT string_agg(p || ' on ' || o, '; ' ORDER BY o, p) FROM (VALUES ${tables.joinToString()}) v(o, p, t) " +
                        "WHERE NOT CASE WHEN t THEN has_table_privilege(o, p) ELSE has_sequence_privilege(o, p) END",
                ).use { rs -> rs.next(); rs.getString(1) }
            }
        } catch (e: SQLException) {
            throw setupFailure(e, creating = false)
        }
        if (!missing.isNullOrEmpty()) {
            throw PostgresSetupException("this user may not use the semaphore tables in $this: grant it $missing")
        }
    }

    private fun checkServer(connection: Connection) {
        val number = connection.metaData.databaseMajorVersion
        if (number < MIN_SERVER_VERSION) {
            throw PostgresSetupException(
                "the server is PostgreSQL ${connection.metaData.databaseProductVersion}; semaphore-postgres needs " +
                    "$MIN_SERVER_VERSION or later",
            )
        }
    }

    private fun setupFailure(e: SQLException, creating: Boolean): PostgresSetupException {
        val where = "schema \"$schema\" (prefix \"$prefix\")"
        val what = when (e.sqlState) {
            "3F000" -> "schema \"$schema\" does not exist: create it (CREATE SCHEMA $schema) or choose an existing one"
            "42501" -> if (creating) {
                "this user may not create the semaphore tables in $where: grant it CREATE on the schema, or have an " +
                    "administrator run schema.sql (docs/postgres.md, \"Schema\") and connect with createSchema off"
            } else {
                "this user may not use the semaphore tables in $where: grant it USAGE on the schema, EXECUTE on its " +
                    "${prefix}* functions and SELECT, INSERT, UPDATE, DELETE on its ${prefix}* tables, USAGE on " +
                    "${qualified("fencing_tokens")}"
            }
            "42883", "42P01" -> "the semaphore tables are not in $where: run schema.sql there (docs/postgres.md, \"Schema\"), " +
                "or let the client create them (createSchema on)"
            else -> "setting up the semaphore tables in $where failed: ${e.message}"
        }
        return PostgresSetupException("$what (SQLSTATE ${e.sqlState})", e)
    }

    override fun toString(): String = "schema \"$schema\", prefix \"$prefix\""

    companion object {
        /** The version of schema.sql this client speaks (its function schema_version()). */
        const val VERSION = 1

        /** The oldest server major version the module is built and tested for. */
        const val MIN_SERVER_VERSION = 15

        private val SCHEMA_NAME = Regex("[a-z_][a-z0-9_]{0,62}")
        private val PREFIX = Regex("[a-z][a-z0-9_]{0,19}")
        private val CLIENT_ID = Regex("[0-9a-f]{1,32}")

        private val template: String by lazy {
            PostgresSchema::class.java.getResource("schema.sql")?.readText() ?: error("missing resource schema.sql")
        }
    }
}

/**
 * The database is not set up for the semaphores, or cannot be: the server is older than PostgreSQL 15, the schema
 * does not exist, the tables are missing or of another version, or the user lacks a right. The message says which
 * and what to do; [cause] is the driver's exception, if there was one.
 */
public class PostgresSetupException(message: String, cause: Throwable? = null) : RuntimeException(message, cause)
