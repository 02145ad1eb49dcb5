package dev.semaphore.benchmarks.distributed

import dev.semaphore.postgres.LocalPostgresServer
import java.io.BufferedInputStream
import java.io.BufferedOutputStream
import java.io.DataInputStream
import java.io.DataOutputStream
import java.io.EOFException
import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.sql.Connection
import java.sql.DriverManager
import java.util.Locale
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess

/**
 * What JMH does not measure, for the PostgreSQL section: what an acquisition costs the server, for each implementation
 * on PostgreSQL (ours, oursLock, advisory, springJdbcLock of PostgresPeers.kt), counted outside any JMH timing. The
 * method: docs/benchmarking.md#postgresql.
 *
 * One local PostgreSQL (as semaphore-postgres's tests start it, with pg_stat_statements tracking nested statements too).
 * The implementations reach it through a relay that reads the protocol ([ProtocolCounter]), which counts per acquisition:
 * - the statements sent (each Execute or simple Query message: BEGIN and COMMIT included), by their text;
 * - the round trips (the times a client sends while it waits for no answer, then waits for the server's ReadyForQuery);
 * - the transactions (each ReadyForQuery that leaves a transaction block, or that ends a round trip that ran a statement
 *   outside one: an autocommit statement).
 * And the server, read by a monitoring connection to another database (so that its own statements do not count):
 * - the statements run inside those sent (`pg_stat_statements`, not top-level: our functions' statements);
 * - the WAL written, `pg_current_wal_lsn()` (everything the server wrote meanwhile: any checkpoint or autovacuum that ran
 *   then included, hence medians over rounds);
 * - the CPU time of every server process (the postmaster and its descendants, `/proc/PID/schedstat`), but the monitoring
 *   connection's backend: the server's whole work, parsing and commits included, in µs per acquisition: a timing on a shared machine, so compared round by round
 *   as RedisPeersReport compares script time.
 * Uncontended: every implementation connected at once, [Settings.rounds] interleaved rounds ([Rounds.order]) of
 * [Settings.batch] acquire-release cycles each, after 2 rounds of warm-up. Contended: for each implementation (and 1 and
 * 8 permits for the semaphores), 2 clients (each with its own pool or connections, as two processes have) x 10 workers x
 * [Settings.cycles] cycles on one semaphore, after a warm-up of one cycle per worker.
 *
 *   java -cp semaphore-benchmarks/target/benchmarks.jar dev.semaphore.benchmarks.distributed.PostgresPeersReport \
 *       [--rounds 10] [--batch 200] [--cycles 20] [--out DIR]
 *
 * Writes cost-uncontended.md and cost-contended.md (Markdown) into DIR (default: the working directory) and prints
 * both; progress goes to standard error.
 */
object PostgresPeersReport {
    private val impls = listOf("ours", "oursLock", "advisory", "springJdbcLock")

    /** The ratios reported: ours / peer. */
    private val pairs = listOf("ours" to "advisory", "oursLock" to "springJdbcLock")

    private const val WARMUP_ROUNDS = 2
    private const val CLIENTS = 2
    private const val WORKERS = 10

    /** The settings of a run, from `--name value` arguments. */
    class Settings(args: Array<String>) {
        private val given = args.toList().chunked(2).associate { pair ->
            require(pair.size == 2 && pair[0].startsWith("--")) { "expected --name value, was ${pair.joinToString(" ")}" }
            pair[0].removePrefix("--") to pair[1]
        }
        init {
            val known = setOf("rounds", "batch", "cycles", "out")
            require(known.containsAll(given.keys)) { "unknown settings ${given.keys - known}; known: $known" }
        }
        val rounds = given["rounds"]?.toInt() ?: 10
        val batch = given["batch"]?.toInt() ?: 200
        val cycles = given["cycles"]?.toInt() ?: 20
        val out = File(given["out"] ?: ".")
    }

    /** What one batch cost, per acquisition. */
    class Cost(
        val statements: Double,
        val roundTrips: Double,
        val transactions: Double,
        val nested: Double,
        val walBytes: Double,
        val cpuMicros: Double,
        /** The statements sent, by their text, per acquisition. */
        val bySql: Map<String, Double>,
    )

