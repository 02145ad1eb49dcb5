/*
 * The coroutine dispatchers the contended benchmarks run on. A trial-scoped holder: created in
 * @Setup(Level.Trial), shut down in @TearDown, never shared across forks.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import kotlinx.coroutines.CoroutineDispatcher;
import kotlinx.coroutines.Dispatchers;
import kotlinx.coroutines.ExecutorsKt;

/** A dispatcher by name, with the parallelism the "parallelism" coroutine count stands for. */
final class BenchDispatchers implements AutoCloseable {
    final CoroutineDispatcher dispatcher;
    final int parallelism;
    private final ExecutorService pool;

    private BenchDispatchers(CoroutineDispatcher dispatcher, int parallelism, ExecutorService pool) {
        this.dispatcher = dispatcher;
        this.parallelism = parallelism;
        this.pool = pool;
    }

    /**
     * "default": Dispatchers.Default (parallelism = max(2, available processors)); "poolN" (N >= 1, e.g. "pool2",
     * "pool64"): a fixed pool of N daemon threads; "io": Dispatchers.IO (parallelism 64, its default, on more
     * threads than cores; it shares its threads with Dispatchers.Default).
     */
    static BenchDispatchers of(String name) {
        if (name.equals("default")) {
            return new BenchDispatchers(Dispatchers.getDefault(), Math.max(2, Runtime.getRuntime().availableProcessors()), null);
        }
        if (name.equals("io")) return new BenchDispatchers(Dispatchers.getIO(), 64, null);
        Integer n = name.startsWith("pool") ? parsePositive(name.substring(4)) : null;
        if (n == null) throw new IllegalArgumentException("unknown dispatcher '" + name + "' (expected default, io or poolN with N >= 1)");
        ExecutorService pool = Executors.newFixedThreadPool(n, ManyThreads.daemons("bench-" + name + "-"));
        return new BenchDispatchers(ExecutorsKt.from(pool), n, pool);
    }

    private static Integer parsePositive(String s) {
        try {
            int n = Integer.parseInt(s);
            return n >= 1 ? n : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** "parallelism" = this dispatcher's parallelism, otherwise a positive number. */
    int coroutines(String param) {
        if (param.equals("parallelism")) return parallelism;
        int n = Integer.parseInt(param);
        if (n < 1) throw new IllegalArgumentException("coroutines must be >= 1 or 'parallelism', was " + param);
        return n;
    }

    @Override
    public void close() {
        if (pool != null) pool.shutdownNow();
    }
}
