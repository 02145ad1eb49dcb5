/*
 * The public API of each published module, written down and guarded.
 *
 * For semaphore-core, semaphore-java-api, semaphore-distributed, semaphore-redis, semaphore-postgres and semaphore-micrometer this test dumps the public API of the
 * module's compiled classes and compares it with the dump checked in at `<module>/api/<module>.api`.
 * A difference fails the build with a unified diff (`-` checked in, `+` compiled now); an intended
 * change is accepted by regenerating the dumps and committing them with the change, so that it shows
 * in review:
 *
 *     mvn -B -pl semaphore-verification -am verify -Dtest=PublicApiTest -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true
 *
 * With `-Dapi.update=true` the test writes the files instead of comparing (and prints which ones).
 *
 * The dump is made by JetBrains' binary-compatibility-validator (BCV), the tool kotlinx.coroutines uses,
 * called here as a library (its own plugin is Gradle-only); the format is that of its `apiDump` task.
 * What counts as public is BCV's rule: a class or member that is public or protected in the bytecode
 * AND, for Kotlin, public or protected in the Kotlin metadata (a protected member of a final class is
 * out: nobody can call it). So Java package-private and private, and Kotlin `internal` and `private`
 * (public in bytecode) are left out; `@PublishedApi internal` declarations are kept (the bodies of
 * public inline functions call them, so they are binary API), and so are the inline functions.
 * Of what the compiler generates, synthetic accessors (`access$...`), lambda and `$WhenMappings`
 * classes are left out; the synthetic `$default` methods (what a Kotlin caller that omits an argument
 * links against), `$DefaultImpls` classes, bridge methods and the synthetic constructors that carry a
 * `DefaultConstructorMarker` are kept, since code compiled against the library links against them
 * (BCV cannot tell the accessor of a private constructor called from a companion from those, so it
 * keeps that too: Kotlin/binary-compatibility-validator#73).
 * Names mangled for inline-class parameters (`tryAcquire-8Mi8wO0` for a `Duration`) are shown as they
 * are in the bytecode. Nothing is excluded by name or package: if a class of the engine
 * (`dev.semaphore.internal`) ever shows up, [engineStaysOutOfTheCoreApi] says so. The tests below
 * check each of these rules, and that the check fails when a signature changes.
 *
 * The classes dumped are those the module's known class was loaded from (its CodeSource): the
 * module's `target/classes` or its jar in a reactor build. Classes from anywhere else (a stale jar in
 * the local repository) are refused, since the dump would not be of this checkout.
 */
package dev.semaphore.verification

import com.github.difflib.DiffUtils
import com.github.difflib.UnifiedDiffUtils
import dev.semaphore.Semaphore
import dev.semaphore.async.AsyncSemaphore
import dev.semaphore.micrometer.SemaphoreMetrics
import dev.semaphore.distributed.DistributedSemaphore
import dev.semaphore.verification.apiprobe.ProbeOpen
import kotlinx.validation.api.dump
import kotlinx.validation.api.filterOutNonPublic
import kotlinx.validation.api.loadApiFromJvmClasses
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import org.objectweb.asm.ClassReader
import org.objectweb.asm.ClassVisitor
import org.objectweb.asm.ClassWriter
import org.objectweb.asm.MethodVisitor
import org.objectweb.asm.Opcodes
import org.opentest4j.AssertionFailedError
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.util.jar.JarFile
import kotlin.io.path.createDirectories
import kotlin.io.path.exists
import kotlin.io.path.isDirectory
import kotlin.io.path.readText
import kotlin.io.path.writeText

class PublicApiTest {

    /** A published module: its directory name and a class it is known to contain. */
    class ApiModule(val name: String, val knownClass: Class<*>) {
        override fun toString() = name
    }

    @TestFactory
    fun `the public API of each module matches its checked-in dump`(): List<DynamicTest> =
        MODULES.map { module ->
            DynamicTest.dynamicTest(module.name) {
                println("PublicApiTest: ${module.name} from ${classesLocation(module)}")
                checkOrUpdate(module, apiFile(module), classFiles(module))
            }
        }

