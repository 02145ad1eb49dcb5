package dev.semaphore.benchmarks.distributed;

import dev.semaphore.redis.LocalRedisServer;
import java.io.File;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.*;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Contended throughput on a redis-server: 2 processes x 100 workers on one semaphore of `permits` permits. This JVM's
 * workers (ours: coroutines; Redisson: threads) do 2 cycles each per invocation, while a second JVM (RedisLoad,
 * started per trial) runs 100 more of the same implementation the whole time. Score = this JVM's acquisitions per s.
 */
@BenchmarkMode(Mode.Throughput) @OutputTimeUnit(TimeUnit.SECONDS) @State(Scope.Benchmark)
@Warmup(iterations = 3, time = 2) @Measurement(iterations = 5, time = 2) @Fork(1)
public class DistributedContendedBenchmark {
    /** Workers in this JVM, and in the second one (read by the report). */
    public static final int WORKERS = 100;
    static final int CYCLES = 2;

    /** Permits of the semaphore (a lock would have 1). */
    @Param({"1", "8"}) public int permits;

    private LocalRedisServer server;
    private Peer peer;
    private Process load;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) throws IOException {
        String impl = RedisPeersKt.implOf(params.getBenchmark());
        int total = impl.endsWith("Lock") ? 1 : permits;
        String name = "contended-" + impl;
        server = LocalRedisServer.Companion.start(false);
        peer = RedisPeersKt.peer(server.getUri(), impl, name, total);
        load = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(), "-Xmx512m",
            "-cp", System.getProperty("java.class.path"), RedisLoad.class.getName(),
            impl, server.getUri(), name, String.valueOf(total), String.valueOf(WORKERS))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String first = load.inputReader().readLine();
        if (!"LOAD RUNNING".equals(first)) throw new IllegalStateException("the load process said " + first);
    }

    @TearDown(Level.Trial) public void stop() throws InterruptedException { load.destroyForcibly().waitFor(); peer.close(); server.close(); }

    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_ours() { peer.contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_redissonSemaphore() { peer.contended(WORKERS, CYCLES); }
    @Benchmark @OperationsPerInvocation(WORKERS * CYCLES) public void contended_redissonPermitExpirable() { peer.contended(WORKERS, CYCLES); }
}
