package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.concurrent.atomic.AtomicReference;

/** Runs a blocking call on a new thread and keeps its outcome: the value it returned, or what it threw. */
final class Outcome {
    /** A blocking call. */
    @FunctionalInterface
    interface Body {
        Object get() throws Exception;
    }

    final AtomicReference<Object> value = new AtomicReference<>();
    final Thread thread;

    Outcome(Body body) {
        thread = new Thread(() -> {
            try {
                value.set(body.get());
            } catch (Throwable t) {
                value.set(t);
            }
        });
        thread.start();
    }

    /** Waits for the call to end (at most a minute: a call that never returns fails the test) and gives its outcome. */
    Object join() throws InterruptedException {
        thread.join(60_000);
        assertFalse(thread.isAlive(), "the blocked call never returned");
        return value.get();
    }
}
