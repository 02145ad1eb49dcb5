package dev.semaphore.async;

import java.util.function.Supplier;

/**
 * Creates a primitive with the process-wide diagnostics ({@code -Ddev.semaphore.diagnostics}, set by the observed
 * test execution) out of the way: for the few tests of what an unobserved primitive or a given tracking level
 * does (its lock-free paths, its allocations, what it records), which need that primitive in that execution too.
 */
final class Unobserved {
    private static final String PROPERTY = "dev.semaphore.diagnostics";

    private Unobserved() {}

    static <T> T create(Supplier<T> create) {
        String saved = System.getProperty(PROPERTY);
        if (saved == null) return create.get();
        System.clearProperty(PROPERTY);
        try {
            return create.get();
        } finally {
            System.setProperty(PROPERTY, saved);
        }
    }
}