    /** The server's side of a reading: the WAL position, nested statements so far, CPU ns by process. */
    private class ServerReading(val wal: Long, val nested: Long, val cpu: Map<Long, Long>)

    private class Meter(private val server: LocalPostgresServer, private val monitor: Connection, val counter: ProtocolCounter) {
        /** The monitoring connection's backend, whose work (these readings) is not the implementations'. */
        private val monitorPid: Long = monitor.createStatement().use { st -> st.executeQuery("SELECT pg_backend_pid()").use { it.next(); it.getLong(1) } }

        private fun read(): ServerReading {
            val (wal, nested) = monitor.createStatement().use { st ->
                st.executeQuery(
                    "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements " +
                        "WHERE NOT toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres'))",
                ).use { rs -> rs.next(); rs.getLong(1) to rs.getLong(2) }
            }
            return ServerReading(wal, nested, cpu())
        }

        /** CPU time so far of the server's processes (the postmaster and its descendants but the monitor's), in ns, by pid. */
        private fun cpu(): Map<Long, Long> {
            val root = ProcessHandle.of(server.pid).orElseThrow { IllegalStateException("the server is not running") }
            return (sequenceOf(root) + root.descendants().toList()).filter { it.pid() != monitorPid }.mapNotNull { p ->
                runCatching { p.pid() to File("/proc/${p.pid()}/schedstat").readText().trim().split(' ')[0].toLong() }.getOrNull()
            }.toMap()
        }

        /** Runs [work] ([acquisitions] of them) and returns what it cost per acquisition. */
        fun measure(acquisitions: Int, work: () -> Unit): Cost {
            val before = read()
            val sent = counter.reading()
            work()
            val sentAfter = counter.reading()
            val after = read()
            val n = acquisitions.toDouble()
            return Cost(
                statements = (sentAfter.statements - sent.statements) / n,
                roundTrips = (sentAfter.roundTrips - sent.roundTrips) / n,
                transactions = (sentAfter.transactions - sent.transactions) / n,
                nested = (after.nested - before.nested) / n,
                walBytes = (after.wal - before.wal) / n,
                cpuMicros = after.cpu.entries.sumOf { (pid, ns) -> ns - (before.cpu[pid] ?: 0) } / 1000.0 / n,
                bySql = sentAfter.bySql.mapValues { (sql, calls) -> (calls - (sent.bySql[sql] ?: 0)) / n }.filterValues { it > 0 }.toSortedMap(),
            )
        }
    }

    @JvmStatic fun main(args: Array<String>) {
        val settings = Settings(args)
        val uncontended: String
        val contended: String
        LocalPostgresServer.start("shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all").use { server ->
            server.execute("CREATE DATABASE monitor")
            val monitorUrl = server.url.replace("/postgres?", "/monitor?")
            DriverManager.getConnection(monitorUrl).use { c -> c.createStatement().use { it.execute("CREATE EXTENSION pg_stat_statements") } }
            SpringJdbcLockPeer.createTable(server.url)
            val version = server.query("SHOW server_version")
            ProtocolCounter(server.port).use { counter ->
                DriverManager.getConnection(monitorUrl).use { monitor ->
                    val meter = Meter(server, monitor, counter)
                    val url = "jdbc:postgresql://127.0.0.1:${counter.port}/postgres?user=postgres&sslmode=disable&gssEncMode=disable"
                    uncontended = uncontended(meter, url, settings, version)
                    contended = contended(meter, url, settings)
                }
            }
        }
        settings.out.mkdirs()
        File(settings.out, "cost-uncontended.md").writeText(uncontended)
        File(settings.out, "cost-contended.md").writeText(contended)
        println(uncontended)
        println(contended)
        exitProcess(0)
    }

