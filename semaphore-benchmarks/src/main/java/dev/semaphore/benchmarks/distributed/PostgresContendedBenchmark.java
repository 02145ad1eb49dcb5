package dev.semaphore.benchmarks.distributed;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Contended throughput of a semaphore of `permits` permits: 2 processes x 100 workers. This JVM's workers (ours:
 * coroutines; the advisory recipe: threads) do 2 cycles each per invocation, while a second JVM (PostgresLoad, started
 * per trial) runs 100 more of the same implementation the whole time. Ours on PostgreSQL vs the pg_try_advisory_lock slot
 * recipe, and ours on Redis. Score = this JVM's acquisitions per s. The lock's rows: PostgresContendedLockBenchmark.
 */
@BenchmarkMode(Mode.Throughput) @OutputTimeUnit(TimeUnit.SECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2) @Measurement(iterations = 5, time = 2) @Fork(1)
public class PostgresContendedBenchmark {
    /** Workers in this JVM, and in the second one. */
    public static final int WORKERS = 100;
    static final int CYCLES = 2;

    @Param({"1", "8"}) public int permits;

    private ContendedTrial trial;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        trial = new ContendedTrial(RedisPeersKt.implOf(params.getBenchmark()), permits, WORKERS);
    }

    @TearDown(Level.Trial) public void stop() { trial.close(); }

    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_ours() { trial.getPeer().contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_advisory() { trial.getPeer().contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_oursRedis() { trial.getPeer().contended(WORKERS, CYCLES); }
}
