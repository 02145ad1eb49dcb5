package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import kotlinx.coroutines.CoroutineDispatcher;
import kotlinx.coroutines.Dispatchers;
import kotlinx.coroutines.ExecutorsKt;

/**
 * A coroutine dispatcher by name, made per trial and closed after it: "default" (Dispatchers.Default, parallelism
 * max(2, cores)), "io" (Dispatchers.IO, parallelism 64) or "poolN" (a fixed pool of N daemon threads).
 */
final class BenchDispatchers implements AutoCloseable {
    final CoroutineDispatcher dispatcher;
    final int parallelism;
    private final ExecutorService pool;

    private BenchDispatchers(CoroutineDispatcher dispatcher, int parallelism, ExecutorService pool) {
        this.dispatcher = dispatcher;
        this.parallelism = parallelism;
        this.pool = pool;
    }

    static BenchDispatchers of(String name) {
        if (name.equals("default")) return new BenchDispatchers(Dispatchers.getDefault(), Math.max(2, Runtime.getRuntime().availableProcessors()), null);
        if (name.equals("io")) return new BenchDispatchers(Dispatchers.getIO(), 64, null);
        int n = name.matches("pool\\d{1,9}") ? Integer.parseInt(name.substring(4)) : 0;
        if (n < 1) throw new IllegalArgumentException("unknown dispatcher '" + name + "' (expected default, io or poolN with N >= 1)");
        ExecutorService pool = Executors.newFixedThreadPool(n, ManyThreads.daemons("bench-" + name + "-"));
        return new BenchDispatchers(ExecutorsKt.from(pool), n, pool);
    }

    /** The coroutine count a param stands for: "parallelism" = this dispatcher's, otherwise a positive number. */
    int coroutines(String param) {
        if (param.equals("parallelism")) return parallelism;
        int n = Integer.parseInt(param);
        if (n < 1) throw new IllegalArgumentException("coroutines must be >= 1 or 'parallelism', was " + param);
        return n;
    }

    @Override public void close() { if (pool != null) pool.shutdownNow(); }
}