    /**
     * The engine's declarations are Kotlin `internal`, and most of its classes are public in the
     * bytecode (as `internal` compiles): not one of them may reach the dump. That they are public in the
     * bytecode is checked too, so this test shows that BCV reads the Kotlin metadata (a dump made
     * from the access flags alone would list them).
     */
    @Test
    fun engineStaysOutOfTheCoreApi() {
        val classes = classFiles(MODULES.single { it.name == "semaphore-core" })
        val publicInBytecode = classes.map { ClassReader(it) }
            .filter { it.className.startsWith("dev/semaphore/internal/") && it.access and Opcodes.ACC_PUBLIC != 0 }
            .map { it.className }
        assertTrue(publicInBytecode.isNotEmpty(), "expected internal classes that are public in the bytecode")
        val dump = dumpApi(classes)
        assertTrue(dump.contains(" dev/semaphore/Semaphore "), "the core's dump should name Semaphore:\n$dump")
        val leaked = dump.lines().filter { it.contains("dev/semaphore/internal/") }
        assertTrue(leaked.isEmpty(), "the core's public API names the engine's package dev.semaphore.internal:\n" +
            leaked.joinToString("\n"))
    }

    /** Java package-private classes (there are some in semaphore-java-api) stay out of the dump. */
    @Test
    fun packagePrivateJavaClassesStayOut() {
        val classes = classFiles(MODULES.single { it.name == "semaphore-java-api" })
        val packagePrivate = classes.map { ClassReader(it) }
            .filter { it.access and (Opcodes.ACC_PUBLIC or Opcodes.ACC_PROTECTED or Opcodes.ACC_PRIVATE) == 0 }
            .map { it.className }
        assertTrue(packagePrivate.isNotEmpty(), "expected package-private classes in semaphore-java-api")
        val dump = dumpApi(classes)
        val leaked = packagePrivate.filter { dump.contains(" $it ") || dump.contains(" $it\n") }
        assertTrue(leaked.isEmpty(), "package-private classes in the dump: $leaked")
    }

    /**
     * BCV's rule for Kotlin, on the fixtures in `apiprobe/ApiProbe.kt` (compiled with this module's
     * tests by the project's Kotlin): public and protected in; `internal` and `private` out although
     * public (internal) or present in the bytecode; `@PublishedApi internal` in, because a public
     * inline function calls it; the inline function itself in; the interface's `$default` method and
     * its `$DefaultImpls` class in; the enum's `$WhenMappings` and lambda classes out.
     */
    @Test
    fun kotlinVisibilitiesAsBcvReadsThem() {
        val root = classesLocation(ApiModule("probe", ProbeOpen::class.java))
        val classes = Files.walk(root.resolve("dev/semaphore/verification/apiprobe")).use { paths ->
            paths.filter { it.toString().endsWith(".class") }.sorted().map { Files.readAllBytes(it) }.toList()
        }
        val inBytecode = classes.map { ClassReader(it).className }
        val probe = "dev/semaphore/verification/apiprobe"
        assertTrue("$probe/ProbeOpen\$WhenMappings" in inBytecode, "expected a \$WhenMappings class: $inBytecode")
        assertTrue("$probe/ProbeInternal" in inBytecode, "expected ProbeInternal: $inBytecode")

        val dump = dumpApi(classes)
        val classLines = dump.lines().filter { it.endsWith("{") }
        assertEquals(listOf(
            "public final class $probe/ProbeInterface\$DefaultImpls {",
            "public abstract interface class $probe/ProbeInterface {",
            "public final class $probe/ProbeKind : java/lang/Enum {",
            "public class $probe/ProbeOpen {",
        ).sorted(), classLines.sorted(), dump)
        val members = dump.lines().filter { it.startsWith("\t") }.map { it.trim() }
        for (expected in listOf(
            "public final fun publicFun ()I",
            "protected final fun protectedFun ()I",
            "public final fun publishedFun ()I",
            "public final fun inlineFun ()I",
            "public static synthetic fun withDefault\$default (L$probe/ProbeInterface;IILjava/lang/Object;)I",
        )) assertTrue(expected in members, "expected `$expected` in the dump:\n$dump")
        for (absent in listOf("internalFun", "privateFun", "visibleInBytecode", "access\$")) {
            assertTrue(members.none { absent in it }, "`$absent` should not be in the dump:\n$dump")
        }
    }