    private fun uncontended(meter: Meter, url: String, settings: Settings, version: String?): String {
        progress("uncontended: ${settings.rounds} interleaved rounds of ${settings.batch} acquisitions, after $WARMUP_ROUNDS of warm-up")
        val peers = impls.associateWith { postgresPeer(url, it, "cost-$it", 1) }
        val costs = impls.associateWith { mutableListOf<Cost>() }
        try {
            for (round in 0 until WARMUP_ROUNDS) for (impl in order(round)) repeat(settings.batch) { peers.getValue(impl).acquireRelease() }
            for (round in 0 until settings.rounds) {
                for (impl in order(round)) {
                    val p = peers.getValue(impl)
                    costs.getValue(impl) += meter.measure(settings.batch) { repeat(settings.batch) { p.acquireRelease() } }
                }
            }
        } finally {
            peers.values.forEach { it.close() }
        }
        return buildString {
            appendLine(
                "Server cost per uncontended acquisition (acquire + release), PostgreSQL $version: the median over " +
                    "${settings.rounds} interleaved rounds of ${settings.batch} acquisitions (with the range, or the interquartile range).",
            )
            appendLine()
            appendLine(
                "| implementation | statements sent | round trips | transactions | statements run inside them " +
                    "| WAL bytes: median (range) | server CPU µs: median (IQR) |\n|---|---:|---:|---:|---:|---|---|",
            )
            for (impl in impls) {
                val c = costs.getValue(impl)
                appendLine(
                    "| $impl | ${f2(median(c.map { it.statements }))} | ${f2(median(c.map { it.roundTrips }))} " +
                        "| ${f2(median(c.map { it.transactions }))} | ${f2(median(c.map { it.nested }))} " +
                        "| ${withRange(c.map { it.walBytes }, "%.0f")} | ${withIqr(c.map { it.cpuMicros }, "%.1f")} |",
                )
            }
            appendLine()
            appendLine("Ours / peer, server CPU per uncontended acquisition, paired by round (each round runs every implementation once, in a turning order, on one server):")
            appendLine()
            appendLine("| pair | per-round ratio: median (IQR) | mean ± 95% |\n|---|---|---|")
            for ((a, b) in pairs) {
                val r = Rounds.ratios(costs.getValue(a).map { it.cpuMicros }, costs.getValue(b).map { it.cpuMicros })
                appendLine("| $a / $b | ${withIqr(r, "%.3f")} | ${"%.3f ± %.3f".format(Locale.ROOT, r.average(), Rounds.halfWidth95(r))} |")
            }
            appendLine()
            appendLine("Statements sent per uncontended acquisition, as the driver sent them (the median over the rounds):")
            appendLine()
            for (impl in impls) appendLine("- $impl: ${statements(costs.getValue(impl))}")
            appendLine()
            appendLine(
                "Ours on Redis (`oursRedis`, `oursRedisLock`) sends 2 commands per uncontended acquisition, one round trip " +
                    "each; what they cost its server: [Redis, commands and fairness](#redis-commands-and-fairness).",
            )
        }
    }

    private fun contended(meter: Meter, url: String, settings: Settings): String {
        progress("contended: $CLIENTS clients x $WORKERS workers x ${settings.cycles} cycles")
        val rows = mutableListOf<Triple<String, Int, Cost>>()
        for (impl in impls) {
            for (permits in if (impl == "ours" || impl == "advisory") listOf(1, 8) else listOf(1)) {
                val clients = (1..CLIENTS).map { postgresPeer(url, impl, "cost-contended-$impl-$permits", permits) }
                try {
                    val both = { cycles: Int ->
                        val threads = clients.map { p -> Thread { p.contended(WORKERS, cycles) }.apply { start() } }
                        threads.forEach { it.join() }
                    }
                    both(1) // opens the connections the clients open under contention, creates the semaphore
                    rows += Triple(impl, permits, meter.measure(CLIENTS * WORKERS * settings.cycles) { both(settings.cycles) })
                } finally {
                    clients.forEach { it.close() }
                }
            }
        }
        return buildString {
            appendLine(
                "Server cost per acquisition under contention: $CLIENTS clients (each with its own pool or connections, as two " +
                    "processes have) x $WORKERS workers x ${settings.cycles} cycles on one semaphore.",
            )
            appendLine()
            appendLine(
                "| implementation | permits | statements sent | round trips | transactions | statements run inside them " +
                    "| WAL bytes | server CPU µs |\n|---|---:|---:|---:|---:|---:|---:|---:|",
            )
            for ((impl, permits, c) in rows) {
                appendLine(
                    "| $impl | $permits | ${f2(c.statements)} | ${f2(c.roundTrips)} | ${f2(c.transactions)} | ${f2(c.nested)} " +
                        "| ${"%.0f".format(Locale.ROOT, c.walBytes)} | ${"%.1f".format(Locale.ROOT, c.cpuMicros)} |",
                )
            }
            appendLine()
            appendLine("Statements sent per acquisition under contention:")
            appendLine()
            for ((impl, permits, c) in rows) appendLine("- $impl, $permits permit${if (permits > 1) "s" else ""}: ${statements(listOf(c))}")
        }
    }

