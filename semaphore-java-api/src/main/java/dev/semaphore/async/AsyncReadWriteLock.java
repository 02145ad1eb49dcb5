package dev.semaphore.async;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import dev.semaphore.HoldKind;
import dev.semaphore.JavaBridge;
import dev.semaphore.ReadWriteLock;
import dev.semaphore.ReadWriteLockKt;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A fair read-write lock for Java: many readers or one writer, each hold a {@link Permit} from a future
 * or a blocking call (closing it ends that hold). It is a view of a Kotlin {@link ReadWriteLock}:
 * readers, writers and upgradable readers, whether coroutines, futures or blocked threads, stand in
 * one FIFO line, under the <a href="package-summary.html#fairness">rules of the package</a>; a queued
 * writer makes the readers behind it wait, and withdrawing it lets them in.
 *
 * <p><b>Holds.</b> Each {@code Permit} stands for one hold: closing it ends that hold only, once. An
 * <b>upgradable read</b> shares the lock with plain readers (one at a time) and can become the write
 * hold with {@link #upgrade(Permit)}, with no writer in between; {@link #downgrade(Permit)} turns a write
 * hold into a read hold. Once done, both have spent the permit passed in: closing it then does nothing.
 * An upgrade that fails leaves the upgradable read held, as in Kotlin. Not
 * reentrant: taking a second hold while holding one can deadlock. The Kotlin lock's holds are
 * anonymous: Kotlin code must not end ({@code unlockRead()}...) a hold that a {@code Permit} stands for.
 *
 * <pre>{@code
 * AsyncReadWriteLock lock = AsyncReadWriteLock.create();
 * try (Permit read = lock.readLockBlocking()) {         // many readers at once
 *     render(cache.toString());
 * }
 * try (Permit upgradable = lock.upgradableReadLock().join()) {
 *     if (cache.isEmpty()) {
 *         try (Permit write = lock.upgrade(upgradable).join()) {   // no writer in between
 *             cache.add(load());
 *         }
 *     }
 * }
 * }</pre>
 */
public final class AsyncReadWriteLock {
    private final ReadWriteLock kotlin;

    private AsyncReadWriteLock(ReadWriteLock kotlin) {
        this.kotlin = kotlin;
    }

    /** @return a new lock, with nothing held */
    public static AsyncReadWriteLock create() {
        return new AsyncReadWriteLock(ReadWriteLockKt.ReadWriteLock());
    }

    /**
     * @param shared a Kotlin lock (waiting needs one made by the library's {@code ReadWriteLock()} factory)
     * @return a Java view of {@code shared}: Java and Kotlin code share one line
     */
    public static AsyncReadWriteLock of(ReadWriteLock shared) {
        return new AsyncReadWriteLock(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin lock this is a view of */
    public ReadWriteLock asKotlin() {
        return kotlin;
    }

    /** @return a future of a read hold (<a href="package-summary.html#withdrawing">withdrawing</a>) */
    public CompletableFuture<Permit> readLock() {
        return JavaBridge.lockAsync(kotlin, HoldKind.READ, Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of a read hold
     */
    public CompletableFuture<Permit> readLock(Duration timeout) {
        return JavaBridge.lockAsync(kotlin, HoldKind.READ, Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /** @return a future of the write hold */
    public CompletableFuture<Permit> writeLock() {
        return JavaBridge.lockAsync(kotlin, HoldKind.WRITE, Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param timeout the longest wait
     * @return a future of the write hold
     */
    public CompletableFuture<Permit> writeLock(Duration timeout) {
        return JavaBridge.lockAsync(kotlin, HoldKind.WRITE, Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /** @return a future of the upgradable read */
    public CompletableFuture<Permit> upgradableReadLock() {
        return JavaBridge.lockAsync(kotlin, HoldKind.UPGRADABLE_READ, Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param timeout the longest wait
     * @return a future of the upgradable read
     */
    public CompletableFuture<Permit> upgradableReadLock(Duration timeout) {
        return JavaBridge.lockAsync(kotlin, HoldKind.UPGRADABLE_READ, Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @return a read hold, to be closed (<a href="package-summary.html#interrupts">interrupts</a>)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit readLockBlocking() throws InterruptedException {
        return blocking(HoldKind.READ, Waits.FOREVER).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return a read hold, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> readLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.READ, Waits.nanos(timeout));
    }

    /**
     * @return the write hold, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit writeLockBlocking() throws InterruptedException {
        return blocking(HoldKind.WRITE, Waits.FOREVER).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return the write hold, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> writeLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.WRITE, Waits.nanos(timeout));
    }

    /**
     * @return the upgradable read, to be closed or upgraded
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit upgradableReadLockBlocking() throws InterruptedException {
        return blocking(HoldKind.UPGRADABLE_READ, Waits.FOREVER).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return the upgradable read, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> upgradableReadLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.UPGRADABLE_READ, Waits.nanos(timeout));
    }

    /**
     * Turns an upgradable read into the write hold: the future completes once every other read hold has
     * ended; it is served before everyone queued, and no writer gets in between. Once it completes,
     * {@code upgradable} is spent (closing it does nothing). If the upgrade does not happen (the future
     * withdrawn, or timed out), {@code upgradable} still holds the upgradable read, before the future
     * completes, so it can be closed or upgraded again. Closing {@code upgradable} while its upgrade waits
     * withdraws the upgrade and ends the read.
     *
     * @param upgradable a permit of {@link #upgradableReadLock()} (or its blocking forms) of this lock
     * @return a future of the write hold
     * @throws IllegalArgumentException if {@code upgradable} is not an upgradable read of this lock
     * @throws IllegalStateException if {@code upgradable} was closed, is upgraded or being upgraded, or
     *     Kotlin code is upgrading the lock's upgradable read; nothing changes
     */
    public CompletableFuture<Permit> upgrade(Permit upgradable) {
        return JavaBridge.upgradeAsync(kotlin, Objects.requireNonNull(upgradable, "upgradable").hold, Waits.FOREVER, NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * @param upgradable a permit of an upgradable read of this lock
     * @param timeout the longest wait
     * @return a future of the write hold; see {@link #upgrade(Permit)}
     */
    public CompletableFuture<Permit> upgrade(Permit upgradable, Duration timeout) {
        return JavaBridge.upgradeAsync(kotlin, Objects.requireNonNull(upgradable, "upgradable").hold, Waits.nanos(timeout), NANOSECONDS, Permit.OF_HOLD);
    }

    /**
     * {@link #upgrade(Permit)} on a blocked thread: if the time runs out or the thread is interrupted,
     * {@code upgradable} still holds the upgradable read.
     *
     * @param upgradable a permit of an upgradable read of this lock
     * @param timeout the longest wait
     * @return the write hold, or empty if the time ran out
     * @throws InterruptedException if interrupted, with the upgradable read still held
     */
    public Optional<Permit> upgradeBlocking(Permit upgradable, Duration timeout) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.upgradeBlocking(kotlin, Objects.requireNonNull(upgradable, "upgradable").hold,
                Waits.nanos(timeout), NANOSECONDS)).map(Permit::new);
    }

    /**
     * Turns a write hold into a read hold, atomically; the readers first in line are then let in.
     *
     * @param write a permit of the write hold of this lock, which is spent (closing it does nothing)
     * @return the read hold
     * @throws IllegalArgumentException if {@code write} is not a write hold of this lock
     * @throws IllegalStateException if {@code write} was closed or downgraded already; nothing changes
     */
    public Permit downgrade(Permit write) {
        return new Permit(JavaBridge.downgrade(kotlin, Objects.requireNonNull(write, "write").hold));
    }

    @Override
    public String toString() {
        return "AsyncReadWriteLock(" + kotlin + ")";
    }

    private Optional<Permit> blocking(HoldKind kind, long nanos) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.lockBlocking(kotlin, kind, nanos, NANOSECONDS)).map(Permit::new);
    }
}
