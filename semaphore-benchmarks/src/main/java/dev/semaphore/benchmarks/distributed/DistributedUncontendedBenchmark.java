/*
 * Uncontended acquire + release on a real redis-server (one per fork, on a loopback port, started as
 * semaphore-redis's tests start it): ours (RedisSemaphore, RedisLock) vs Redisson's RSemaphore,
 * RPermitExpirableSemaphore and RFairLock, one thread, in the same run. Each call is one acquisition
 * and one release; most of the time is the round trips to the server.
 */
package dev.semaphore.benchmarks.distributed;

import dev.semaphore.redis.LocalRedisServer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class DistributedUncontendedBenchmark {
    private LocalRedisServer server;
    private Peer peer;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) {
        String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
        String impl = method.substring(method.indexOf('_') + 1);
        server = LocalRedisServer.Companion.start(false);
        peer = RedisPeersKt.peer(server.getUri(), impl, "uncontended-" + impl, 1);
    }

    @TearDown(Level.Trial)
    public void stop() {
        peer.close();
        server.close();
    }

    @Benchmark
    public long acquireRelease_ours() {
        return peer.acquireRelease();
    }

    @Benchmark
    public long acquireRelease_oursLock() {
        return peer.acquireRelease();
    }

    @Benchmark
    public long acquireRelease_redissonSemaphore() {
        return peer.acquireRelease();
    }

    @Benchmark
    public long acquireRelease_redissonPermitExpirable() {
        return peer.acquireRelease();
    }

    @Benchmark
    public long acquireRelease_redissonFairLock() {
        return peer.acquireRelease();
    }
}
