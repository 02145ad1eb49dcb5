package dev.semaphore.redis


import java.util.concurrent.TimeUnit

/**
 * A real Redis Cluster of [size] masters (no replicas), each a [LocalRedisServer] started with
 * `--cluster-enabled yes`, the 16,384 slots split evenly between them in order (node 0 serves the
 * lowest range), joined with `CLUSTER MEET`.
 */
class LocalRedisCluster private constructor(val nodes: List<LocalRedisServer>) : AutoCloseable {
    val uris: Array<String> get() = nodes.map { it.uri }.toTypedArray()

    /** The node that serves [slot]. */
    fun nodeFor(slot: Int): LocalRedisServer = nodes[slot * nodes.size / SLOTS]

    override fun close() = nodes.forEach { it.close() }

    companion object {
        const val SLOTS = 16384

        fun start(size: Int = 3): LocalRedisCluster {
            val nodes = mutableListOf<LocalRedisServer>()
            try {
                repeat(size) { nodes += LocalRedisServer.start(cluster = true) }
                for ((i, node) in nodes.withIndex()) {
                    node.command("CLUSTER", "SET-CONFIG-EPOCH", "${i + 1}") shouldBeOk "SET-CONFIG-EPOCH"
                    val slots = (i * SLOTS / size until (i + 1) * SLOTS / size).map { "$it" }
                    node.command("CLUSTER", "ADDSLOTS", *slots.toTypedArray()) shouldBeOk "ADDSLOTS"
                }
                for (node in nodes.drop(1)) nodes[0].command("CLUSTER", "MEET", "127.0.0.1", "${node.port}") shouldBeOk "MEET"
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
                while (!nodes.all { node -> node.reply("CLUSTER", "INFO").single().contains("cluster_state:ok") }) {
                    check(System.nanoTime() < deadline) { "the cluster did not reach cluster_state:ok within 30 s" }
                    Thread.sleep(50)
                }
                return LocalRedisCluster(nodes)
            } catch (e: Throwable) {
                nodes.forEach { it.close() }
                throw e
            }
        }

        private infix fun String.shouldBeOk(what: String) = check(this == "+OK") { "CLUSTER $what answered $this" }
    }
}
