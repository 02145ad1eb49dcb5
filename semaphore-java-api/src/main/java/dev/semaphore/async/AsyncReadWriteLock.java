package dev.semaphore.async;

import static dev.semaphore.bridge.JavaBridge.NO_TIMEOUT;

import dev.semaphore.Diagnostics;
import dev.semaphore.ReadWriteLock;
import dev.semaphore.ReadWriteLockKt;
import dev.semaphore.ReadWritePolicy;
import dev.semaphore.bridge.HoldKind;
import dev.semaphore.bridge.JavaBridge;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A fair read-write lock for Java: many readers or one writer, with one upgradable reader at a time. It
 * is a view of a Kotlin {@link ReadWriteLock}: readers, writers and upgradable readers, whether
 * coroutines, futures or blocked threads, stand in one FIFO line, under the
 * <a href="package-summary.html#fairness">rules of the package</a>; a queued writer makes the readers
 * behind it wait, and withdrawing it lets them in. {@code create(ReadWritePolicy.PHASE_FAIR)} makes a
 * phase-fair lock instead: when a write ends, every waiting reader is admitted together, then the next
 * writer; {@code create(ReadWritePolicy.WRITERS_LINE)} one whose writers wait in a line of their own,
 * one at a time in the lock's line (each constant lists its guarantees).
 *
 * <p>Each kind of hold (read, write, upgradable read) has the families of {@link AsyncPermitPool}, for
 * one hold: a future ({@code readLock()}), blocking ({@code readLockBlocking()}), the
 * {@code java.util.concurrent} try forms returning a boolean ({@code tryReadLock()}, then
 * {@code unlockRead()}; with a timeout they block) and {@code withReadLock(...)}; likewise
 * {@code writeLock}, {@code upgradableReadLock}.
 *
 * <p><b>Holds.</b> Each {@code Permit} stands for one hold: closing it ends that hold only, once. An
 * <b>upgradable read</b> shares the lock with plain readers and can become the write hold with
 * {@link #upgrade(Permit)}, with no writer in between; {@link #downgrade(Permit)} turns a write hold into
 * a read hold. Once done, both have spent the permit passed in: closing it then does nothing. An upgrade
 * that fails leaves the upgradable read held, as in Kotlin. There is no {@code withUpgradableReadLock}:
 * an upgrade hands out a new {@code Permit}, which the action would have to close itself; use
 * try-with-resources on both. Not reentrant: taking a second hold while holding one can deadlock. The
 * {@code unlock...} methods end a hold of their kind, whoever took it (holds have no owners).
 *
 * <pre>{@code
 * AsyncReadWriteLock lock = AsyncReadWriteLock.create();
 * String shown = lock.withReadLock(() -> render(cache)).join();  // many readers at once
 * try (Permit upgradable = lock.upgradableReadLockBlocking()) {
 *     if (cache.isEmpty()) {
 *         try (Permit write = lock.upgradeBlocking(upgradable)) {   // no writer in between
 *             cache.add(load());
 *         }
 *     }
 * }
 * }</pre>
 */
public final class AsyncReadWriteLock implements AsyncInspectable {
    private final ReadWriteLock kotlin;

    private AsyncReadWriteLock(ReadWriteLock kotlin) {
        this.kotlin = kotlin;
    }

    /** @return a new lock, with nothing held */
    public static AsyncReadWriteLock create() {
        return new AsyncReadWriteLock(ReadWriteLockKt.ReadWriteLock(Diagnostics.NONE));
    }

    /**
     * @param diagnostics what it reports about itself, such as its name: {@code Diagnostics.named("cache")}
     * @return a new read-write lock, with nothing held
     */
    public static AsyncReadWriteLock create(Diagnostics diagnostics) {
        return new AsyncReadWriteLock(ReadWriteLockKt.ReadWriteLock(Objects.requireNonNull(diagnostics, "diagnostics")));
    }

    /**
     * @param policy the order it serves its waiters in: {@link ReadWritePolicy#FIFO} (what {@link #create()}
     *     makes), {@link ReadWritePolicy#PHASE_FAIR} (every waiting reader admitted together when a write
     *     ends, then the next writer) or {@link ReadWritePolicy#WRITERS_LINE} (writers wait in a line of
     *     their own, one at a time in the lock's line); their guarantees are listed on the constants
     * @return a new read-write lock, with nothing held
     */
    public static AsyncReadWriteLock create(ReadWritePolicy policy) {
        return new AsyncReadWriteLock(ReadWriteLockKt.ReadWriteLock(Objects.requireNonNull(policy, "policy"), Diagnostics.NONE));
    }

    /**
     * @param policy the order it serves its waiters in (see {@link #create(ReadWritePolicy)})
     * @param diagnostics what it reports about itself, such as its name: {@code Diagnostics.named("cache")}
     * @return a new read-write lock, with nothing held
     */
    public static AsyncReadWriteLock create(ReadWritePolicy policy, Diagnostics diagnostics) {
        return new AsyncReadWriteLock(ReadWriteLockKt.ReadWriteLock(
                Objects.requireNonNull(policy, "policy"), Objects.requireNonNull(diagnostics, "diagnostics")));
    }

    /** @return the order this lock serves its waiters in, chosen at creation */
    public ReadWritePolicy policy() {
        return kotlin.getPolicy();
    }

    /**
     * @param shared a Kotlin lock (waiting needs one made by the library's {@code ReadWriteLock()} factory)
     * @return a Java view of {@code shared}: Java and Kotlin code share one line
     */
    public static AsyncReadWriteLock of(ReadWriteLock shared) {
        return new AsyncReadWriteLock(Objects.requireNonNull(shared, "shared"));
    }

    /** @return the Kotlin lock this is a view of */
    @Override
    public ReadWriteLock asKotlin() {
        return kotlin;
    }


    // ---- read ----

    /** @return a future of a read hold (<a href="package-summary.html#withdrawing">withdrawing</a>) */
    public CompletableFuture<Permit> readLock() {
        return future(HoldKind.READ, NO_TIMEOUT);
    }

    /**
     * @param timeout the longest wait (<a href="package-summary.html#timeouts">timeouts</a>)
     * @return a future of a read hold
     */
    public CompletableFuture<Permit> readLock(Duration timeout) {
        return future(HoldKind.READ, Waits.nanos(timeout));
    }

    /**
     * @return a read hold, to be closed (<a href="package-summary.html#interrupts">interrupts</a>)
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit readLockBlocking() throws InterruptedException {
        return blocking(HoldKind.READ, NO_TIMEOUT).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return a read hold, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> readLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.READ, Waits.nanos(timeout));
    }

    /** @return true if a read hold was taken now, with nobody ahead in line; end it with {@link #unlockRead()} */
    public boolean tryReadLock() {
        return kotlin.tryLockRead();
    }

    /**
     * <b>Blocks</b> for at most {@code timeout}, as {@code java.util.concurrent.locks.Lock.tryLock(time, unit)}.
     *
     * @param timeout the longest wait
     * @return true if a read hold is taken (end it with {@link #unlockRead()}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryReadLock(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.READ, Waits.nanos(timeout)).isPresent();
    }

    /** Ends one read hold; see {@link ReadWriteLock#unlockRead()}. */
    public void unlockRead() {
        kotlin.unlockRead();
    }

    /**
     * @param action starts the work and returns its stage; the read hold is ended when it completes
     * @param <T> the result type
     * @return a future of the action's result; see {@link AsyncPermitPool#withPermit(int, Supplier)}
     */
    public <T extends @Nullable Object> CompletableFuture<T> withReadLock(Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), readLock());
    }

    // ---- write ----

    /** @return a future of the write hold */
    public CompletableFuture<Permit> writeLock() {
        return future(HoldKind.WRITE, NO_TIMEOUT);
    }

    /**
     * @param timeout the longest wait
     * @return a future of the write hold
     */
    public CompletableFuture<Permit> writeLock(Duration timeout) {
        return future(HoldKind.WRITE, Waits.nanos(timeout));
    }

    /**
     * @return the write hold, to be closed
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit writeLockBlocking() throws InterruptedException {
        return blocking(HoldKind.WRITE, NO_TIMEOUT).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return the write hold, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> writeLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.WRITE, Waits.nanos(timeout));
    }

    /** @return true if the write hold was taken now (nothing held, nobody queued); end it with {@link #unlockWrite()} */
    public boolean tryWriteLock() {
        return kotlin.tryLockWrite();
    }

    /**
     * <b>Blocks</b> for at most {@code timeout}.
     *
     * @param timeout the longest wait
     * @return true if the write hold is taken (end it with {@link #unlockWrite()}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryWriteLock(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.WRITE, Waits.nanos(timeout)).isPresent();
    }

    /** Ends the write hold; see {@link ReadWriteLock#unlockWrite()}. */
    public void unlockWrite() {
        kotlin.unlockWrite();
    }

    /**
     * @param action starts the work and returns its stage; the write hold is ended when it completes
     * @param <T> the result type
     * @return a future of the action's result; see {@link AsyncPermitPool#withPermit(int, Supplier)}
     */
    public <T extends @Nullable Object> CompletableFuture<T> withWriteLock(Supplier<? extends CompletionStage<T>> action) {
        return Waits.withPermit(Objects.requireNonNull(action, "action"), writeLock());
    }

    // ---- upgradable read ----

    /** @return a future of the upgradable read */
    public CompletableFuture<Permit> upgradableReadLock() {
        return future(HoldKind.UPGRADABLE_READ, NO_TIMEOUT);
    }

    /**
     * @param timeout the longest wait
     * @return a future of the upgradable read
     */
    public CompletableFuture<Permit> upgradableReadLock(Duration timeout) {
        return future(HoldKind.UPGRADABLE_READ, Waits.nanos(timeout));
    }

    /**
     * @return the upgradable read, to be closed or upgraded
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Permit upgradableReadLockBlocking() throws InterruptedException {
        return blocking(HoldKind.UPGRADABLE_READ, NO_TIMEOUT).orElseThrow();
    }

    /**
     * @param timeout the longest wait
     * @return the upgradable read, or empty if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public Optional<Permit> upgradableReadLockBlocking(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.UPGRADABLE_READ, Waits.nanos(timeout));
    }

    /** @return true if the upgradable read was taken now; end it with {@link #unlockUpgradableRead()} */
    public boolean tryUpgradableReadLock() {
        return kotlin.tryLockUpgradableRead();
    }

    /**
     * <b>Blocks</b> for at most {@code timeout}.
     *
     * @param timeout the longest wait
     * @return true if the upgradable read is taken (end it with {@link #unlockUpgradableRead()}), false if the time ran out
     * @throws InterruptedException if interrupted, with nothing held
     */
    public boolean tryUpgradableReadLock(Duration timeout) throws InterruptedException {
        return blocking(HoldKind.UPGRADABLE_READ, Waits.nanos(timeout)).isPresent();
    }

    /** Ends the upgradable read; see {@link ReadWriteLock#unlockUpgradableRead()}. */
    public void unlockUpgradableRead() {
        kotlin.unlockUpgradableRead();
    }

    // ---- upgrade and downgrade ----

    /**
     * Turns an upgradable read into the write hold: the future completes once every other read hold has
     * ended; it is served before everyone queued, and no writer gets in between. Once it completes,
     * {@code upgradable} is spent (closing it does nothing). If the upgrade does not happen (the future
     * withdrawn, timed out, or the lock closed), {@code upgradable} still holds the upgradable read, before
     * the future completes, so it can be closed or upgraded again. Closing {@code upgradable} while its
     * upgrade waits withdraws the upgrade and ends the read.
     *
     * @param upgradable a permit of {@link #upgradableReadLock()} (or its blocking forms) of this lock
     * @return a future of the write hold
     * @throws IllegalArgumentException if {@code upgradable} is not an upgradable read of this lock
     * @throws IllegalStateException if {@code upgradable} was closed, is upgraded or being upgraded, or
     *     Kotlin code is upgrading the lock's upgradable read; nothing changes
     */
    public CompletableFuture<Permit> upgrade(Permit upgradable) {
        return JavaBridge.upgradeAsync(kotlin, hold(upgradable, "upgradable"), NO_TIMEOUT, Permit.OF_HOLD);
    }

    /**
     * @param upgradable a permit of an upgradable read of this lock
     * @param timeout the longest wait
     * @return a future of the write hold; see {@link #upgrade(Permit)}
     */
    public CompletableFuture<Permit> upgrade(Permit upgradable, Duration timeout) {
        return JavaBridge.upgradeAsync(kotlin, hold(upgradable, "upgradable"), Waits.nanos(timeout), Permit.OF_HOLD);
    }

    /**
     * {@link #upgrade(Permit)} on a blocked thread; if the thread is interrupted, {@code upgradable} still
     * holds the upgradable read.
     *
     * @param upgradable a permit of an upgradable read of this lock
     * @return the write hold, to be closed
     * @throws InterruptedException if interrupted, with the upgradable read still held
     */
    public Permit upgradeBlocking(Permit upgradable) throws InterruptedException {
        return Objects.requireNonNull(JavaBridge.upgradeBlocking(kotlin, hold(upgradable, "upgradable"), NO_TIMEOUT, Permit.OF_HOLD));
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
        return Optional.ofNullable(JavaBridge.upgradeBlocking(kotlin, hold(upgradable, "upgradable"), Waits.nanos(timeout), Permit.OF_HOLD));
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
        return JavaBridge.downgrade(kotlin, hold(write, "write"), Permit.OF_HOLD);
    }

    // ---- queries and close ----

    /** @return the read holds right now, the upgradable read counting as one (a snapshot) */
    public int readHolds() {
        return kotlin.getReadHolds();
    }

    /** @return true while the write hold is taken (a snapshot) */
    public boolean isWriteLocked() {
        return kotlin.isWriteLocked();
    }

    /** @return the waiters in line right now, of every kind (a snapshot) */
    public int queueLength() {
        return kotlin.getQueueLength();
    }

    /** @return true once {@link #close(Throwable)} was called */
    public boolean isClosed() {
        return kotlin.isClosed();
    }

    /**
     * Fails every waiter with {@link dev.semaphore.SemaphoreClosedException} carrying {@code cause}, and
     * every later acquisition; holds already taken may still be ended. See {@link ReadWriteLock#close(Throwable)}.
     *
     * @param cause the reason, or null
     */
    public void close(@Nullable Throwable cause) {
        kotlin.close(cause);
    }

    @Override
    public String toString() {
        return "AsyncReadWriteLock(" + kotlin + ")";
    }

    private CompletableFuture<Permit> future(HoldKind kind, long nanos) {
        return JavaBridge.lockAsync(kotlin, kind, nanos, Permit.OF_HOLD);
    }

    private Optional<Permit> blocking(HoldKind kind, long nanos) throws InterruptedException {
        return Optional.ofNullable(JavaBridge.lockBlocking(kotlin, kind, nanos, Permit.OF_HOLD));
    }

    private static dev.semaphore.bridge.@Nullable LockHold hold(Permit permit, String name) {
        return Objects.requireNonNull(permit, name).hold;
    }
}