    /** The statements sent per acquisition, by text: the median over [costs] of each. */
    private fun statements(costs: List<Cost>): String {
        val texts = costs.flatMap { it.bySql.keys }.toSortedSet()
        return texts.joinToString("; ") { t ->
            val shown = if (t.length > 90) t.take(87) + "..." else t
            "`${shown.replace("`", "'")}` ${f2(median(costs.map { it.bySql[t] ?: 0.0 }))}"
        }
    }

    private fun order(round: Int): List<String> = Rounds.order(round, impls.size).map { impls[it] }

    private fun median(v: List<Double>) = Rounds.median(v)

    private fun f2(v: Double) = "%.2f".format(Locale.ROOT, v)

    private fun withIqr(v: List<Double>, format: String) =
        "$format ($format-$format)".format(Locale.ROOT, Rounds.median(v), Rounds.quantile(v, 0.25), Rounds.quantile(v, 0.75))

    private fun withRange(v: List<Double>, format: String) =
        "$format ($format-$format)".format(Locale.ROOT, Rounds.median(v), v.min(), v.max())

    private fun progress(what: String) = System.err.println("PostgresPeersReport: $what")
}

/**
 * A relay on a free loopback port to a PostgreSQL server on [targetPort] that reads the protocol (version 3, without SSL
 * or GSS encryption: connect with `sslmode=disable&gssEncMode=disable`) as it passes, and counts what its clients send:
 * statements (each Execute, and each simple Query), round trips (each message sent while no answer is owed: a client that
 * pipelines several Syncs before it reads their answers makes one round trip of them), transactions (each
 * ReadyForQuery that ends a transaction block, or that ends, outside one, a round trip that ran a statement), and the
 * statements by their text (a prepared statement's text from its Parse, through its Bind).
 */
class ProtocolCounter(private val targetPort: Int) : AutoCloseable {
    private val listener = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    val port: Int = listener.localPort
    private val sockets = CopyOnWriteArrayList<Socket>()
    private val statements = AtomicLong()
    private val roundTrips = AtomicLong()
    private val transactions = AtomicLong()
    private val bySql = ConcurrentHashMap<String, AtomicLong>()

    /** The counts so far. */
    class Reading(val statements: Long, val roundTrips: Long, val transactions: Long, val bySql: Map<String, Long>)

    fun reading() = Reading(statements.get(), roundTrips.get(), transactions.get(), bySql.mapValues { it.value.get() })

    /** What the relay knows of one connection. */
    private class Session {
        val prepared = HashMap<String, String>() // statement name -> text (client side only)
        val portals = HashMap<String, String>() // portal name -> statement name (client side only)
        val ranSinceReady = AtomicInteger() // statements sent since the last ReadyForQuery
        val owed = AtomicInteger() // ReadyForQuery messages the client waits for (a Sync or a simple Query each)
        @Volatile var sending = false // a round trip has begun: the client sent, and has not yet had every answer owed
        var status = 'I' // the last ReadyForQuery's transaction status (server side only)
    }

