package dev.semaphore.redis.async;

import dev.semaphore.distributed.*;
import dev.semaphore.distributed.async.*;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.semaphore.SemaphoreClosedException;
import dev.semaphore.distributed.Lease;
import dev.semaphore.distributed.LeaseLostException;
import dev.semaphore.redis.LocalRedisServer;
import dev.semaphore.distributed.DistributedSemaphore;
import dev.semaphore.redis.RedisSemaphoreClient;
import dev.semaphore.distributed.DistributedConfig;
import dev.semaphore.distributed.DistributedSemaphoreException;
import dev.semaphore.redis.RedisUnavailableException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.function.IntSupplier;
import kotlin.Unit;
import kotlin.coroutines.EmptyCoroutineContext;
import kotlinx.coroutines.BuildersKt;
import org.junit.jupiter.api.Test;

/**
 * The failures as a Java caller sees them: {@code catch (DistributedSemaphoreException e)} catches what Redis
 * did (a lost lease, an unreachable server, a configuration conflict) and never the caller's own misuse,
 * which stays {@code IllegalStateException}/{@code IllegalArgumentException}.
 */
class RedisFailuresTest {
    /** Waits (at most 20 s) until {@code count} reaches {@code expected}. */
    private static void awaitCount(IntSupplier count, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (count.getAsInt() != expected) {
            assertTrue(System.nanoTime() < deadline, "still " + count.getAsInt() + ", expected " + expected);
            Thread.sleep(10);
        }
    }

    /** What a Java caller of the Kotlin handle writes to release a lease (a suspending call). */
    private static void releaseThroughKotlin(DistributedSemaphore semaphore, Lease lease) throws InterruptedException {
        BuildersKt.<Unit>runBlocking(EmptyCoroutineContext.INSTANCE, (scope, continuation) -> semaphore.release(lease, continuation));
    }