    /**
     * BCV's rule for Java-style members, on classes made here with ASM (the library has no protected
     * member today): public and protected members of an open class are in (a subclass elsewhere can
     * call a protected one), a protected member of a final class is out (nobody can subclass it), and
     * package-private and private members are out.
     */
    @Test
    fun publicAndProtectedAreInPackagePrivateAndPrivateAreOut() {
        fun classFile(name: String, classAccess: Int): ByteArray {
            val writer = ClassWriter(0)
            writer.visit(Opcodes.V17, classAccess or Opcodes.ACC_SUPER, name, null, "java/lang/Object", null)
            for ((method, access) in listOf("pub" to Opcodes.ACC_PUBLIC, "prot" to Opcodes.ACC_PROTECTED,
                                            "pkg" to 0, "priv" to Opcodes.ACC_PRIVATE)) {
                writer.visitMethod(access, method, "()V", null, null).apply {
                    visitCode(); visitInsn(Opcodes.RETURN); visitMaxs(0, 1); visitEnd()
                }
            }
            writer.visitEnd()
            return writer.toByteArray()
        }
        val dump = dumpApi(listOf(
            classFile("probe/Open", Opcodes.ACC_PUBLIC),
            classFile("probe/Closed", Opcodes.ACC_PUBLIC or Opcodes.ACC_FINAL),
            classFile("probe/Hidden", 0),
        ))
        val expected = listOf(
            "public final class probe/Closed {",
            "\tpublic fun pub ()V",
            "}",
            "",
            "public class probe/Open {",
            "\tprotected fun prot ()V",
            "\tpublic fun pub ()V",
            "}",
            "",
            "",
        ).joinToString("\n")
        assertEquals(expected, dump)
    }

    /**
     * The guard can fail: a checked-in dump with one signature changed makes the same check as the
     * one above fail, with the changed line on both sides of the diff and the command that accepts it.
     */
    @Test
    fun aChangedSignatureInTheDumpFails(@TempDir dir: Path) {
        val module = MODULES.single { it.name == "semaphore-java-api" }
        val classes = classFiles(module)
        val actual = dumpApi(classes)
        val line = actual.lines().first { it.startsWith("\tpublic ") && it.contains("(") }
        val altered = line.replaceFirst("(", "(I")
        val file = dir.resolve("semaphore-java-api.api")
        file.writeText(actual.replaceFirst(line, altered))

        val failure = assertThrows<AssertionFailedError> { checkOrUpdate(module, file, classes, update = false) }
        val message = failure.message!!
        assertTrue(message.lines().contains("-$altered"), message)
        assertTrue(message.lines().contains("+$line"), message)
        assertTrue(message.contains(UPDATE_COMMAND), message)
    }

    /**
     * The dump sees the bytecode: a public method of a real class made package-private (the class
     * rewritten with ASM) leaves the dump, and the check against the dump of the unchanged classes
     * fails with that method's line removed.
     */
    @Test
    fun aMethodThatStopsBeingPublicFails(@TempDir dir: Path) {
        val module = MODULES.single { it.name == "semaphore-java-api" }
        val classes = classFiles(module)
        val file = dir.resolve("semaphore-java-api.api")
        file.writeText(dumpApi(classes))
        checkOrUpdate(module, file, classes, update = false) // the unchanged classes pass

        val target = "dev/semaphore/async/AsyncSemaphore"
        var hidden: String? = null
        val rewritten = classes.map { bytes ->
            val reader = ClassReader(bytes)
            if (reader.className != target) return@map bytes
            val writer = ClassWriter(0)
            reader.accept(object : ClassVisitor(Opcodes.ASM9, writer) {
                override fun visitMethod(access: Int, name: String, descriptor: String, signature: String?,
                                         exceptions: Array<out String>?): MethodVisitor? {
                    var newAccess = access
                    if (hidden == null && name != "<init>" && access and Opcodes.ACC_PUBLIC != 0) {
                        hidden = "$name $descriptor"
                        newAccess = access and Opcodes.ACC_PUBLIC.inv()
                    }
                    return super.visitMethod(newAccess, name, descriptor, signature, exceptions)
                }
            }, 0)
            writer.toByteArray()
        }
        val method = checkNotNull(hidden) { "no public method found in $target" }

        val failure = assertThrows<AssertionFailedError> { checkOrUpdate(module, file, rewritten, update = false) }
        val removed = failure.message!!.lines().filter { it.startsWith("-\t") }
        assertEquals(1, removed.size, failure.message)
        assertTrue(removed.single().endsWith(" fun $method"), "expected the line of $method removed:\n${failure.message}")
    }

