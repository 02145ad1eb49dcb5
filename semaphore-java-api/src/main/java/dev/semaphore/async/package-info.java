/**
 * The Java face of the semaphore library: {@link dev.semaphore.async.AsyncSemaphore},
 * {@link dev.semaphore.async.AsyncLock} and {@link dev.semaphore.async.AsyncPrioritySemaphore} hand out
 * {@link dev.semaphore.async.Permit}s through {@link java.util.concurrent.CompletableFuture}s or blocking
 * calls (plain and virtual threads), and stand in the same line as the Kotlin coroutines that use the
 * same primitive.
 *
 * <pre>{@code
 * AsyncSemaphore downloads = AsyncSemaphore.create(4);
 * CompletableFuture<byte[]> body = downloads.withPermit(() -> http.sendAsync(request, ofByteArray()).thenApply(HttpResponse::body));
 * }</pre>
 *
 * <p>Every type is null-marked: parameters and results are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.semaphore.async;

import org.jspecify.annotations.NullMarked;
