/*
 * The check that semaphore-core's src/main/kotlin is common Kotlin: it compiles, with the Kotlin
 * compiler's metadata (common) compiler of the project's Kotlin version, for the common platform, the
 * one every Kotlin target shares, against nothing but
 * - the common part of the standard library (kotlin-stdlib's common klib),
 * - the common part of kotlinx.coroutines (the commonMain klib in kotlinx-coroutines-core's root
 *   artifact: not its concurrentMain, which is JVM and Native only, nor its JVM jar),
 * - and the `expect` declarations in semaphore-core/src/commonExpect: what src/main uses from src/jvmMain,
 *   written down with only the members it touches.
 * So a use in src/main of a JVM-only type or function (java.*, Thread, System, kotlinx.coroutines'
 * JVM-only API such as ThreadContextElement) is a compile error here, and this test fails with the
 * compiler's messages (file, line, what is unresolved). So are kotlin.jvm.Volatile and @Synchronized,
 * which the common standard library declares but deprecates at error level (they would do nothing on
 * other targets: src/main uses kotlin.concurrent.Volatile). The JVM annotations that only shape the JVM
 * API (@JvmOverloads, @JvmSynthetic, @JvmField, @JvmName) are common and allowed, imported explicitly
 * (kotlin.jvm is a default import on the JVM only).
 *
 * What it does not prove: that src/jvmMain could be written for another target (it is the JVM part),
 * nor that the `expect` declarations match src/jvmMain's signatures (only that each names a declaration
 * of src/jvmMain: [everyExpectedNameIsDeclaredInJvmMain]); the JVM build compiles src/main against
 * src/jvmMain itself. Nothing is generated for another target; the klib written goes to a temp directory.
 * The same compiler run also compiles a control file that calls both common API (of the standard
 * library and of kotlinx.coroutines) and a JVM-only function: [theCheckCanFail] asserts that exactly
 * the JVM-only call is an error, so that a class path that let the JVM's API in, or one that lost the
 * common klibs, would be noticed. One compiler run: 7 to 13 s measured in the api-checks JVM
 * (after CompileShapesTest loaded most of the compiler), on a shared 2-core machine.
 *
 * The klibs are copied to target/common-klibs by maven-dependency-plugin (this module's pom).
 */
package dev.semaphore.verification

