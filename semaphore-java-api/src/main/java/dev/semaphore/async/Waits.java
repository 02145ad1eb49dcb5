package dev.semaphore.async;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** What the public classes share beyond the core: Duration conversion and withPermit over a stage. */
final class Waits {
    private Waits() {}

    /** The timeout in nanoseconds, saturated instead of overflowing (about 292 years means no limit). */
    static long nanos(Duration timeout) {
        return TimeUnit.NANOSECONDS.convert(Objects.requireNonNull(timeout, "timeout"));
    }

    /**
     * Runs {@code action} once {@code acquisition} delivers a permit and closes the permit when the
     * action's stage completes, however; cancelling the result before the grant withdraws the request.
     */
    static <T extends @Nullable Object> CompletableFuture<T> withPermit(
            Supplier<? extends CompletionStage<T>> action, CompletableFuture<Permit> acquisition) {
        CompletableFuture<T> result = new CompletableFuture<>();
        result.whenComplete((v, e) -> acquisition.cancel(false)); // withdraws a request not yet granted
        acquisition.whenComplete((permit, error) -> {
            if (error != null) {
                result.completeExceptionally(unwrap(error));
                return;
            }
            if (result.isDone()) { // cancelled by the caller in the same instant as the grant
                permit.close();
                return;
            }
            try {
                Objects.requireNonNull(action.get(), "the action returned null instead of a CompletionStage").whenComplete((value, failure) -> {
                    permit.close();
                    if (failure != null) result.completeExceptionally(unwrap(failure));
                    else result.complete(value);
                });
            } catch (Throwable t) {
                permit.close();
                result.completeExceptionally(t);
            }
        });
        return result;
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t.getCause();
        return t instanceof CompletionException && c != null ? c : t;
    }
}
