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
 */
class LocalPostgresServer private constructor() : AutoCloseable {
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

    private fun launch() {
        process = ProcessBuilder(
            asServerUser(
                File(bin, "postgres").path, "-D", data.path, "-p", "$port", "-k", dir.path,
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=100",
                "-c", "shared_buffers=32MB", "-c", "log_min_messages=fatal",
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

    /** Runs [sql] on a connection of its own. */
    fun execute(sql: String) {
        connect().use { c -> c.createStatement().use { it.execute(sql) } }
    }

    /**
     * `kill -9` of the server: the postmaster and every backend at once, as a crash of its machine would end them (a
     * postmaster killed alone leaves backends that a new one must wait for).
     */
    fun kill() {
        process?.let { p ->
            val all = listOf(p.pid()) + p.toHandle().descendants().map { it.pid() }.toList()
            ProcessBuilder(listOf("kill", "-9") + all.map { "$it" }).start().waitFor()
            p.waitFor(30, TimeUnit.SECONDS)
            for (pid in all) ProcessHandle.of(pid).ifPresent { it.onExit().get(30, TimeUnit.SECONDS) }
        }
    }

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

        fun start(): LocalPostgresServer = LocalPostgresServer().apply {
            init()
            launch()
        }

        private fun freePort(): Int = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
    }
}
