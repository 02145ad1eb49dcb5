package dev.semaphore.testing

import java.io.File
import java.io.IOException
import java.net.URLClassLoader
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * A JVM running [mainClass] with [args] on this JVM's class path (the tests', or the one `mvn exec:java` made), as the
 * multi-process tests, the fault harness and the distributed demo start their workers. Its stdout lines are collected
 * as they come ([lines], [next]); its stderr goes to a file, shown when an expected line does not come.
 */
open class JvmProcess(mainClass: String, args: List<String>, jvmOptions: List<String> = listOf("-Xmx256m")) : AutoCloseable {
    private val errors: File = File.createTempFile("jvm-process-", ".err")
    val process: Process = ProcessBuilder(
        listOf(File(System.getProperty("java.home"), "bin/java").path) + jvmOptions + listOf("-cp", classPath(), mainClass) + args,
    ).redirectError(errors).start()
    val lines = LinkedBlockingQueue<String>()
    val pid: Long get() = process.pid()

    @Volatile
    private var closing = false

    init {
        Thread {
            try {
                process.inputStream.bufferedReader().forEachLine { lines.add(it) }
            } catch (e: IOException) {
                // close() destroys the process, and the JDK then closes its stdout under a blocked read ("Stream
                // closed"): expected there; anywhere else a real failure. (Uncaught, it failed the distributed demo's
                // `mvn exec:java` once in CI, after the demo had passed: exec:java fails on any uncaught exception.)
                if (!closing) throw e
            }
        }.apply { isDaemon = true }.start()
    }

    /** The next line starting with [prefix] (lines before it are dropped), waiting at most [seconds]. */
    fun next(prefix: String, seconds: Long = 60): String {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
        while (true) {
            val left = deadline - System.nanoTime()
            val line = lines.poll(maxOf(left, 0), TimeUnit.NANOSECONDS)
                ?: error("no \"$prefix\" line from the worker within $seconds s; its stderr: ${errors.readText().take(4000)}")
            if (line.startsWith(prefix)) return line
        }
    }

    fun exitCode(seconds: Long = 60): Int {
        check(process.waitFor(seconds, TimeUnit.SECONDS)) { "the worker did not exit within $seconds s" }
        return process.exitValue()
    }

    /** Sends [signal] (e.g. "STOP", "CONT", "KILL") to the process. */
    fun signal(signal: String) {
        check(ProcessBuilder("kill", "-$signal", "$pid").start().waitFor() == 0) { "kill -$signal $pid failed" }
    }

    fun stderr(): String = errors.readText()

    override fun close() {
        closing = true
        process.destroyForcibly().waitFor()
        errors.delete()
    }

    companion object {
        /** The class path of the class loader that `mvn exec:java` made (for the demo), else this JVM's. */
        fun classPath(): String {
            val loader = Thread.currentThread().contextClassLoader
            if (loader is URLClassLoader && loader.urLs.isNotEmpty()) {
                return loader.urLs.joinToString(File.pathSeparator) { File(it.toURI()).path }
            }
            return System.getProperty("java.class.path")
        }
    }
}
