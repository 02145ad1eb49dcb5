package dev.semaphore.postgres

import java.io.File
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.file.Files
import java.util.concurrent.TimeUnit

/**
 * A real PgBouncer process (Debian's `pgbouncer`, which `.ci/run` installs) on a free loopback port, in front of
 * [server]'s database `postgres`, in transaction pooling mode with [poolSize] server connections: each transaction of
 * a client goes to whichever server connection is free, so anything a session keeps (prepared statements, LISTEN)
 * does not follow the client. Run as root, it runs as the user `postgres`, as the server does.
 */
class LocalPgBouncer(server: LocalPostgresServer, poolSize: Int = 2) : AutoCloseable {
    private val dir: File = Files.createTempDirectory("pgbouncer-test").toFile()
    val port: Int = ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { it.localPort }

    /** A JDBC URL through the pooler; [prepareThreshold] 0 turns off pgjdbc's server-side prepared statements. */
    fun url(prepareThreshold: Int = 0): String =
        "jdbc:postgresql://127.0.0.1:$port/postgres?user=postgres&prepareThreshold=$prepareThreshold"

    private val process: Process

    init {
        File(dir, "userlist.txt").writeText("\"postgres\" \"\"\n")
        File(dir, "pgbouncer.ini").writeText(
            """
            [databases]
            postgres = host=127.0.0.1 port=${server.port} dbname=postgres user=postgres

            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = $port
            unix_socket_dir =
            auth_type = trust
            auth_file = ${File(dir, "userlist.txt").path}
            pool_mode = transaction
            default_pool_size = $poolSize
            max_client_conn = 200
            ignore_startup_parameters = extra_float_digits,options
            logfile = ${File(dir, "pgbouncer.log").path}
            """.trimIndent() + "\n",
        )
        if (isRoot) check(ProcessBuilder("chown", "-R", "postgres:", dir.path).start().waitFor() == 0) { "chown of $dir failed" }
        val command = listOf(binary, File(dir, "pgbouncer.ini").path)
        process = ProcessBuilder(
            if (isRoot) listOf("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--") + command else command,
        ).redirectErrorStream(true).redirectOutput(File(dir, "stdout.log")).start()
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20)
        while (true) {
            if (!process.isAlive) error("pgbouncer exited at start: ${File(dir, "stdout.log").readText()}")
            if (runCatching { Socket(InetAddress.getLoopbackAddress(), port).close() }.isSuccess) break
            check(System.nanoTime() < deadline) { "pgbouncer did not listen on port $port within 20 s" }
            Thread.sleep(20)
        }
    }

    override fun close() {
        process.destroy()
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
        dir.deleteRecursively()
    }

    companion object {
        private val isRoot: Boolean = System.getProperty("user.name") == "root"

        /** `$PGBOUNCER` if set, else Debian's `/usr/sbin/pgbouncer`, else `pgbouncer` on the PATH. */
        val binary: String by lazy {
            System.getenv("PGBOUNCER")
                ?: listOf("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer").firstOrNull { File(it).canExecute() }
                ?: System.getenv("PATH").orEmpty().split(File.pathSeparator).map { File(it, "pgbouncer") }
                    .firstOrNull { it.canExecute() }?.path
                ?: error("no pgbouncer found: install Debian's pgbouncer package (as .ci/run does), or set PGBOUNCER")
        }
    }
}
