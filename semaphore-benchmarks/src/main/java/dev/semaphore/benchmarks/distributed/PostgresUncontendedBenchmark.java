package dev.semaphore.benchmarks.distributed;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Uncontended acquire + release, one thread, on a server of its own per fork (loopback): ours on PostgreSQL
 * (DistributedSemaphore, DistributedLock) vs the pg_try_advisory_lock slot recipe and Spring Integration's JdbcLockRegistry
 * on a local PostgreSQL, and ours on a local redis-server (PostgresPeers.kt). Mostly round trips to the server.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MICROSECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class PostgresUncontendedBenchmark {
    private PeerServer server;
    private Peer peer;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        String impl = RedisPeersKt.implOf(params.getBenchmark());
        server = new PeerServer(impl);
        peer = PostgresPeersKt.postgresPeer(server.getTarget(), impl, "uncontended-" + impl, 1);
    }

    @TearDown(Level.Trial) public void stop() { peer.close(); server.close(); }

    @Benchmark public long acquireRelease_ours() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_oursLock() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_advisory() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_springJdbcLock() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_oursRedis() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_oursRedisLock() { return peer.acquireRelease(); }
}
