package dev.semaphore.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * ReadWriteParksBenchmark's probe counts per section: every contender's invocation returns the digest of the same
 * sections, the dispatches are at least the launches (one per coroutine) and at most one per wait, and the parks
 * are a bounded count. Small sizes: a check of the probe, not a measurement.
 */
class ReadWriteParksBenchmarkTest {
    @Test
    void theProbeCountsDispatchesAndParksPerSectionForEveryContender() {
        Long digest = null;
        for (String impl : new String[] {"ours", "oursWritersLine", "kotlinxMutex", "kotlinxSemaphore-16"}) {
            ReadWriteParksBenchmark b = new ReadWriteParksBenchmark();
            b.impl = impl;
            b.readPercent = 90;
            b.coroutines = 100;
            b.workInside = 5;
            b.workOutside = 5;
            b.sections = 4_000;
            b.setUp();
            try {
                ReadWriteParksBenchmark.PerSection perSection = new ReadWriteParksBenchmark.PerSection();
                assertTrue(Double.isNaN(perSection.parksPerSection()), "nothing measured yet");
                b.reset();
                for (int i = 0; i < 2; i++) {
                    b.mark();
                    long d = b.readWrite(perSection);
                    b.count();
                    if (digest == null) digest = d;
                    assertEquals(digest, d, impl + ": the same sections as every other contender");
                }
                double dispatches = perSection.dispatchesPerSection();
                double parks = perSection.parksPerSection();
                // The 100 launches at least; at most 17 waits a section (the recipe's writer: its Mutex and 16 permits,
                // one acquire each), each resumed by one dispatch, plus the launches.
                assertTrue(dispatches >= 100.0 / 4_000 && dispatches <= 17 + 100.0 / 4_000, impl + ": dispatches per section " + dispatches);
                // Zero is possible (the two threads may never run out of work); that a park is counted: ManyThreadsTest.
                assertTrue(parks >= 0 && parks < 100, impl + ": parks per section " + parks);
            } finally {
                b.tearDown();
            }
        }
    }
}
