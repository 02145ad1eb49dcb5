package dev.semaphore.redis


import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/**
 * A real `redis-server` process on a free loopback port (never 6379), for the tests and the demo.
 * The binary: `$REDIS_SERVER` if set, else `redis-server` on the PATH (Debian's, in CI), else the
 * linux-amd64 build that the `embedded-redis` artifact ships (6.2), extracted to a temporary file.
 * Nothing is skipped when none is found: [start] fails and says how to get one.
 *
 * [kill] is `kill -9`; [restart] starts a new process on the same port and directory, so with
 * [appendOnly] the data survives (AOF, fsync always) and without it it is gone.
 */
class LocalRedisServer private constructor(
    appendOnly: Boolean,
    private var replicaOf: LocalRedisServer? = null,
    private val cluster: Boolean = false,
) : AutoCloseable {
    /** Whether it persists every write (AOF, fsync always), so that [restart] keeps its data. */
    var appendOnly: Boolean = appendOnly
        private set

    val dir: File = Files.createTempDirectory("redis-test").toFile()
    val port: Int = if (cluster) freeClusterPort() else freePort()
    val uri: String get() = "redis://127.0.0.1:$port"
    private var process: Process? = null

    val pid: Long get() = process!!.pid()

    private fun launch() {
        val args = mutableListOf(
            binary.path, "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--dir", dir.path,
            "--appendonly", if (appendOnly) "yes" else "no", "--appendfsync", "always",
            "--logfile", File(dir, "redis.log").path,
            "--repl-diskless-sync-delay", "0", // a replica's first synchronization starts at once, not after 5 s
        )
        if (majorVersion >= 7) args += listOf("--enable-debug-command", "local")
        replicaOf?.let { master -> args += listOf("--replicaof", "127.0.0.1", "${master.port}") }
        if (cluster) args += listOf("--cluster-enabled", "yes", "--cluster-config-file", File(dir, "nodes.conf").path)
        process = ProcessBuilder(args).redirectErrorStream(true).redirectOutput(File(dir, "stdout.log")).start()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
        while (System.nanoTime() < deadline) {
            if (!process!!.isAlive) error("redis-server exited at start: ${File(dir, "redis.log").readTextOrEmpty()}")
            if (runCatching { command("PING") }.getOrNull() == "+PONG") return
            Thread.sleep(20)
        }
        error("redis-server did not answer PING on port $port within 20 s")
    }

    /** Sends one command and returns the first line of the reply as sent (e.g. "+OK", ":3"). */
    fun command(vararg words: String): String = exchange(words) { it.readLine() }

    /** Sends one command and returns the reply's values, arrays flattened (a bulk string whole). */
    fun reply(vararg words: String): List<String> = exchange(words) { input ->
        val values = mutableListOf<String>()
        fun read() {
            val line = input.readLine()
            when (line[0]) {
                '*' -> repeat(line.substring(1).toInt()) { read() }
                '$' -> {
                    val length = line.substring(1).toInt()
                    if (length >= 0) {
                        val chars = CharArray(length + 2)
                        var n = 0
                        while (n < chars.size) n += input.read(chars, n, chars.size - n)
                        values += String(chars, 0, length)
                    }
                }
                else -> values += line.substring(1)
            }
        }
        read()
        values
    }

    private fun <T> exchange(words: Array<out String>, read: (java.io.BufferedReader) -> T): T =
        Socket(InetAddress.getLoopbackAddress(), port).use { s ->
            s.soTimeout = 30_000
            val out = s.getOutputStream()
            val sb = StringBuilder("*${words.size}\r\n")
            for (w in words) sb.append("$").append(w.toByteArray().size).append("\r\n").append(w).append("\r\n")
            out.write(sb.toString().toByteArray())
            out.flush()
            read(s.getInputStream().bufferedReader())
        }

    /** `kill -STOP` (true) or `kill -CONT` (false) of the server process. */
    fun pause(paused: Boolean) {
        val signal = if (paused) "-STOP" else "-CONT"
        check(ProcessBuilder("kill", signal, "$pid").inheritIO().start().waitFor() == 0) { "kill $signal $pid failed" }
    }

    /** `kill -9` of the server process. */
    fun kill() {
        process?.destroyForcibly()?.waitFor()
    }

    /**
     * Makes this replica a master (`REPLICAOF NO ONE`), as a failover does, with AOF on (fsync always) once its first
     * rewrite is done, so that a later [restart] starts it as a master that kept its data.
     */
    fun promote() {
        check(command("REPLICAOF", "NO", "ONE") == "+OK") { "REPLICAOF NO ONE failed on port $port" }
        replicaOf = null
        check(command("CONFIG", "SET", "appendonly", "yes") == "+OK") { "CONFIG SET appendonly yes failed on port $port" }
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
        while (true) {
            val info = reply("INFO", "persistence").single()
            if ("aof_enabled:1" in info && "aof_rewrite_in_progress:0" in info && "aof_rewrite_scheduled:0" in info) break
            check(System.nanoTime() < deadline) { "the AOF of port $port was not written within 20 s" }
            Thread.sleep(10)
        }
        appendOnly = true
    }

    /** Starts the server again on the same port and directory (after [kill]). */
    fun restart() {
        kill()
        launch()
    }

    override fun close() {
        kill()
        dir.deleteRecursively()
    }

    companion object {
        private const val EMBEDDED = "/redis-server-6.2.6-v5-linux-amd64"

        val binary: File by lazy { findBinary() }

        /** The server's major version, from `redis-server --version`. */
        val majorVersion: Int by lazy {
            val out = ProcessBuilder(binary.path, "--version").redirectErrorStream(true).start()
                .inputStream.bufferedReader().readText()
            Regex("v=(\\d+)\\.").find(out)?.groupValues?.get(1)?.toInt() ?: error("cannot read the version of ${binary.path}: $out")
        }

        @JvmOverloads
        fun start(appendOnly: Boolean = false, cluster: Boolean = false): LocalRedisServer =
            LocalRedisServer(appendOnly, cluster = cluster).also { it.launch() }

        /**
         * A replica of [master] (`--replicaof`), once it has acknowledged a write made after it joined.
         * (After its first synchronization, Redis 7 streams writes to a replica only once it has sent its
         * first ACK, which it does once a second: a `WAIT` made before that counts it out.) The write is made
         * once the master lists the replica online: one made before goes in the first synchronization, not in the
         * stream the replica acknowledges, and on a master that never had a replica it leaves the stream's offset
         * at 0, so the wait would last until the master's next ping of its replicas (every 10 s).
         */
        fun startReplica(master: LocalRedisServer): LocalRedisServer = LocalRedisServer(false, replicaOf = master).also { replica ->
            replica.launch()
            val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
            var wrote = false
            while (true) {
                val info = master.reply("INFO", "replication").single()
                val written = Regex("master_repl_offset:(\\d+)").find(info)!!.groupValues[1].toLong()
                val acked = Regex("port=${replica.port},state=online,offset=(\\d+)").find(info)?.groupValues?.get(1)?.toLong()
                if (wrote && acked != null && acked >= written) break
                if (!wrote && acked != null) {
                    master.command("SET", "test:replica-joined", "${replica.port}")
                    wrote = true
                    continue
                }
                check(System.nanoTime() < deadline) { "the replica on port ${replica.port} did not synchronize within 20 s" }
                Thread.sleep(20)
            }
        }

        private fun findBinary(): File {
            System.getenv("REDIS_SERVER")?.let { return File(it) }
            System.getenv("PATH").orEmpty().split(File.pathSeparator).map { File(it, "redis-server") }
                .firstOrNull { it.canExecute() }?.let { return it }
            val embedded = LocalRedisServer::class.java.getResourceAsStream(EMBEDDED)
                ?: error(
                    "no redis-server: set REDIS_SERVER, install one (apt-get install redis-server), " +
                        "or keep com.github.codemonstur:embedded-redis on the test class path",
                )
            val file = File.createTempFile("redis-server-", "")
            file.deleteOnExit()
            embedded.use { input -> file.outputStream().use { input.copyTo(it) } }
            check(file.setExecutable(true)) { "cannot make $file executable" }
            return file
        }

        private fun freePort(): Int {
            while (true) {
                val port = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }
                if (port != 6379) return port
            }
        }

        /** A free port whose cluster bus port (the port + 10,000, as Redis 6.2 fixes it) is free too. */
        private fun freeClusterPort(): Int {
            while (true) {
                val port = java.util.concurrent.ThreadLocalRandom.current().nextInt(20000, 30000)
                val free = listOf(port, port + 10000).all { p ->
                    runCatching { ServerSocket(p, 1, InetAddress.getLoopbackAddress()).close() }.isSuccess
                }
                if (free) return port
            }
        }

        private fun File.readTextOrEmpty() = if (exists()) readText() else ""
    }
}
