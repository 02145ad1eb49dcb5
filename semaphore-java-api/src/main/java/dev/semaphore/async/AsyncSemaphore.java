package dev.semaphore.async;

import dev.semaphore.Diagnostics;
import dev.semaphore.Semaphore;
import dev.semaphore.SemaphoreKt;
import java.util.Objects;

/**
 * A fair counting semaphore for Java: permits come as {@link java.util.concurrent.CompletableFuture}s of
 * {@link Permit}, from blocking calls for plain and virtual threads, or from
 * {@code java.util.concurrent}-style {@code tryAcquire} forms. It is a view of a Kotlin {@link Semaphore}:
 * futures, blocked threads and coroutines wait in one line for one permit count. Every way to take
 * permits is described once, in {@link AsyncPermitPool}; which blocking form to use, {@code acquireBlocking()}
 * and its {@link Permit} or the handle-less {@code tryAcquire(timeout)} and {@code release()}, is said there too.
 *
 * <pre>{@code
 * AsyncSemaphore limiter = AsyncSemaphore.create(4);              // at most 4 calls at once
 * CompletableFuture<String> page = limiter.withPermit(() -> fetch("https://example.com"));
 * try (Permit permit = limiter.acquireBlocking()) {               // on a plain or virtual thread
 *     render(page.join());
 * }
 * }</pre>
 */
public final class AsyncSemaphore extends AsyncPermitPool {
    private final Semaphore kotlin;

    private AsyncSemaphore(Semaphore kotlin) {
        super(kotlin, 0);
        this.kotlin = kotlin;
    }

    /**
     * @param permits the total, at least 0 (a request for more than the total fails at once)
     * @return a new semaphore
     */
    public static AsyncSemaphore create(int permits) {
        return new AsyncSemaphore(SemaphoreKt.Semaphore(permits, Diagnostics.NONE));
    }

    /**
     * @param permits the total, at least 0
     * @param diagnostics what it reports about itself, such as its name: {@code Diagnostics.named("db")}
     * @return a new semaphore
     */
    public static AsyncSemaphore create(int permits, Diagnostics diagnostics) {
        return new AsyncSemaphore(SemaphoreKt.Semaphore(permits, Objects.requireNonNull(diagnostics, "diagnostics")));
    }

    /**
     * Wraps a Kotlin semaphore, so Java and Kotlin code share its line and its permits. Waiting needs
     * one made by the library's {@code Semaphore(permits)} factory (IllegalArgumentException otherwise).
     *
     * @param shared the Kotlin semaphore
     * @return a Java view of {@code shared}
     */
    public static AsyncSemaphore of(Semaphore shared) {
        return new AsyncSemaphore(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin semaphore this is a view of */
    @Override
    public Semaphore asKotlin() {
        return kotlin;
    }
}
