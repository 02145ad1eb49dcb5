package dev.semaphore

import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.io.File
import java.util.Collections
import java.util.jar.JarFile
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.test.TestScope
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield

/** A system property that every Surefire execution of this module sets (semaphore-core/pom.xml). */
private fun setting(name: String): String =
    withClue("$name is set by each Surefire execution (semaphore-core/pom.xml)") { System.getProperty(name).shouldNotBeNull() }

/** The directory or jar that [c] was loaded from. */
private fun origin(c: Class<*>): File = File(c.protectionDomain.codeSource.location.shouldNotBeNull().toURI())

/** The version that the `META-INF/<module>.version` entry of the jar [c] was loaded from states. */
private fun versionInJarOf(c: Class<*>, module: String): String {
    val jar = origin(c)
    withClue("$c was loaded from $jar, not from a jar") { jar.isFile shouldBe true }
    return JarFile(jar).use { f ->
        val entry = withClue("$jar has no META-INF/$module.version") { f.getJarEntry("META-INF/$module.version").shouldNotBeNull() }
        f.getInputStream(entry).use { it.readBytes().decodeToString().trim() }
    }
}

/**
 * A scope on the event loop of the calling runBlocking whose coroutines are not its children, so that a
 * waiter that is never woken fails the test (at a check, or at [GUARD]) instead of keeping runBlocking
 * waiting for it.
 */
private suspend fun notAChild(context: CoroutineContext = EmptyCoroutineContext): CoroutineScope =
    CoroutineScope(currentCoroutineContext()[ContinuationInterceptor]!! + context)

/** How long a test waits for a coroutine that should already have finished (it never waits on success). */
private val GUARD = 10.seconds

/**
 * What the core needs of kotlinx.coroutines beyond its ordinary public API, and a check that each
 * Surefire execution runs on the kotlinx.coroutines it says. The kotlinx-compat profile
 * (semaphore-core/pom.xml) runs the whole suite once per supported minor release: always on the one
 * build of the main classes (compiled against the build's kotlinx.coroutines, as users get them), with
 * the test classes compiled against the release that runs them (as a user's own code is).
 *
 * The two @InternalCoroutinesApi calls of internal/Suspending.kt each have a test here that fails if
 * their behaviour changes: a handler that runs when the Job starts cancelling (a handler on completion
 * would never run, since the waiting coroutine is what keeps its Job from completing), and an error
 * reported to the coroutine's CoroutineExceptionHandler.
 */
class KotlinxCompatSpec : FunSpec({
    test("the kotlinx.coroutines jars on the class path are all of the version this execution expects") {
        val expected = setting("semaphore.kotlinx.version")
        val loader = Job::class.java.classLoader
        // One copy of each: an execution that added the older jars but kept the build's would have two.
        for (cls in listOf("kotlinx/coroutines/Job.class", "kotlinx/coroutines/test/TestScope.class")) {
            withClue(cls) { Collections.list(loader.getResources(cls)).size shouldBe 1 }
        }
        // The classes in use come from jars that say they are that version.
        versionInJarOf(Job::class.java, "kotlinx_coroutines_core") shouldBe expected
        versionInJarOf(TestScope::class.java, "kotlinx_coroutines_test") shouldBe expected
        // Every kotlinx.coroutines module on the class path (also debug and jdk8, which kotest brings) is that version.
        for (module in listOf("core", "test", "debug", "jdk8")) {
            val found = Collections.list(loader.getResources("META-INF/kotlinx_coroutines_$module.version"))
                .map { url -> url.openStream().use { it.readBytes().decodeToString().trim() } }
            withClue("kotlinx-coroutines-$module on the class path") {
                if (module == "core" || module == "test") found shouldBe listOf(expected)
                else found.filter { it != expected } shouldBe emptyList()
            }
        }
    }

    test("the main classes are the build's, the test classes those this execution names") {
        // Every execution runs the one compilation of the main classes (against the build's kotlinx.coroutines).
        origin(Semaphore::class.java).canonicalFile shouldBe File(setting("semaphore.main.classes")).canonicalFile
        origin(KotlinxCompatSpec::class.java).canonicalFile shouldBe File(setting("semaphore.test.classes")).canonicalFile
    }

    // Suspending.kt: job.invokeOnCompletion(onCancelling = true, invokeImmediately = true, handler).
    test("a waiting coroutine leaves the line as soon as its Job starts cancelling, before the Job completes") {
        runBlocking {
            val s = Semaphore(1)
            s.tryAcquire() shouldBe true
            val waiter = notAChild().launch { s.acquire() }
            yield() // waiter suspends in acquire()
            s.queueLength shouldBe 1
            waiter.cancel() // its body has not run since: the Job is cancelling, not completed
            waiter.isCancelled shouldBe true
            waiter.isCompleted shouldBe false
            s.queueLength shouldBe 0 // the handler ran at once, in cancel()
            withTimeout(GUARD) { waiter.join() } // and woke the coroutine, which completes
            s.availablePermits shouldBe 0
            s.release()
            s.availablePermits shouldBe 1
        }
    }

    // Suspending.kt: handleCoroutineException(context, e), from the hand-back of a grant (W3).
    test("an error of the hand-back of a cancelled coroutine's grant goes to the coroutine's CoroutineExceptionHandler") {
        runBlocking {
            val s = Semaphore(1)
            s.tryAcquire() shouldBe true
            val reported = mutableListOf<Throwable>()
            val waiter = notAChild(CoroutineExceptionHandler { _, e -> reported += e }).launch { s.acquire() }
            yield() // waiter suspends in acquire()
            s.release() // granted to the waiter; its resumption is dispatched to this event loop, not run yet
            waiter.cancel() // cancelled after the grant: it will hand the permit back (W3)
            s.release() // misuse: the waiter's permit is released by someone else meanwhile
            withTimeout(GUARD) { waiter.join() } // the hand-back over-releases: reported, and the coroutine ends cancelled
            reported.size shouldBe 1
            reported.single().shouldBeInstanceOf<IllegalStateException>()
            waiter.isCancelled shouldBe true
            s.availablePermits shouldBe 1
        }
    }
})