    companion object {
        val MODULES = listOf(
            ApiModule("semaphore-core", Semaphore::class.java),
            ApiModule("semaphore-java-api", AsyncSemaphore::class.java),
            ApiModule("semaphore-distributed", DistributedSemaphore::class.java),
            ApiModule("semaphore-redis", dev.semaphore.redis.RedisSemaphoreClient::class.java),
            ApiModule("semaphore-postgres", dev.semaphore.postgres.PostgresSetupException::class.java),
            ApiModule("semaphore-micrometer", SemaphoreMetrics::class.java),
        )

        const val UPDATE_COMMAND =
            "mvn -B -pl semaphore-verification -am verify -Dtest=PublicApiTest -Dsurefire.failIfNoSpecifiedTests=false -Dapi.update=true"

        private val update: Boolean get() = System.getProperty("api.update").toBoolean()

        /** The repository's root: set by the module's Surefire configuration. */
        private val rootDir: Path by lazy {
            val root = System.getProperty("semaphore.rootDir")
                ?: error("system property semaphore.rootDir is not set (run the test through Maven)")
            Paths.get(root).toRealPath()
        }

        fun apiFile(module: ApiModule): Path = rootDir.resolve(module.name).resolve("api").resolve("${module.name}.api")

        /** The directory or jar the module's known class was loaded from. */
        fun classesLocation(module: ApiModule): Path {
            val location = module.knownClass.protectionDomain.codeSource?.location
                ?: error("${module.knownClass.name} has no code source")
            return Paths.get(location.toURI()).toRealPath()
        }

        /**
         * The class files of the module, read from where its known class was loaded: the module's
         * classes directory or jar inside this checkout.
         */
        fun classFiles(module: ApiModule): List<ByteArray> {
            val path = classesLocation(module)
            val moduleDir = rootDir.resolve(module.name)
            check(path.startsWith(moduleDir.resolve("target"))) {
                "${module.knownClass.name} was loaded from $path, not from $moduleDir/target: the dump would not be " +
                    "of this checkout. Build the module in the same reactor (mvn ... -pl semaphore-verification -am)."
            }
            val files = if (path.isDirectory()) {
                Files.walk(path).use { paths ->
                    paths.filter { Files.isRegularFile(it) && it.toString().endsWith(".class") }
                        .sorted().map { Files.readAllBytes(it) }.toList()
                }
            } else {
                JarFile(path.toFile()).use { jar ->
                    jar.entries().asSequence()
                        .filter { !it.isDirectory && it.name.endsWith(".class") && !it.name.startsWith("META-INF/") }
                        .sortedBy { it.name }
                        .map { jar.getInputStream(it).use { s -> s.readBytes() } }
                        .toList()
                }
            }
            check(files.size > 1) { "no classes of ${module.name} found in $path" }
            return files
        }

        /** BCV's dump of the public API in these class files, as its `apiDump` task writes it. */
        fun dumpApi(classFiles: List<ByteArray>): String =
            classFiles.asSequence().map { it.inputStream() }
                .loadApiFromJvmClasses()
                .filterOutNonPublic()
                .dump(StringBuilder())
                .toString()

        /** Compares the dump of [classFiles] with [apiFile], or writes it there when [update] is set. */
        fun checkOrUpdate(module: ApiModule, apiFile: Path, classFiles: List<ByteArray>, update: Boolean = this.update) {
            val actual = dumpApi(classFiles)
            val shown = if (apiFile.startsWith(rootDir)) rootDir.relativize(apiFile) else apiFile
            if (update) {
                apiFile.parent.createDirectories()
                val old = if (apiFile.exists()) apiFile.readText() else null
                apiFile.writeText(actual)
                println("PublicApiTest: ${if (old == actual) "unchanged" else "wrote"} $apiFile")
                return
            }
            if (!apiFile.exists()) {
                throw AssertionFailedError(
                    "No API dump for ${module.name} at $shown. Create it with:\n  $UPDATE_COMMAND\n"
                )
            }
            val expected = apiFile.readText().replace("\r\n", "\n")
            if (expected == actual) return
            val expectedLines = expected.lines()
            val actualLines = actual.lines()
            val diff = UnifiedDiffUtils.generateUnifiedDiff(
                "$shown (checked in)", "${module.name} (compiled now)",
                expectedLines, DiffUtils.diff(expectedLines, actualLines), 2,
            )
            val message = buildString {
                appendLine("The public API of ${module.name} differs from $shown:")
                diff.forEach { appendLine(it) }
                appendLine("If the change is intended, update the dump and commit it with the change:")
                appendLine("  $UPDATE_COMMAND")
            }
            throw AssertionFailedError(message, expected, actual)
        }
    }
}
