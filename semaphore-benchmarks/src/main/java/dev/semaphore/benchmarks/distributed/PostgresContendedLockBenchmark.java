package dev.semaphore.benchmarks.distributed;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * PostgresContendedBenchmark's shape on a lock (1 permit): 2 processes x 100 workers, 2 cycles each per invocation in
 * this JVM while the second runs. Our DistributedLock on PostgreSQL vs Spring Integration's JdbcLockRegistry, and our
 * lock on Redis. Score = this JVM's acquisitions per s.
 */
@BenchmarkMode(Mode.Throughput) @OutputTimeUnit(TimeUnit.SECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2) @Measurement(iterations = 5, time = 2) @Fork(1)
public class PostgresContendedLockBenchmark {
    static final int WORKERS = PostgresContendedBenchmark.WORKERS;
    static final int CYCLES = PostgresContendedBenchmark.CYCLES;

    private ContendedTrial trial;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        trial = new ContendedTrial(RedisPeersKt.implOf(params.getBenchmark()), 1, WORKERS);
    }

    @TearDown(Level.Trial) public void stop() { trial.close(); }

    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_oursLock() { trial.getPeer().contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_springJdbcLock() { trial.getPeer().contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_oursRedisLock() { trial.getPeer().contended(WORKERS, CYCLES); }
}
