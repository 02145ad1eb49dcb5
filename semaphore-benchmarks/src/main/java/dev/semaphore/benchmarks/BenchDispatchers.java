/*
 * The coroutine dispatchers the contended benchmarks run on. A trial-scoped holder: created in
 * @Setup(Level.Trial), shut down in @TearDown, never shared across forks.
 */
package dev.semaphore.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
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
     * "default": Dispatchers.Default (parallelism = max(2, available processors)); "pool2": a fixed pool of 2
     * daemon threads.
     */
    static BenchDispatchers of(String name) {
        switch (name) {
            case "default":
                return new BenchDispatchers(Dispatchers.getDefault(), Math.max(2, Runtime.getRuntime().availableProcessors()), null);
            case "pool2": {
                AtomicInteger n = new AtomicInteger();
                ExecutorService pool = Executors.newFixedThreadPool(2, r -> {
                    Thread t = new Thread(r, "bench-pool2-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
                return new BenchDispatchers(ExecutorsKt.from(pool), 2, pool);
            }
            default:
                throw new IllegalArgumentException("unknown dispatcher '" + name + "' (expected default or pool2)");
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
