package dev.semaphore

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.yield

class SmokeSpec : FunSpec({
    test("fifo") {
        runTest {
            val s = Semaphore(1)
            s.acquire()
            val order = mutableListOf<Int>()
            repeat(3) { i -> launch { s.withPermit { order += i } } }
            yield()
            s.queueLength shouldBe 3
            s.release()
            testScheduler.advanceUntilIdle()
            order shouldBe listOf(0, 1, 2)
            s.availablePermits shouldBe 1
        }
    }
})
