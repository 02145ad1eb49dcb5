/*
 * Contended throughput on a real redis-server: 2 processes x 100 workers on one semaphore of 1 or 8
 * permits (the locks: 1). This JVM runs 100 workers (ours: coroutines; Redisson: threads, its blocking
 * API) doing 2 acquire-release cycles each per invocation; a second JVM (RedisLoad, started per trial)
 * runs 100 more of the same implementation on the same semaphore the whole time. The score is this
 * JVM's acquisitions per second.
 */
package dev.semaphore.benchmarks.distributed;

import dev.semaphore.redis.LocalRedisServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class DistributedContendedBenchmark {
    /** Workers in this JVM, and in the second one (read by the report). */
    public static final int WORKERS = 100;
    static final int CYCLES = 2;

    /** Permits of the semaphore (the lock methods ignore it and run only with 1). */
    @Param({"1", "8"})
    public int permits;

    private LocalRedisServer server;
    private Peer peer;
    private Process load;

    @Setup(Level.Trial)
    public void start(BenchmarkParams params) throws IOException {
        String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
        String impl = method.substring(method.indexOf('_') + 1);
        int total = impl.endsWith("Lock") ? 1 : permits;
        String name = "contended-" + impl;
        server = LocalRedisServer.Companion.start(false);
        peer = RedisPeersKt.peer(server.getUri(), impl, name, total);
        load = new ProcessBuilder(new File(System.getProperty("java.home"), "bin/java").getPath(), "-Xmx512m",
            "-cp", System.getProperty("java.class.path"), RedisLoad.class.getName(),
            impl, server.getUri(), name, String.valueOf(total), String.valueOf(WORKERS))
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String first = new BufferedReader(new InputStreamReader(load.getInputStream())).readLine();
        if (!"LOAD RUNNING".equals(first)) throw new IllegalStateException("the load process said " + first);
    }

    @TearDown(Level.Trial)
    public void stop() throws InterruptedException {
        load.destroyForcibly().waitFor();
        peer.close();
        server.close();
    }

    @Benchmark
    @OperationsPerInvocation(WORKERS * CYCLES)
    public void contended_ours() {
        peer.contended(WORKERS, CYCLES);
    }

    @Benchmark
    @OperationsPerInvocation(WORKERS * CYCLES)
    public void contended_redissonSemaphore() {
        peer.contended(WORKERS, CYCLES);
    }

    @Benchmark
    @OperationsPerInvocation(WORKERS * CYCLES)
    public void contended_redissonPermitExpirable() {
        peer.contended(WORKERS, CYCLES);
    }
}
