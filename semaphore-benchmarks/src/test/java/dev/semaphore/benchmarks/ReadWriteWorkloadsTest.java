package dev.semaphore.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlinx.coroutines.Dispatchers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The read-write workloads do what they claim for every contender (every section once, with its kind, the
 * same work for all), and their exclusion check fails the run when a lock lets a writer overlap anyone.
 * Sizes are small: these are correctness checks, not measurements.
 */
class ReadWriteWorkloadsTest {
    private static final int SECTIONS = 4_000;
    private static final int CALLERS = 100;

    /** The digest every contender must return for SECTIONS sections over CALLERS callers, work 5 and 5. */
    private static long expectedDigest(SectionKinds kinds) {
        return expectedDigest(kinds, 5);
    }

    /** The same with work [work] inside and outside. */
    private static long expectedDigest(SectionKinds kinds, int work) {
        return ReadWriteWorkloads.readWrite(new NoExclusion(), Dispatchers.getUnconfined(), CALLERS, kinds, work, work);
    }

    @ParameterizedTest
    @ValueSource(strings = {"ours", "kotlinxMutex", "kotlinxSemaphore", "kotlinxSemaphore-4"})
    void everyCoroutineContenderRunsEverySectionOnceWithTheSameWork(String impl) {
        for (int readPercent : new int[] {90, 50}) {
            SectionKinds kinds = new SectionKinds(SECTIONS, readPercent);
            long expected = expectedDigest(kinds);
            for (String dispatcher : new String[] {"default", "pool2"}) {
                BenchDispatchers d = BenchDispatchers.of(dispatcher);
                try {
                    long digest = ReadWriteWorkloads.readWrite(ReadWritePrimitives.of(impl, CALLERS), d.dispatcher, CALLERS, kinds, 5, 5);
                    assertEquals(expected, digest, impl + " on " + dispatcher + ", " + readPercent + "% reads: the same work as every contender");
                } finally {
                    d.close();
                }
            }
        }
    }

    @Test
    void theBenchmarkClassesRunTheirSmallInstances() {
        for (String impl : new String[] {"ours", "kotlinxMutex", "kotlinxSemaphore", "kotlinxSemaphore-16"}) {
            ReadWriteBenchmark b = new ReadWriteBenchmark();
            b.impl = impl;
            b.dispatcher = "default";
            b.readPercent = 90;
            b.coroutines = CALLERS;
            b.sections = SECTIONS;
            b.workInside = 200; // long sections: work 200 inside, 5 outside
            b.workOutside = 5;
            b.setUp();
            try {
                assertEquals(ReadWriteWorkloads.readWrite(new NoExclusion(), Dispatchers.getUnconfined(), CALLERS, new SectionKinds(SECTIONS, 90),
                        200, 5), b.readWrite(), impl + ": the work inside and outside the benchmark was given");
            } finally {
                b.tearDown();
            }
        }
        for (int readPercent : new int[] {90, 50}) {
            ReadWriteThreadsBenchmark t = new ReadWriteThreadsBenchmark();
            t.impl = "juc";
            t.readPercent = readPercent;
            t.threads = CALLERS;
            t.sections = SECTIONS;
            t.workInside = 200;
            t.workOutside = 5;
            t.setUp();
            try {
                assertEquals(ReadWriteWorkloads.readWrite(new NoExclusion(), Dispatchers.getUnconfined(), CALLERS,
                        new SectionKinds(SECTIONS, readPercent), 200, 5), t.readWrite(), "juc, " + readPercent + "% reads");
                t.readWrite(); // the pool's threads are reused by the next invocation
            } finally {
                t.tearDown();
            }
        }
    }

    @Test
    void sectionKindsAreExactFixedAndShuffled() {
        SectionKinds k = new SectionKinds(1_001, 90);
        assertEquals(900, k.getReads());
        assertEquals(101, k.getWrites());
        int writes = 0;
        int firstHalfWrites = 0;
        SectionKinds again = new SectionKinds(1_001, 90);
        for (int j = 0; j < 1_001; j++) {
            if (k.isWrite(j)) writes++;
            if (k.isWrite(j) && j < 500) firstHalfWrites++;
            assertEquals(k.isWrite(j), again.isWrite(j), "the same sequence every time, section " + j);
        }
        assertEquals(101, writes);
        assertTrue(firstHalfWrites > 20 && firstHalfWrites < 80, "spread over the run, not bunched at one end: " + firstHalfWrites);
        SectionKinds half = new SectionKinds(100_000, 50);
        assertEquals(50_000, half.getWrites());
        assertEquals(0, new SectionKinds(10, 100).getWrites());
        assertEquals(10, new SectionKinds(10, 0).getWrites());
        assertThrows(IllegalArgumentException.class, () -> new SectionKinds(0, 50));
        assertThrows(IllegalArgumentException.class, () -> new SectionKinds(10, 101));
    }

