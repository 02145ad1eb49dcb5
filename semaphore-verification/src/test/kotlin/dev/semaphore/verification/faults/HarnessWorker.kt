package dev.semaphore.verification.faults

import dev.semaphore.distributed.DistributedSemaphoreClient
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import java.io.PrintStream
import java.io.FileOutputStream
import java.io.FileDescriptor
import kotlin.system.exitProcess

/**
 * A worker JVM of the fault harness: one client (through its relay) running the [Workload], its events printed on
 * stdout as lines ([Event.line]). Commands on stdin, one per line: QUIESCE (stop starting calls; prints IDLE once
 * none is under way), RESUME, STOP (closes the client and exits). The harness stops and kills this process as faults.
 *
 * Arguments: NAME ENGINE URL SEED, and the plan: SEMAPHORE PERMITS LOCK COROUTINES LEASE_MS RENEW_MS TTL_MS HEARTBEAT_MS REPLICA_ACKS.
 */
object HarnessWorker {
    @JvmStatic
    fun main(args: Array<String>) {
        val out = PrintStream(FileOutputStream(FileDescriptor.out), false)
        fun say(line: String) = synchronized(out) {
            out.println(line)
            out.flush()
        }
        val (name, engine, uri, seed) = args
        val plan = Plans.parse(args.drop(4))
        // Its link may be cut as it starts (a worker started after a kill): tries again, as an application would.
        var connected: DistributedSemaphoreClient? = null
        while (connected == null) connected = runCatching { FaultTarget.connect(engine, uri) }.getOrNull() ?: run { Thread.sleep(100); null }
        val client: DistributedSemaphoreClient = connected
        val workload = Workload(name, client, plan, { say(it.line) }, seed.toLong()) { say("X " + it.replace('\n', '|')) }
        kotlinx.coroutines.runBlocking { workload.warmUp() }
        workload.start(CoroutineScope(SupervisorJob() + Dispatchers.Default))
        say("READY")
        while (true) {
            when (readlnOrNull()?.trim()) {
                "QUIESCE" -> {
                    workload.quiesce()
                    while (!workload.isIdle) Thread.sleep(5)
                    say("IDLE")
                }
                "RESUME" -> workload.resume()
                null, "STOP" -> {
                    workload.stop()
                    client.close()
                    exitProcess(0)
                }
            }
        }
    }
}

/** A [Workload.Plan] as the arguments of a worker JVM. */
object Plans {
    fun args(plan: Workload.Plan): List<String> = with(plan) {
        listOf(
            semaphore, "$permits", lock, "$coroutines", "${config.leaseTime.inWholeMilliseconds}", "${config.renewInterval.inWholeMilliseconds}",
            "${config.waiterTimeToLive.inWholeMilliseconds}", "${config.heartbeatInterval.inWholeMilliseconds}", "${config.replicaAcks}",
            "${config.replicaTimeout.inWholeMilliseconds}",
        )
    }

    fun parse(a: List<String>): Workload.Plan = Workload.Plan(
        a[0], a[1].toInt(), a[2], config(a[4].toLong(), a[5].toLong(), a[6].toLong(), a[7].toLong(), a[8].toInt(), a[9].toLong()), a[3].toInt(),
    )

    fun config(leaseMs: Long, renewMs: Long, ttlMs: Long, heartbeatMs: Long, replicaAcks: Int, replicaTimeoutMs: Long) =
        dev.semaphore.distributed.DistributedConfig(
            leaseTime = kotlin.time.Duration.parse("${leaseMs}ms"),
            renewInterval = kotlin.time.Duration.parse("${renewMs}ms"),
            waiterTimeToLive = kotlin.time.Duration.parse("${ttlMs}ms"),
            heartbeatInterval = kotlin.time.Duration.parse("${heartbeatMs}ms"),
            replicaAcks = replicaAcks,
            replicaTimeout = kotlin.time.Duration.parse("${replicaTimeoutMs}ms"),
        )
}
