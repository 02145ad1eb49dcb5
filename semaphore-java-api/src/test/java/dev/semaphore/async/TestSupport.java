package dev.semaphore.async;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlin.jvm.functions.Function2;
import kotlinx.coroutines.CoroutineScope;
import kotlinx.coroutines.CoroutineScopeKt;
import kotlinx.coroutines.CoroutineStart;
import kotlinx.coroutines.Dispatchers;
import kotlinx.coroutines.future.FutureKt;

/** Helpers shared by the tests: waiting for a condition, driving Kotlin coroutines from Java, fakes. */
final class TestSupport {
    private TestSupport() {}

    /** The -Pstress multiplier (1 by default). */
    static final int SCALE = Integer.getInteger("stress.scale", 1);

    /**
     * Waits until [condition] holds; a guard against hangs (fails after 20 s), not a speed assertion.
     * Other threads reach their park or their next step in microseconds; the bound only turns a
     * deadlock into a readable failure.
     */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) fail("condition never became true: " + what);
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * Starts a coroutine that runs [body] (a call of a suspend function, written in Java as a function of
     * its Continuation). UNDISPATCHED: it runs on the calling thread up to its first suspension, so it
     * joins a queue in program order; Unconfined: it resumes on the thread that wakes it.
     */
    static CompletableFuture<Unit> coroutine(Function2<CoroutineScope, Continuation<? super Unit>, Object> body) {
        return FutureKt.<Unit>future(
                CoroutineScopeKt.CoroutineScope(EmptyCoroutineContext.INSTANCE),
                Dispatchers.getUnconfined(),
                CoroutineStart.UNDISPATCHED,
                body);
    }

    /** A Kotlin coroutine blocked in Semaphore.acquire(permits). */
    static CompletableFuture<Unit> kotlinAcquire(dev.semaphore.Semaphore s, int permits) {
        return coroutine((scope, cont) -> s.acquire(permits, cont));
    }

    /**
     * A Kotlin coroutine blocked in PrioritySemaphore.acquire(permits, priority = priority). The Kotlin
     * API takes the permit count first (a positional Int is permits); the priority is named there.
     */
    static CompletableFuture<Unit> kotlinAcquireAtPriority(dev.semaphore.PrioritySemaphore s, int priority) {
        return coroutine((scope, cont) -> s.acquire(1, priority, cont));
    }

    /** A Kotlin coroutine blocked in Lock.lock(owner). */
    static CompletableFuture<Unit> kotlinLock(dev.semaphore.Lock lock, Object owner) {
        return coroutine((scope, cont) -> lock.lock(owner, cont));
    }

    /** An implementation of [type] that is not engine-backed (every call fails except toString). */
    static <T> T foreignImplementation(Class<T> type, String name) {
        Object proxy = Proxy.newProxyInstance(TestSupport.class.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            if (m.getName().equals("toString")) return name;
            throw new UnsupportedOperationException(m.getName());
        });
        return type.cast(proxy);
    }

    /** The exception that failed [f]; fails the test if [f] completed normally. */
    static Throwable failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        return e.getCause();
    }

    /** Asserts that [f] failed with an exception of [type] and returns it. */
    static <X extends Throwable> X failsWith(Class<X> type, CompletableFuture<?> f) {
        return assertInstanceOf(type, failure(f));
    }

    /**
     * The library's modules and their dependencies, where this test run found them (jars or class
     * folders, from each anchor class's CodeSource): a class path or module path for javac.
     */
    static String libraryPath() throws java.net.URISyntaxException {
        Class<?>[] anchors = {
            AsyncSemaphore.class, dev.semaphore.Semaphore.class, kotlin.Unit.class,
            kotlinx.coroutines.Job.class, org.jspecify.annotations.NullMarked.class,
        };
        java.util.List<String> paths = new java.util.ArrayList<>();
        for (Class<?> c : anchors) {
            paths.add(java.nio.file.Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        }
        return String.join(java.io.File.pathSeparator, paths);
    }

    /** Asserts the semaphore's state (an AsyncSemaphore, an AsyncPrioritySemaphore or one of its views). */
    static void assertState(AsyncPermitPool s, int available, int queued) {
        assertEquals(available, s.availablePermits(), "availablePermits of " + s);
        assertEquals(queued, s.queueLength(), "queueLength of " + s);
    }
}
