/*
 * What each part of the Java acquire() contract costs, uncontended, one thread: the rows add one part at a time to
 * the same exact-CAS semaphore (PermitContractFloor.java says which part the contract forces and why), with ours and
 * IBM's acquire() in the same invocation. Not part of run.sh's report: profile.sh runs it, and docs/profiles.md
 * reads it (why JavaUncontendedBenchmark's acquireRelease row sits where it does).
 *
 * - exactCas:           tryAcquire + release of ExactCasFloor (two atomic operations; what IBM's cycle amounts to);
 * - closeOnceHandle:    + a close-once handle (one object, one more CAS), no future;
 * - handleInJdkFuture:  + the JDK's own completed future around it (no more atomics): the contract floor since
 *                       API 1.0 (issue 27), where Permit is a plain handle and obtrude* is unsupported;
 * - handleIsOwnFuture:  the contract before API 1.0: the handle is its own future, completed by a CAS, refusing obtrude;
 * - ours:               AsyncSemaphore acquire().join() + Permit.close();
 * - ibm:                FairAsyncSemaphore acquire() + join + release().
 * Each row checks its acquisition succeeded (a floor throws if its permit is taken), so none can look fast by failing.
 */
package dev.semaphore.benchmarks;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import dev.semaphore.async.AsyncSemaphore;
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

/** The Java acquire() contract, part by part, against ours and IBM. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class PermitContractBenchmark {
    private ExactCasFloor exactCas;
    private PermitContractFloor floor;
    private AsyncSemaphore ours;
    private FairAsyncSemaphore ibm;

    /** One permit each. */
    @Setup
    public void setUp() {
        exactCas = new ExactCasFloor(1);
        floor = new PermitContractFloor(1);
        ours = AsyncSemaphore.create(1);
        ibm = new FairAsyncSemaphore(1);
    }

    /** Two atomic operations: the exact CAS on each side. */
    @Benchmark
    public void exactCas() {
        if (!exactCas.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        exactCas.release();
    }

    /** Plus a close-once handle, no future. */
    @Benchmark
    public void closeOnceHandle() {
        floor.acquireHandle().close();
    }

    /** Plus the JDK's own completed future around the handle: the contract floor. */
    @Benchmark
    public void handleInJdkFuture() {
        floor.acquire().join().close();
    }

    /** The contract before API 1.0: the handle is its own future, completed by a CAS. */
    @Benchmark
    public void handleIsOwnFuture() {
        floor.acquireOwnFuture().join().close();
    }

    /** Ours: acquire().join() + Permit.close(). */
    @Benchmark
    public void ours() {
        ours.acquire().join().close();
    }

    /** IBM: acquire() + join + release(). */
    @Benchmark
    public void ibm() {
        ibm.acquire().toCompletableFuture().join();
        ibm.release();
    }
}
