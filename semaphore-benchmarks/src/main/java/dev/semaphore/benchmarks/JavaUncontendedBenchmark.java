/*
 * Uncontended cost from Java, one thread: our AsyncSemaphore (the Java front-end of the same engine) vs
 * IBM async-util's FairAsyncSemaphore and java.util.concurrent.Semaphore (fair). Every acquisition
 * succeeds at once; each benchmark checks it did.
 *
 * Method names are <operation>_<impl> (see UncontendedBenchmark). acquireRelease: ours = acquire() future,
 * join, Permit.close(); ibm = acquire() stage, join, release(); juc = blocking acquire(), release(); floor =
 * PermitContractFloor: the least the contract of acquire() (a future of a close-once Permit) can do, the same
 * calls as ours.
 */
package dev.semaphore.benchmarks;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Uncontended acquire/release from Java: ours vs IBM async-util vs java.util.concurrent. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class JavaUncontendedBenchmark {
    private AsyncSemaphore ours;
    private FairAsyncSemaphore ibm;
    private Semaphore juc;
    private PermitContractFloor floor;

    /** One permit each. */
    @Setup
    public void setUp() {
        ours = AsyncSemaphore.create(1);
        ibm = new FairAsyncSemaphore(1);
        juc = new Semaphore(1, true);
        floor = new PermitContractFloor(1);
    }

    /** Ours: acquire() (an already completed future), join, Permit.close(). */
    @Benchmark
    public void acquireRelease_ours() {
        Permit p = ours.acquire().join();
        p.close();
    }

    /** The contract floor: acquire() (a close-once handle in the JDK's completed future), join, close(). */
    @Benchmark
    public void acquireRelease_floor() {
        PermitContractFloor.PlainHandle p = floor.acquire().join();
        p.close();
    }

    /** IBM: acquire() (an already completed stage), join, release(). */
    @Benchmark
    public void acquireRelease_ibm() {
        ibm.acquire().toCompletableFuture().join();
        ibm.release();
    }

    /** java.util.concurrent fair Semaphore: blocking acquire() (does not block here), release(). */
    @Benchmark
    public void acquireRelease_juc() throws InterruptedException {
        juc.acquire();
        juc.release();
    }

    /** Ours: tryAcquire(), release(). */
    @Benchmark
    public void tryAcquireRelease_ours() {
        if (!ours.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        ours.release();
    }

    /** IBM: tryAcquire(), release(). */
    @Benchmark
    public void tryAcquireRelease_ibm() {
        if (!ibm.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        ibm.release();
    }

    /** java.util.concurrent fair Semaphore: tryAcquire(), release(). */
    @Benchmark
    public void tryAcquireRelease_juc() {
        if (!juc.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        juc.release();
    }
}