    init {
        Thread {
            while (!listener.isClosed) {
                val client = runCatching { listener.accept() }.getOrNull() ?: break
                val upstream = Socket(InetAddress.getLoopbackAddress(), targetPort)
                client.tcpNoDelay = true
                upstream.tcpNoDelay = true
                sockets += client
                sockets += upstream
                val session = Session()
                pump(client, upstream) { input, output -> fromClient(input, output, session) }
                pump(upstream, client) { input, output -> fromServer(input, output, session) }
            }
        }.apply { isDaemon = true; name = "protocol-counter"; start() }
    }

    private fun pump(from: Socket, to: Socket, relay: (DataInputStream, DataOutputStream) -> Unit) {
        Thread {
            try {
                relay(DataInputStream(BufferedInputStream(from.getInputStream())), DataOutputStream(BufferedOutputStream(to.getOutputStream())))
            } catch (_: EOFException) {
            } catch (_: java.io.IOException) {
            } finally {
                runCatching { from.close() }
                runCatching { to.close() }
                sockets -= from
                sockets -= to
            }
        }.apply { isDaemon = true; start() }
    }

    private fun fromClient(input: DataInputStream, output: DataOutputStream, session: Session) {
        // The startup message has no type byte: length, then the protocol version (3.0).
        val length = input.readInt()
        val startup = ByteArray(length - 4).also { input.readFully(it) }
        val code = java.nio.ByteBuffer.wrap(startup).int
        check(code != 80877103 && code != 80877104) { "an SSL or GSS request: connect with sslmode=disable&gssEncMode=disable" }
        output.writeInt(length)
        output.write(startup)
        output.flush()
        if (code != 196608) return // a CancelRequest (80877102): nothing follows
        while (true) {
            val type = input.read()
            if (type < 0) return
            val body = ByteArray(input.readInt() - 4).also { input.readFully(it) }
            // A round trip begins with a message sent while the client waits for no answer (pipelined ones do not wait).
            if (!session.sending && type.toChar() != 'X') {
                session.sending = true
                roundTrips.incrementAndGet()
            }
            when (type.toChar()) {
                'Q' -> {
                    count(cString(body, 0))
                    session.owed.incrementAndGet()
                }
                'P' -> {
                    val name = cString(body, 0)
                    session.prepared[name] = cString(body, name.toByteArray().size + 1)
                }
                'B' -> {
                    val portal = cString(body, 0)
                    session.portals[portal] = cString(body, portal.toByteArray().size + 1)
                }
                'E' -> count(session.prepared[session.portals[cString(body, 0)]] ?: "(unknown statement)")
                'S' -> session.owed.incrementAndGet()
            }
            if (type.toChar() == 'Q' || type.toChar() == 'E') session.ranSinceReady.incrementAndGet()
            output.write(type)
            output.writeInt(body.size + 4)
            output.write(body)
            if (input.available() == 0) output.flush()
        }
    }

    private fun fromServer(input: DataInputStream, output: DataOutputStream, session: Session) {
        while (true) {
            val type = input.read()
            if (type < 0) return
            val body = ByteArray(input.readInt() - 4).also { input.readFully(it) }
            if (type.toChar() == 'Z') {
                val status = body[0].toInt().toChar()
                val ran = session.ranSinceReady.getAndSet(0)
                if (status == 'I' && (session.status != 'I' || ran > 0)) transactions.incrementAndGet()
                session.status = status
                // The first, after the startup, answers no Sync.
                if (session.owed.updateAndGet { maxOf(0, it - 1) } == 0) session.sending = false
            }
            output.write(type)
            output.writeInt(body.size + 4)
            output.write(body)
            if (input.available() == 0) output.flush()
        }
    }

    private fun count(sql: String) {
        statements.incrementAndGet()
        bySql.computeIfAbsent(sql.replace(Regex("\\s+"), " ").trim()) { AtomicLong() }.incrementAndGet()
    }

    /** The NUL-terminated UTF-8 string of [body] at [from]. */
    private fun cString(body: ByteArray, from: Int): String {
        var end = from
        while (end < body.size && body[end] != 0.toByte()) end++
        return String(body, from, end - from, Charsets.UTF_8)
    }

    override fun close() {
        listener.close()
        sockets.forEach { runCatching { it.close() } }
    }
}