    @Test
    void theExclusionCheckSeesEveryKindOfOverlap() {
        ExclusionCheck c = new ExclusionCheck();
        c.enterRead();
        c.enterRead(); // readers share
        assertViolation(c::enterWrite);
        c.exitRead();
        c.exitRead();
        c.enterWrite();
        assertViolation(c::enterRead);
        c.exitRead(); // undo the failed reader's count
        assertViolation(c::enterWrite);
        c.exitWrite();
        c.enterWrite(); // free again: a writer alone is fine
        c.exitWrite();

        ExclusionCheck late = new ExclusionCheck();
        late.enterWrite();
        try {
            late.enterRead();
        } catch (IllegalStateException expected) {
            // seen at once; the writer sees it too when it leaves
        }
        assertViolation(late::exitWrite);
    }

    private static void assertViolation(Runnable r) {
        IllegalStateException e = assertThrows(IllegalStateException.class, r::run);
        assertTrue(e.getMessage().contains("exclusion violated"), e.getMessage());
    }

    @Test
    void aLockThatDoesNotExcludeFailsTheCoroutineWorkload() {
        assertCaught(() -> ReadWriteWorkloads.readWrite(new NoExclusion(), Dispatchers.getDefault(), 16, new SectionKinds(10_000, 50), 500, 1));
        // Writers exclude each other but not readers.
        assertCaught(() -> ReadWriteWorkloads.readWrite(new WritersOnly(), Dispatchers.getDefault(), 16, new SectionKinds(10_000, 90), 500, 1));
    }

    @Test
    void aLockThatDoesNotExcludeFailsTheThreadWorkload() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            // The write lock is the read lock: writers share with readers and with each other.
            ReentrantReadWriteLock real = new ReentrantReadWriteLock(true);
            ReadWriteLock broken = new ReadWriteLock() {
                @Override
                public Lock readLock() {
                    return real.readLock();
                }

                @Override
                public Lock writeLock() {
                    return real.readLock();
                }
            };
            assertCaught(() -> ReadWriteWorkloads.readWriteBlocking(broken, pool, 8, new SectionKinds(10_000, 50), 500, 1));
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** Runs [run] until it fails with an exclusion violation (two threads do overlap within a few attempts). */
    private static void assertCaught(Runnable run) {
        for (int attempt = 0; attempt < 50; attempt++) {
            try {
                run.run();
            } catch (IllegalStateException e) {
                assertTrue(e.getMessage().contains("exclusion violated"), e.getMessage());
                return;
            }
        }
        fail("a lock that does not exclude ran 50 times without the exclusion check failing");
    }

    @Test
    void badImplNamesAreRejectedWithTheName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ReadWritePrimitives.of("ourz", 10));
        assertTrue(e.getMessage().contains("ourz"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ReadWritePrimitives.of("kotlinxSemaphore-0", 10));
        ReadWriteBenchmark b = new ReadWriteBenchmark();
        b.impl = "nope";
        b.dispatcher = "default";
        b.readPercent = 90;
        b.coroutines = 10;
        b.sections = 10;
        b.workInside = 50;
        b.workOutside = 50;
        e = assertThrows(IllegalArgumentException.class, b::setUp);
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
        b.impl = "ours";
        b.workInside = 0; // a geometric mean of 0 would divide by zero in every section
        e = assertThrows(IllegalArgumentException.class, b::setUp);
        assertTrue(e.getMessage().contains("workInside"), e.getMessage());
        ReadWriteThreadsBenchmark t = new ReadWriteThreadsBenchmark();
        t.impl = "juc";
        t.readPercent = 90;
        t.threads = 2;
        t.sections = 10;
        t.workInside = 50;
        t.workOutside = 0;
        e = assertThrows(IllegalArgumentException.class, t::setUp);
        assertTrue(e.getMessage().contains("workOutside"), e.getMessage());
    }

    /** Takes no lock at all. */
    static final class NoExclusion implements SuspendReadWrite {
        @Override
        public Object lockRead(Continuation<? super Unit> c) {
            return Unit.INSTANCE;
        }

        @Override
        public void unlockRead() {
        }

        @Override
        public Object lockWrite(Continuation<? super Unit> c) {
            return Unit.INSTANCE;
        }

        @Override
        public void unlockWrite() {
        }
    }

    /** Writers take a mutex; readers take nothing. */
    static final class WritersOnly implements SuspendReadWrite {
        private final kotlinx.coroutines.sync.Mutex writers = kotlinx.coroutines.sync.MutexKt.Mutex(false);

        @Override
        public Object lockRead(Continuation<? super Unit> c) {
            return Unit.INSTANCE;
        }

        @Override
        public void unlockRead() {
        }

        @Override
        public Object lockWrite(Continuation<? super Unit> c) {
            return writers.lock(null, c);
        }

        @Override
        public void unlockWrite() {
            writers.unlock(null);
        }
    }
}