    /** The failure a Java caller's {@code catch (DistributedSemaphoreException e)} around {@code action} caught, or null. */
    private static String caughtAsRedisFailure(Action action) throws Exception {
        try {
            action.run();
            return null;
        } catch (DistributedSemaphoreException e) {
            return e.getClass().getSimpleName();
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    @Test
    void catchingRedisSemaphoreExceptionCatchesALostLeaseButNotMisuse() throws Exception {
        try (LocalRedisServer server = LocalRedisServer.Companion.start(false);
             RedisSemaphoreClient client = RedisSemaphoreClient.connect(server.getUri())) {
            DistributedConfig shortLease = new DistributedConfig().withLeaseTime(Duration.ofMillis(300)).withAutoRenew(false);
            AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(client, "failures-lost", 1, shortLease);
            DistributedPermit expired = s.acquireBlocking();
            awaitCount(() -> s.availablePermits().join(), 1); // the server ended the lease at its expiry

            // A lost lease: caught as a Redis failure, as its own type.
            assertEquals("LeaseLostException", caughtAsRedisFailure(expired::close));
            CompletionException renew = assertThrows(CompletionException.class, () -> expired.renew().join());
            assertInstanceOf(LeaseLostException.class, renew.getCause());
            assertInstanceOf(DistributedSemaphoreException.class, renew.getCause());

            // A double release (through the Kotlin handle, the one way to release a lease twice): misuse,
            // an IllegalStateException that the same catch does not catch.
            AsyncDistributedSemaphore other = AsyncDistributedSemaphore.create(client, "failures-misuse", 1);
            Lease lease = other.acquireBlocking().lease();
            releaseThroughKotlin(other.asKotlin(), lease);
            IllegalStateException twice = assertThrows(IllegalStateException.class,
                () -> caughtAsRedisFailure(() -> releaseThroughKotlin(other.asKotlin(), lease)));
            assertTrue(twice.getMessage().contains("already released"), twice.getMessage());
            assertEquals(1, other.availablePermits().join()); // released once, not twice

            // A bad count and a closed handle: misuse too, not caught as Redis failures.
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> caughtAsRedisFailure(() -> other.tryAcquire(2)));
            assertTrue(bad.getMessage().contains("a request for 2 permits can never be granted: the total is 1"), bad.getMessage());
            other.close();
            assertThrows(SemaphoreClosedException.class, () -> caughtAsRedisFailure(other::tryAcquire));
            Object closed = assertThrows(IllegalStateException.class, () -> caughtAsRedisFailure(other::acquireBlocking));
            assertInstanceOf(SemaphoreClosedException.class, closed);
        }
    }

    @Test
    void aHandleConfiguredWithAnotherTotalWorksWithTheServersTotal() throws Exception {
        try (LocalRedisServer server = LocalRedisServer.Companion.start(false);
             RedisSemaphoreClient a = RedisSemaphoreClient.connect(server.getUri());
             RedisSemaphoreClient b = RedisSemaphoreClient.connect(server.getUri())) {
            AsyncDistributedSemaphore two = AsyncDistributedSemaphore.create(a, "other-total", 2);
            DistributedPermit held = two.acquireBlocking();
            AsyncDistributedSemaphore three = AsyncDistributedSemaphore.create(b, "other-total", 3);

            assertEquals(3, three.configuredPermits());
            assertEquals(2, three.totalPermits().join());
            try (DistributedPermit second = three.tryAcquire().orElseThrow()) {
                assertTrue(three.tryAcquire().isEmpty());
                CompletionException tooMany = assertThrows(CompletionException.class, () -> three.acquire(3).join());
                assertInstanceOf(IllegalArgumentException.class, tooMany.getCause());
                assertTrue(tooMany.getCause().getMessage().contains("the total is 2"), tooMany.getCause().getMessage());
                assertEquals(0, two.availablePermits().join());
            }
            assertEquals(0, two.queueLength().join());
            held.close();
            assertEquals(2, two.availablePermits().join());
        }
    }

    @Test
    void aServerThatCannotBeReachedIsRedisUnavailableWithLettucesExceptionAsCause() throws Exception {
        try (LocalRedisServer server = LocalRedisServer.Companion.start(false)) {
            RedisSemaphoreClient client = RedisSemaphoreClient.connect(server.getUri() + "?timeout=1s");
            try {
                AsyncDistributedSemaphore s = AsyncDistributedSemaphore.create(client, "unreachable", 2);
                DistributedPermit held = s.acquireBlocking();
                server.kill();

                long start = System.nanoTime();
                RedisUnavailableException tried = assertThrows(RedisUnavailableException.class, s::tryAcquire);
                long tookMs = (System.nanoTime() - start) / 1_000_000;
                assertInstanceOf(RedisCommandTimeoutException.class, tried.getCause());
                assertTrue(tried.getMessage().contains("127.0.0.1:" + server.getPort()), tried.getMessage());
                assertTrue(tookMs >= 900 && tookMs < 10_000, "answered after " + tookMs + " ms, the timeout is 1 s");

                assertEquals("RedisUnavailableException", caughtAsRedisFailure(() -> s.acquireBlocking(Duration.ofSeconds(5))));
                CompletionException query = assertThrows(CompletionException.class, () -> s.availablePermits().join());
                assertInstanceOf(RedisUnavailableException.class, query.getCause());
                assertInstanceOf(RedisCommandTimeoutException.class, query.getCause().getCause());
                RedisUnavailableException release = assertThrows(RedisUnavailableException.class, held::close);
                assertInstanceOf(RedisCommandTimeoutException.class, release.getCause());
            } finally {
                client.close();
            }
            RedisUnavailableException connect = assertThrows(RedisUnavailableException.class,
                () -> RedisSemaphoreClient.connect(server.getUri() + "?timeout=1s"));
            assertInstanceOf(RedisConnectionException.class, connect.getCause());
            assertTrue(connect.getMessage().contains("127.0.0.1:" + server.getPort()), connect.getMessage());
        }
    }

    @Test
    void noFailureTypeIsAnIllegalStateException() {
        for (Class<?> type : new Class<?>[] {
            LeaseLostException.class, dev.semaphore.distributed.QueuedRequestLostException.class,
            dev.semaphore.distributed.NotReplicatedException.class,
            dev.semaphore.redis.WrongClusterNodeException.class, RedisUnavailableException.class}) {
            assertTrue(DistributedSemaphoreException.class.isAssignableFrom(type), type + " is not a DistributedSemaphoreException");
            assertFalse(IllegalStateException.class.isAssignableFrom(type), type + " is an IllegalStateException");
            assertTrue(RuntimeException.class.isAssignableFrom(type), type + " is checked");
        }
    }
}
