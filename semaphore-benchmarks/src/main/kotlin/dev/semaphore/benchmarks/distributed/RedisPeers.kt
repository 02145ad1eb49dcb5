/*
 * The distributed implementations under test, on one redis-server: our DistributedSemaphore / DistributedLock and Redisson's
 * RSemaphore, RPermitExpirableSemaphore and RFairLock, each named as in the benchmark methods (<operation>_<impl>).
 */
package dev.semaphore.benchmarks.distributed

import dev.semaphore.distributed.DistributedSemaphoreClient
import dev.semaphore.distributed.Lease
import dev.semaphore.redis.RedisSemaphoreClient
import dev.semaphore.distributed.asSemaphore
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.redisson.Redisson
import org.redisson.api.RedissonClient
import org.redisson.config.Config
import java.util.concurrent.CountDownLatch
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.concurrent.thread
import kotlin.system.exitProcess

/** One implementation under test, connected to one server. */
abstract class Peer(val impl: String) : AutoCloseable {
    /** Acquires one permit, blocking; returns what [release] needs. */
    abstract fun acquire(): Any
    abstract fun release(held: Any)

    /** One acquire-release cycle; returns a value that depends on the grant. */
    open fun acquireRelease(): Long {
        val held = acquire()
        release(held)
        return held.hashCode().toLong()
    }

    /** One cycle that runs [inside] while holding (RedisPeersReport's fairness). */
    fun acquireRelease(inside: () -> Unit) = acquire().let { held -> try { inside() } finally { release(held) } }

    /** Runs [workers] concurrent workers of [cycles] acquire-release cycles each; returns when all are done. */
    abstract fun contended(workers: Int, cycles: Int)

    abstract override fun close() // without AutoCloseable's `throws Exception`, for Java callers
}

/**
 * Our DistributedSemaphore (or DistributedLock, for an [impl] ending in "Lock") on [client] (either engine), closed with
 * this peer: suspending calls, a coroutine per worker.
 */
class OursPeer(private val client: DistributedSemaphoreClient, impl: String, name: String, permits: Int) : Peer(impl) {
    /** On Redis, at [uri]. */
    constructor(uri: String, impl: String, name: String, permits: Int) : this(RedisSemaphoreClient.connect(uri), impl, name, permits)

    private val semaphore = if (impl.endsWith("Lock")) client.lock(name).asSemaphore() else client.semaphore(name, permits)

    override fun acquire(): Any = runBlocking { semaphore.acquire() }
    override fun release(held: Any) = runBlocking { semaphore.release(held as Lease) }
    override fun acquireRelease(): Long = runBlocking { cycle() }

    private suspend fun cycle(): Long {
        val lease = semaphore.acquire()
        semaphore.release(lease)
        return lease.fencingToken
    }

    override fun contended(workers: Int, cycles: Int) = runBlocking(Dispatchers.Default) {
        repeat(workers) { launch { repeat(cycles) { cycle() } } }
    }

    override fun close() = client.close()
}

/** Redisson's RSemaphore, RPermitExpirableSemaphore or fair RLock: blocking calls, a thread per worker. */
class RedissonPeer(uri: String, impl: String, name: String, permits: Int) : Peer(impl) {
    private val redisson: RedissonClient = Redisson.create(Config().apply { useSingleServer().address = uri })
    private val semaphore by lazy { redisson.getSemaphore(name).also { it.trySetPermits(permits) } }
    private val expirable by lazy { redisson.getPermitExpirableSemaphore(name).also { it.trySetPermits(permits) } }
    private val fairLock by lazy { redisson.getFairLock(name) }
    private val threads: ExecutorService = Executors.newCachedThreadPool()

    override fun acquire(): Any = when (impl) {
        "redissonSemaphore" -> semaphore.acquire()
        "redissonPermitExpirable" -> expirable.acquire(30, TimeUnit.SECONDS)
        "redissonFairLock" -> fairLock.lock()
        else -> error("unknown implementation $impl")
    }

    override fun release(held: Any) = when (impl) {
        "redissonSemaphore" -> semaphore.release()
        "redissonPermitExpirable" -> expirable.release(held as String)
        else -> fairLock.unlock()
    }

    override fun contended(workers: Int, cycles: Int) {
        val done = CountDownLatch(workers)
        repeat(workers) {
            threads.execute {
                try {
                    repeat(cycles) { acquireRelease() }
                } finally {
                    done.countDown()
                }
            }
        }
        check(done.await(10, TimeUnit.MINUTES)) { "$impl: the workers did not finish" }
    }

    override fun close() { threads.shutdownNow(); redisson.shutdown() }
}

/** The peer for [impl] ("ours", "oursLock", "redissonSemaphore", "redissonPermitExpirable", "redissonFairLock"). */
fun peer(uri: String, impl: String, name: String, permits: Int): Peer =
    if (impl.startsWith("ours")) OursPeer(uri, impl, name, permits) else RedissonPeer(uri, impl, name, permits)

/** The impl of a benchmark method named <operation>_<impl>, from JMH's full benchmark name. */
fun implOf(benchmark: String): String = benchmark.substringAfterLast('.').substringAfter('_')

/** DistributedContendedBenchmark's second process: `impl uri name permits workers`, cycling until its parent dies. */
object RedisLoad {
    @JvmStatic fun main(args: Array<String>) {
        val (impl, uri, name, permits, workers) = args
        val parent = ProcessHandle.current().parent()
        thread(isDaemon = true) {
            while (parent.map { it.isAlive }.orElse(false)) Thread.sleep(500)
            exitProcess(0)
        }
        peer(uri, impl, name, permits.toInt()).use { p ->
            println("LOAD RUNNING")
            System.out.flush()
            while (true) p.contended(workers.toInt(), 100)
        }
    }
}
