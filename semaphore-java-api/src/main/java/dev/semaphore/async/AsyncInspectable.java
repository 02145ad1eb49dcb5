package dev.semaphore.async;

import dev.semaphore.HoldInfo;
import dev.semaphore.Inspectable;
import dev.semaphore.ListenerRegistration;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.SemaphoreSnapshot;
import dev.semaphore.WaitInfo;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What every Java view shows about its primitive: the Kotlin primitive's diagnostics
 * ({@link Inspectable}, where each is described once), read through the view. What is recorded, and what
 * it costs, is chosen at creation with {@link dev.semaphore.Diagnostics}:
 * {@code AsyncSemaphore.create(8, Diagnostics.named("db").withTracking(Tracking.HOLDERS))}.
 */
public sealed interface AsyncInspectable permits AsyncPermitPool, AsyncLock, AsyncReadWriteLock {
    /** @return the Kotlin primitive this is a view of */
    Inspectable asKotlin();

    /** @return the name given at creation ({@link dev.semaphore.Diagnostics#named(String)}), or null */
    default @Nullable String name() {
        return asKotlin().getName();
    }

    /** @return the counts, line and counters now; {@link SemaphoreSnapshot} says which figures are exact */
    default SemaphoreSnapshot snapshot() {
        return asKotlin().snapshot();
    }

    /**
     * @param listener told of this primitive's events from now on (override only the methods you need)
     * @return its registration, to close; see {@link Inspectable#addListener(SemaphoreListener)}
     */
    default ListenerRegistration addListener(SemaphoreListener listener) {
        return asKotlin().addListener(Objects.requireNonNull(listener, "listener"));
    }

    /** @return the holds alive now, oldest first, while observed; see {@link Inspectable#holders()} */
    default List<HoldInfo> holders() {
        return asKotlin().holders();
    }

    /** @return the requests in line now, in the order they came, while observed; see {@link Inspectable#waiters()} */
    default List<WaitInfo> waiters() {
        return asKotlin().waiters();
    }

    /** @return the snapshot's line, then one line per holder and request in line; see {@link Inspectable#dump()} */
    default String dump() {
        return asKotlin().dump();
    }
}
