package dev.semaphore.postgres

import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.nio.file.Files
import java.sql.Connection
import java.sql.DriverManager
import java.util.concurrent.TimeUnit

/**
 * A real PostgreSQL server process on a free loopback port, in its own data directory, for the tests: `initdb`, then
 * `postgres` itself (so [kill] is a `kill -9` of the postmaster). The binaries: `$PG_BIN` if set, else the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian's packages: `.ci/run` installs them), else `postgres` on the PATH.
 * Nothing is skipped when none is found: [start] fails and says how to get one. Run as root, the server runs as the
 * user `postgres` (PostgreSQL refuses root), through `setpriv`.
 *
 * fsync is off (a crash of the process loses nothing the kernel has; a crash of the machine is not tested), and
 * commits are synchronous, so a `kill -9` and [restart] keep every committed transaction.
 *
 * A standby ([startStandby]) is a `pg_basebackup` of its primary that streams the primary's WAL under the name
 * [standbyName], through a port of the caller's choice (a [TcpRelay] to the primary, to cut the two apart); a
 * primary started with `synchronous_standby_names` set to that name commits only once the standby has the commit.
 * [promote] makes a standby a primary.
 */
class LocalPostgresServer private constructor(
    private val settings: List<String>,
    private val primary: LocalPostgresServer? = null,
    val standbyName: String? = null,
    /** The port a standby streams from: its primary's, or a relay's. */
    private val primaryPort: Int = 0,
) : AutoCloseable {
    val dir: File = Files.createTempDirectory("postgres-test").toFile()
    private val data = File(dir, "data")
    val port: Int = freePort()
    val url: String get() = "jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres"
    private var process: Process? = null

    val pid: Long get() = process!!.pid()

    private fun asServerUser(vararg command: String): List<String> =
        if (isRoot) listOf("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *command) else command.toList()

    private fun init() {
        if (isRoot) {
            check(ProcessBuilder("chown", "-R", "postgres:", dir.path).start().waitFor() == 0) { "chown of $dir failed" }
        }
        val log = File(dir, "initdb.log")
        val initdb = ProcessBuilder(
            asServerUser(File(bin, "initdb").path, "-D", data.path, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "-N"),
        ).redirectErrorStream(true).redirectOutput(log).start()
        check(initdb.waitFor(60, TimeUnit.SECONDS) && initdb.exitValue() == 0) { "initdb failed: ${log.readText()}" }
    }

    /** A standby's data directory: a base backup of [primary], with standby.signal (-R). */
    private fun backUp(primary: LocalPostgresServer) {
        if (isRoot) {
            check(ProcessBuilder("chown", "-R", "postgres:", dir.path).start().waitFor() == 0) { "chown of $dir failed" }
        }
        val log = File(dir, "basebackup.log")
        val backup = ProcessBuilder(
            asServerUser(
                File(bin, "pg_basebackup").path, "-h", "127.0.0.1", "-p", "${primary.port}", "-U", "postgres",
                "-D", data.path, "-R", "-X", "stream", "--no-sync", "-c", "fast",
            ),
        ).redirectErrorStream(true).redirectOutput(log).start()
        check(backup.waitFor(60, TimeUnit.SECONDS) && backup.exitValue() == 0) { "pg_basebackup failed: ${log.readText()}" }
    }

    private fun launch() {
        val replication = primary?.let {
            listOf("-c", "primary_conninfo=host=127.0.0.1 port=$primaryPort user=postgres application_name=$standbyName")
        }.orEmpty()
        process = ProcessBuilder(
            asServerUser(
                File(bin, "postgres").path, "-D", data.path, "-p", "$port", "-k", dir.path,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100",
                "-c", "shared_buffers=32MB", "-c", "log_min_messages=fatal", "-c", "wal_receiver_status_interval=1s",
                *replication.toTypedArray(), *settings.flatMap { listOf("-c", it) }.toTypedArray(),
            ),
        ).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(File(dir, "server.log"))).start()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (System.nanoTime() < deadline) {
            if (!process!!.isAlive) error("postgres exited at start: ${File(dir, "server.log").readText().takeLast(4000)}")
            if (runCatching { connect().close() }.isSuccess) return
            Thread.sleep(20)
        }
        error("postgres did not accept connections on port $port within 30 s")
    }

    /** A new connection, autocommit on. */
    fun connect(): Connection = DriverManager.getConnection(url)

    /** The first column of the first row of [sql]'s answer, as text (null if none). */
    fun query(sql: String): String? = connect().use { c ->
        c.createStatement().use { st -> st.executeQuery(sql).use { rs -> if (rs.next()) rs.getString(1) else null } }
    }

    /** Makes this standby a primary, and waits until it is one (it then takes writes). */
    fun promote() {
        check(query("SELECT pg_promote(true, 60)") == "t") { "the standby on port $port was not promoted within 60 s" }
    }

    /** Waits until standby [name] streams from this primary as a synchronous standby ([sync]) or at all. */
    fun awaitStandby(name: String, sync: Boolean) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (System.nanoTime() < deadline) {
            val state = query("SELECT sync_state FROM pg_stat_replication WHERE application_name = '$name' AND state = 'streaming'")
            if (state != null && (!sync || state == "sync")) return
            Thread.sleep(20)
        }
        error("standby $name did not stream from port $port within 30 s")
    }

    /** Waits until [standby] has replayed everything this primary wrote so far. */
    fun awaitReplayedBy(standby: LocalPostgresServer) {
        val lsn = query("SELECT pg_current_wal_lsn()")
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (System.nanoTime() < deadline) {
            if (standby.query("SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn") == "t") return
            Thread.sleep(20)
        }
        error("the standby on port ${standby.port} did not replay up to $lsn within 30 s")
    }

    /** Runs [sql] on a connection of its own. */
    fun execute(sql: String) {
        connect().use { c -> c.createStatement().use { it.execute(sql) } }
    }

    /**
     * `kill -9` of the server: the postmaster and every backend at once, as a crash of its machine would end them (a
     * postmaster killed alone leaves backends that a new one must wait for). The postmaster is stopped (SIGSTOP)
     * before its children are listed, so that no backend forked between the listing and the kill outlives it: such a
     * backend keeps the old shared memory attached, and the next [launch] then refuses to start ("pre-existing shared
     * memory block is still in use"). Any process still working in the data directory after that is killed too.
     */
    fun kill() {
        process?.let { p ->
            signal("STOP", listOf(p.pid()))
            awaitState(listOf(p.pid()), "stopped") { it == 'T' || it == 't' || it == 'Z' }
            val all = listOf(p.pid()) + p.toHandle().descendants().map { it.pid() }.toList()
            signal("KILL", all)
            p.waitFor(30, TimeUnit.SECONDS)
            // Gone, or a zombie (it holds no shared memory any more; its new parent reaps it when it will).
            awaitState(all, "ended") { it == 'Z' }
            // And any process of this server that escaped the listing all the same (every one works in the data
            // directory): the next postmaster refuses to start while one of them is alive.
            val strays = processesIn(data)
            if (strays.isNotEmpty()) {
                signal("KILL", strays)
                awaitState(strays, "ended") { it == 'Z' }
            }
        }
    }

    /** The processes whose working directory is [dir] (those this user may inspect), zombies left out. */
    private fun processesIn(dir: File): List<Long> {
        val target = dir.canonicalFile.toPath()
        return File("/proc").listFiles { f -> f.name.all(Char::isDigit) }.orEmpty().mapNotNull { f ->
            val cwd = runCatching { Files.readSymbolicLink(File(f, "cwd").toPath()) }.getOrNull()
            f.name.toLong().takeIf { cwd == target && state(it).let { s -> s != null && s != 'Z' } }
        }
    }

    private fun signal(name: String, pids: List<Long>) {
        ProcessBuilder(listOf("kill", "-$name") + pids.map { "$it" }).start().waitFor()
    }

    /** Waits until each of [pids] has ended or is in a state that [reached] accepts (the letter of /proc/<pid>/stat). */
    private fun awaitState(pids: List<Long>, what: String, reached: (Char) -> Boolean) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
        while (pids.any { pid -> state(pid)?.let { !reached(it) } ?: false }) {
            check(System.nanoTime() < deadline) { "the server's processes $pids were not $what within 30 s" }
            Thread.sleep(5)
        }
    }

    /** The state letter of process [pid], or null once it has no /proc entry. */
    private fun state(pid: Long): Char? =
        runCatching { File("/proc/$pid/stat").readText() }.getOrNull()?.substringAfterLast(") ")?.firstOrNull()

    /** Kills it (`kill -9`) and starts it again on the same port and data directory: crash recovery keeps every commit. */
    fun restart() {
        kill()
        launch()
    }

    /** Stops the server (SIGINT: a fast shutdown, which ends its sessions) and removes its directory. */
    override fun close() {
        runCatching { Runtime.getRuntime().removeShutdownHook(stopAtExit) }
        stop()
        dir.deleteRecursively()
    }

    private fun stop() {
        process?.let { p ->
            ProcessBuilder("kill", "-INT", "${p.pid()}").start().waitFor()
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                ProcessBuilder("kill", "-9", "${p.pid()}").start().waitFor()
                p.waitFor(10, TimeUnit.SECONDS)
            }
        }
    }

    /** A test JVM that ends without [close] (a failed spec, a timeout) stops its servers all the same. */
    private val stopAtExit = Thread { runCatching { stop() } }.also { Runtime.getRuntime().addShutdownHook(it) }

    companion object {
        private val isRoot: Boolean = System.getProperty("user.name") == "root"

        /** The directory of `initdb` and `postgres`. */
        val bin: File by lazy {
            System.getenv("PG_BIN")?.let { return@lazy File(it) }
            val debian = File("/usr/lib/postgresql").listFiles { f -> File(f, "bin/postgres").canExecute() }
                ?.maxByOrNull { it.name.toIntOrNull() ?: 0 }
            if (debian != null) return@lazy File(debian, "bin")
            System.getenv("PATH").orEmpty().split(File.pathSeparator).map(::File)
                .firstOrNull { File(it, "postgres").canExecute() && File(it, "initdb").canExecute() }
                ?: error(
                    "no PostgreSQL server binaries found: install Debian's postgresql package (as .ci/run does), or set " +
                        "PG_BIN to the directory of initdb and postgres",
                )
        }

        /** A new server with [settings] ("name=value", passed as -c). */
        fun start(vararg settings: String): LocalPostgresServer = LocalPostgresServer(settings.toList()).apply {
            init()
            launch()
        }

        /**
         * A standby of [primary], streaming under [name] through [port] (the primary's, or a [TcpRelay]'s to it): a
         * base backup, then a server that replays the WAL it receives.
         */
        fun startStandby(primary: LocalPostgresServer, name: String, port: Int = primary.port): LocalPostgresServer =
            LocalPostgresServer(emptyList(), primary, name, port).apply {
                backUp(primary)
                launch()
            }

        private fun freePort(): Int = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
    }
}
