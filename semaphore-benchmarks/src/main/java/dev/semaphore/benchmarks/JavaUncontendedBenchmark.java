package dev.semaphore.benchmarks;

import com.ibm.asyncutil.locks.FairAsyncSemaphore;
import dev.semaphore.async.AsyncSemaphore;
import dev.semaphore.async.Permit;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;

/**
 * Uncontended acquire + release from Java, one thread: our AsyncSemaphore vs IBM's FairAsyncSemaphore and the JDK's fair
 * Semaphore, with the floor PermitContractFloor. Methods are named {@code <operation>_<impl>}, and the report divides
 * only rows of one operation: acquireRelease is the future form (ours: {@code acquire().join()}), acquireBlockingRelease
 * the blocking form ({@code acquireBlocking()}, a Permit closed once), tryAcquireTimedRelease the blocking form without
 * a handle ({@code tryAcquire(timeout)}, then {@code release()}). The JDK's {@code acquire()} is blocking, so its row is
 * the same call under the first two names (IBM has no blocking form). Fields are package-private for WorkloadsTest.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.NANOSECONDS) @State(Scope.Thread)
@Warmup(iterations = 5, time = 1) @Measurement(iterations = 5, time = 1) @Fork(2)
public class JavaUncontendedBenchmark {
    AsyncSemaphore ours = AsyncSemaphore.create(1);
    FairAsyncSemaphore ibm = new FairAsyncSemaphore(1);
    Semaphore juc = new Semaphore(1, true);
    PermitContractFloor floor = new PermitContractFloor(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(1); // never reached: every request is granted at once

    @Benchmark public void acquireRelease_ours() { Permit p = ours.acquire().join(); p.close(); }
    @Benchmark public void acquireRelease_floor() { PermitContractFloor.Handle p = floor.acquire().join(); p.close(); }
    @Benchmark public void acquireRelease_ibm() { ibm.acquire().toCompletableFuture().join(); ibm.release(); }
    @Benchmark public void acquireRelease_juc() throws InterruptedException { juc.acquire(); juc.release(); }

    @Benchmark public void acquireBlockingRelease_ours() throws InterruptedException { Permit p = ours.acquireBlocking(); p.close(); }
    @Benchmark public void acquireBlockingRelease_floor() { PermitContractFloor.Handle p = floor.acquireNow(); p.close(); }
    @Benchmark public void acquireBlockingRelease_juc() throws InterruptedException { juc.acquire(); juc.release(); }

    @Benchmark public void tryAcquireTimedRelease_ours() throws InterruptedException {
        if (!ours.tryAcquire(TIMEOUT)) throw new IllegalStateException("uncontended tryAcquire(timeout) failed");
        ours.release();
    }

    @Benchmark public void tryAcquireTimedRelease_juc() throws InterruptedException {
        if (!juc.tryAcquire(1, TimeUnit.SECONDS)) throw new IllegalStateException("uncontended tryAcquire(timeout) failed");
        juc.release();
    }

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
