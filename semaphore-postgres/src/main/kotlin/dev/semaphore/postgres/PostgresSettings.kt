@file:OptIn(dev.semaphore.distributed.spi.EngineApi::class)

package dev.semaphore.postgres

/**
 * How a [PostgresSemaphoreClient] uses its database. Immutable: each `with` returns a changed copy.
 *
 * ```
 * PostgresSemaphoreClient.connect(url, PostgresSettings().withSchema("locks").withPoolSize(8))
 * ```
 * @property schema the schema that holds the tables and functions (it must exist). Default `public`.
 * @property tablePrefix the prefix of every table, function, sequence and notification channel. Default `dsem_`.
 * @property poolSize the most statements the client runs at once, so the most connections it uses for them. Default 4.
 * @property clientName the name the client's requests carry ([dev.semaphore.distributed.DistributedSemaphoreClient.clientName]);
 *   default "pid@host" of this JVM.
 * @property createSchema whether the client creates the schema's tables and functions when they are missing (default);
 *   off, a migration tool runs `schema.sql` and the client only checks them.
 * @property listenUrl a JDBC URL for the `LISTEN` connection alone (for example direct to the server when statements go
 *   through PgBouncer in transaction mode); default: the same source as the statements.
 */
public class PostgresSettings private constructor(
    public val schema: String,
    public val tablePrefix: String,
    public val poolSize: Int,
    public val clientName: String?,
    public val createSchema: Boolean,
    public val listenUrl: String?,
) {
    /** The defaults. */
    public constructor() : this("public", "dsem_", 4, null, true, null)

    init {
        PostgresSchema(schema, tablePrefix) // checks both names
        require(poolSize in 1..64) { "poolSize must be between 1 and 64, was $poolSize" }
        clientName?.let { dev.semaphore.distributed.spi.RequestIds.checkName(it) }
        require(listenUrl == null || listenUrl.startsWith("jdbc:postgresql:")) { "listenUrl must be a PostgreSQL JDBC URL" }
    }

    private fun copy(
        schema: String = this.schema,
        tablePrefix: String = this.tablePrefix,
        poolSize: Int = this.poolSize,
        clientName: String? = this.clientName,
        createSchema: Boolean = this.createSchema,
        listenUrl: String? = this.listenUrl,
    ) = PostgresSettings(schema, tablePrefix, poolSize, clientName, createSchema, listenUrl)

    /** See [schema]. @throws IllegalArgumentException if it is not a plain lowercase SQL name. */
    public fun withSchema(schema: String): PostgresSettings = copy(schema = schema)

    /** See [tablePrefix]. @throws IllegalArgumentException if it is not a lowercase letter and at most 19 letters, digits or '_'. */
    public fun withTablePrefix(prefix: String): PostgresSettings = copy(tablePrefix = prefix)

    /** See [poolSize]. @throws IllegalArgumentException unless 1 to 64. */
    public fun withPoolSize(size: Int): PostgresSettings = copy(poolSize = size)

    /** See [clientName]. @throws IllegalArgumentException unless 1 to 64 characters from '!' to '~'. */
    public fun withClientName(name: String): PostgresSettings = copy(clientName = name)

    /** See [createSchema]. */
    public fun withCreateSchema(create: Boolean): PostgresSettings = copy(createSchema = create)

    /** See [listenUrl]. @throws IllegalArgumentException if it is not a `jdbc:postgresql:` URL. */
    public fun withListenUrl(jdbcUrl: String): PostgresSettings = copy(listenUrl = jdbcUrl)

    override fun toString(): String =
        "PostgresSettings(schema=$schema, tablePrefix=$tablePrefix, poolSize=$poolSize" +
            (clientName?.let { ", clientName=$it" } ?: "") + (if (createSchema) "" else ", createSchema=false") +
            (if (listenUrl != null) ", listenUrl set" else "") + ")"
}
