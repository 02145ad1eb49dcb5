/*
 * The Kotlin calls a user writes from memory, compiled by the real Kotlin compiler (the embeddable one of
 * the project's Kotlin version) against the core's classes: the documented shapes must compile
 * (compile-shapes/good.kt), and the calls that would read as something they do not do must not
 * (compile-shapes/bad.kt: each such line names a fragment of the error it must get). What the calls that
 * compile do is checked in semaphore-core's CallShapesSpec; the Java shapes in semaphore-java-api's
 * CompileShapesTest.
 */
package dev.semaphore.verification

import org.jetbrains.kotlin.cli.common.ExitCode
import org.jetbrains.kotlin.cli.jvm.K2JVMCompiler
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.PrintStream
import java.nio.file.Files

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CompileShapesTest {
    private val files = listOf("good.kt", "bad.kt")
    private lateinit var sources: Map<String, List<String>>
    private lateinit var exit: ExitCode
    private lateinit var output: String

    /** The compile errors of [file], by line. */
    private lateinit var errors: Map<String, Map<Int, List<String>>>

    /** The class path of this test (Surefire's, not its booter jar's), which holds the core's classes. */
    private val classPath: String =
        System.getProperty("surefire.test.class.path")?.takeIf { it.isNotBlank() } ?: System.getProperty("java.class.path")

    /** One compiler run for both files (the compiler's start is most of the time): errors are told apart by file. */
    @BeforeAll
    fun compile() {
        assertTrue(classPath.split(File.pathSeparatorChar).any { "semaphore-core" in it }, "the core is not on the class path: $classPath")
        sources = files.associateWith { checkNotNull(javaClass.getResource("/compile-shapes/$it")) { "missing $it" }.readText().lines() }
        val dir = Files.createTempDirectory("compile-shapes").toFile()
        try {
            val paths = files.map { f -> File(dir, f).apply { writeText(sources.getValue(f).joinToString("\n")) }.path }
            val out = ByteArrayOutputStream()
            exit = K2JVMCompiler().exec(
                PrintStream(out, true, Charsets.UTF_8),
                *paths.toTypedArray(), "-d", File(dir, "classes").path, "-classpath", classPath,
                "-no-stdlib", "-no-reflect", "-jvm-target", "17",
            )
            output = out.toString(Charsets.UTF_8)
        } finally {
            dir.deleteRecursively()
        }
        // "<path>/<file>:<line>:<column>: error: <message>"
        errors = files.associateWith { f ->
            Regex("""^.*?/${Regex.escape(f)}:(\d+):\d+: error: (.*)$""", RegexOption.MULTILINE)
                .findAll(output)
                .groupBy({ it.groupValues[1].toInt() }, { it.groupValues[2] })
        }
    }

    @Test
    fun theDocumentedShapesCompile() {
        assertEquals(emptyMap<Int, List<String>>(), errors.getValue("good.kt"), output)
    }

    @Test
    fun everyMisleadingCallIsACompileErrorThatSaysWhy() {
        assertEquals(ExitCode.COMPILATION_ERROR, exit, output)
        val bad = sources.getValue("bad.kt")
        val badErrors = errors.getValue("bad.kt")
        val expected = bad.withIndex()
            .mapNotNull { (i, line) -> line.substringAfter(" // ERROR: ", "").takeIf { it.isNotEmpty() }?.let { i + 1 to it.trim() } }
            .toMap()
        assertTrue(expected.size >= 9, "bad.kt lost its cases: $expected")
        for ((line, fragment) in expected) {
            val messages = badErrors[line].orEmpty()
            assertTrue(
                messages.any { it.contains(fragment, ignoreCase = true) },
                "bad.kt:$line `${bad[line - 1].trim()}` must fail with '$fragment'; got $messages\n$output",
            )
        }
        assertEquals(emptySet<Int>(), badErrors.keys - expected.keys, "errors on lines that should compile:\n$output")
    }
}
