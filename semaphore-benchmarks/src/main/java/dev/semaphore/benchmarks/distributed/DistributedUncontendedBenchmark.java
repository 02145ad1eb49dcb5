package dev.semaphore.benchmarks.distributed;

import dev.semaphore.redis.LocalRedisServer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Uncontended acquire + release on a redis-server of its own per fork (loopback): ours (DistributedSemaphore, DistributedLock) vs
 * Redisson's RSemaphore, RPermitExpirableSemaphore and RFairLock, one thread. Mostly round trips to the server.
 */
@BenchmarkMode(Mode.AverageTime) @OutputTimeUnit(TimeUnit.MICROSECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 1) @Measurement(iterations = 5, time = 1) @Fork(1)
public class DistributedUncontendedBenchmark {
    private LocalRedisServer server;
    private Peer peer;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        String impl = RedisPeersKt.implOf(params.getBenchmark());
        server = LocalRedisServer.Companion.start(false);
        peer = RedisPeersKt.peer(server.getUri(), impl, "uncontended-" + impl, 1);
    }

    @TearDown(Level.Trial) public void stop() { peer.close(); server.close(); }

    @Benchmark public long acquireRelease_ours() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_oursLock() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_redissonSemaphore() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_redissonPermitExpirable() { return peer.acquireRelease(); }
    @Benchmark public long acquireRelease_redissonFairLock() { return peer.acquireRelease(); }
}
