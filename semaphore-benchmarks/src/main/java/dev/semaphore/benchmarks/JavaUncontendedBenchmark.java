package dev.semaphore.benchmarks;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Uncontended acquire + release from Java, one thread: our AsyncSemaphore vs IBM's FairAsyncSemaphore and the JDK's fair
 * Semaphore, with the floor PermitContractFloor. Methods are named {@code <operation>_<impl>}.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Thread)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class JavaUncontendedBenchmark {
    private AsyncSemaphore ours = AsyncSemaphore.create(1);
    private FairAsyncSemaphore ibm = new FairAsyncSemaphore(1);
    private Semaphore juc = new Semaphore(1, true);
    private PermitContractFloor floor = new PermitContractFloor(1);

    @Benchmark public void acquireRelease_ours() { Permit p = ours.acquire().join(); p.close(); }
    @Benchmark public void acquireRelease_floor() { PermitContractFloor.Handle p = floor.acquire().join(); p.close(); }
    @Benchmark public void acquireRelease_ibm() { ibm.acquire().toCompletableFuture().join(); ibm.release(); }
    @Benchmark public void acquireRelease_juc() throws InterruptedException { juc.acquire(); juc.release(); }

    @Benchmark public void tryAcquireRelease_ours() {
        if (!ours.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        ours.release();
    }

    @Benchmark public void tryAcquireRelease_ibm() {
        if (!ibm.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        ibm.release();
    }

    @Benchmark public void tryAcquireRelease_juc() {
        if (!juc.tryAcquire()) throw new IllegalStateException("uncontended tryAcquire failed");
        juc.release();
    }
}