import org.jetbrains.kotlin.cli.common.ExitCode
import org.jetbrains.kotlin.cli.metadata.KotlinMetadataCompiler
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.PrintStream
import java.nio.file.Files
import java.util.zip.ZipFile

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CommonKotlinTest {
    private val core = File(checkNotNull(System.getProperty("semaphore.rootDir")) { "semaphore.rootDir is not set" }, "semaphore-core")
    private val klibDir = File(checkNotNull(System.getProperty("semaphore.commonKlibs")) { "semaphore.commonKlibs is not set" })

    private lateinit var exit: ExitCode
    private lateinit var output: String

    /** The compiler's errors ("<path>:<line>:<column>: error: <message>"), those of the control file apart. */
    private lateinit var errors: List<String>
    private lateinit var controlErrors: List<String>

    private fun kotlinFiles(dir: File): List<File> =
        dir.walkTopDown().filter { it.isFile && it.name.endsWith(".kt") }.sortedBy { it.path }.toList()

    /** The klib of [jar]'s `commonMain` source set (both root artifacts hold one klib per shared source set). */
    private fun unpackCommonMain(jar: File, into: File): File {
        val dir = File(into, jar.name.removeSuffix(".jar") + "-commonMain")
        ZipFile(jar).use { zip ->
            for (e in zip.entries()) {
                if (e.isDirectory || !e.name.startsWith("commonMain/")) continue
                val out = File(dir, e.name.removePrefix("commonMain/"))
                out.parentFile.mkdirs()
                zip.getInputStream(e).use { input -> out.outputStream().use { input.copyTo(it) } }
            }
        }
        assertTrue(File(dir, "default/manifest").isFile, "no commonMain klib in $jar")
        return dir
    }

    @BeforeAll
    fun compile() {
        val main = kotlinFiles(File(core, "src/main/kotlin"))
        val expect = kotlinFiles(File(core, "src/commonExpect/kotlin"))
        assertTrue(main.size >= 10 && expect.isNotEmpty(), "sources not found under $core: $main $expect")
        val jars = klibDir.listFiles().orEmpty().sortedBy { it.name }
        assertTrue(
            jars.size == 2 && jars[0].name.startsWith("kotlin-stdlib-") && jars[1].name.startsWith("kotlinx-coroutines-core-"),
            "expected kotlin-stdlib's and kotlinx-coroutines-core's common metadata jars in $klibDir, found ${jars.map { it.name }}",
        )
        val tmp = Files.createTempDirectory("common-kotlin").toFile()
        try {
            val klibs = jars.map { unpackCommonMain(it, tmp) }
            val control = File(tmp, "control/$CONTROL").apply {
                parentFile.mkdirs()
                writeText(CONTROL_SOURCE)
            }
            val out = ByteArrayOutputStream()
            exit = KotlinMetadataCompiler().exec(
                PrintStream(out, true, Charsets.UTF_8),
                *(main + expect + control).map { it.path }.toTypedArray(),
                "-d", File(tmp, "klib").path,
                "-classpath", klibs.joinToString(File.pathSeparator) { it.path },
                "-module-name", "semaphore-core",
                "-Xmulti-platform",
                "-Xexpect-actual-classes",
                "-Xexplicit-api=strict",
            )
            output = out.toString(Charsets.UTF_8)
        } finally {
            tmp.deleteRecursively()
        }
        val all = output.lines().filter { ": error: " in it }
        controlErrors = all.filter { "/$CONTROL:" in it }
        errors = all - controlErrors.toSet()
    }

    @Test
    fun srcMainCompilesForTheCommonPlatform() {
        assertEquals(
            emptyList<String>(), errors,
            "semaphore-core/src/main/kotlin does not compile as common Kotlin (no JVM-only API is allowed there; " +
                "move a JVM-only use into src/jvmMain behind an internal declaration, and declare that in " +
                "src/commonExpect). The compiler's output:\n$output",
        )
    }

    @Test
    fun theCheckCanFail() {
        assertEquals(ExitCode.COMPILATION_ERROR, exit, "the control's JVM-only call compiled for the common platform:\n$output")
        val lines = controlErrors.map { Regex("""/$CONTROL:(\d+):""").find(it)!!.groupValues[1].toInt() }.toSet()
        assertEquals(setOf(JVM_ONLY_LINE), lines, "only the control's JVM-only line must fail (else the common klibs are missing):\n$output")
        assertTrue(controlErrors.all { "Thread" in it }, controlErrors.joinToString("\n"))
    }

    /** Each name that src/commonExpect declares is declared in src/jvmMain too (by a declaration of that name). */
    @Test
    fun everyExpectedNameIsDeclaredInJvmMain() {
        val declaration = Regex("""^\s*(?:public |internal )?expect (?:abstract |open )?(?:fun interface|class|interface|fun|val|var) (?:<[^>]*> )?(?:\w+\.)?(\w+)""", RegexOption.MULTILINE)
        val expected = kotlinFiles(File(core, "src/commonExpect/kotlin")).flatMap { f -> declaration.findAll(f.readText()).map { it.groupValues[1] } }
        assertTrue(expected.size >= 20, "expect declarations not found: $expected")
        val jvmMain = kotlinFiles(File(core, "src/jvmMain/kotlin")).joinToString("\n") { it.readText() }
        val missing = expected.filter { name ->
            !Regex("""\b(?:class|interface|object|typealias|fun|val|var) (?:<[^>]*> )?(?:\w+\.)?${Regex.escape(name)}\b""").containsMatchIn(jvmMain)
        }
        assertEquals(emptyList<String>(), missing, "src/commonExpect declares names that src/jvmMain does not")
    }

    private companion object {
        const val CONTROL = "CommonCheckControl.kt"

        /** The line of [CONTROL_SOURCE] that calls the JVM-only function. */
        const val JVM_ONLY_LINE = 9

        /** Common calls of the standard library and of kotlinx.coroutines, then one JVM-only call (line 9). */
        val CONTROL_SOURCE = """
            |package dev.semaphore.commoncheck
            |
            |import kotlinx.coroutines.CompletableDeferred
            |import kotlin.time.Duration.Companion.seconds
            |
            |internal suspend fun common(): Int = CompletableDeferred(1.seconds.inWholeSeconds.toInt()).await()
            |
            |internal fun checked(n: Int): Int = n.also { require(it > 0) { "n" } }
            |internal fun jvmOnly(): Any = Thread.currentThread()
            |""".trimMargin()
    }
}
