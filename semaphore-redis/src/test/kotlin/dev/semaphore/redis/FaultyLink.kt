package dev.semaphore.redis

import dev.semaphore.distributed.*

import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicLong

/**
 * A TCP relay on loopback between clients and a server (a real `redis-server` in the tests), whose link can be cut as
 * an operator's network cuts it. Every connection made to [port] is forwarded to [targetPort] (which a failover may
 * move, as a virtual IP moves). Each direction can be
 * held on its own: bytes sent that way wait in the relay and arrive, in order, when it heals, as TCP delivers them
 * after a partition that did not outlast it (a partition one way: requests reach the server but replies do not, or
 * the other way; both ways: nothing passes). New connections made while a direction is held are held the same way.
 * [reset] ends every connection at once with a TCP reset (RST) on both sides, as a middlebox or a restarted host does.
 *
 * One relay per client makes a partition of that client only. Threads: two per connection (daemons), ended by [reset]
 * and [close].
 */
class FaultyLink(targetPort: Int) : AutoCloseable {
    /** Where new connections go: a failover points it at the promoted replica (then [reset] moves the old ones). */
    @Volatile
    var targetPort: Int = targetPort

    private val listener = ServerSocket(0, 50, InetAddress.getLoopbackAddress())

    /** The port clients connect to. */
    val port: Int = listener.localPort

    /** `redis://127.0.0.1:port`: a client's URI through this relay. */
    val uri: String get() = "redis://127.0.0.1:$port"

    @Suppress("PLATFORM_CLASS_MAPPED_TO_KOTLIN") // its wait and notifyAll
    private val lock = Object()
    private var toServerHeld = false // guarded by lock
    private var toClientHeld = false // guarded by lock
    private val connections = CopyOnWriteArrayList<Connection>()

    /** Bytes forwarded so far, each way (for tests that check that something did or did not pass). */
    val toServerBytes = AtomicLong()
    val toClientBytes = AtomicLong()

    @Volatile
    private var closed = false

    init {
        Thread({ accept() }, "faulty-link-$port").apply { isDaemon = true }.start()
    }

    /** Holds the bytes that go [toServer] and/or [toClient] (true holds that direction, false lets it flow again). */
    fun hold(toServer: Boolean, toClient: Boolean) = synchronized(lock) {
        toServerHeld = toServer
        toClientHeld = toClient
        lock.notifyAll()
    }

    /** Both ways: nothing passes until [heal]. */
    fun partition() = hold(toServer = true, toClient = true)

    /** Everything held is delivered, in order, and bytes flow again both ways. */
    fun heal() = hold(toServer = false, toClient = false)

    /** Whether a direction is held now. */
    val isHeld: Boolean get() = synchronized(lock) { toServerHeld || toClientHeld }

    /** Ends every open connection with a TCP reset on both sides (bytes held in the relay are lost, as in a reset). */
    fun reset() {
        for (c in connections) c.reset()
    }

    /** Open connections now. */
    val connectionCount: Int get() = connections.size

    private fun accept() {
        while (!closed) {
            val client = try {
                listener.accept()
            } catch (e: IOException) {
                return
            }
            try {
                val server = Socket(InetAddress.getLoopbackAddress(), targetPort)
                client.tcpNoDelay = true
                server.tcpNoDelay = true
                val c = Connection(client, server)
                connections += c
                c.start()
            } catch (e: IOException) {
                runCatching { client.setSoLinger(true, 0); client.close() }
            }
        }
    }

    private inner class Connection(val client: Socket, val server: Socket) {
        @Volatile
        var ended = false

        fun start() {
            pump(client.getInputStream(), server.getOutputStream(), toServer = true)
            pump(server.getInputStream(), client.getOutputStream(), toServer = false)
        }

        private fun pump(input: InputStream, output: OutputStream, toServer: Boolean) {
            Thread({
                val buffer = ByteArray(64 * 1024)
                try {
                    while (true) {
                        val n = input.read(buffer)
                        if (n < 0) break
                        awaitFlowing(toServer)
                        if (ended) break
                        output.write(buffer, 0, n)
                        output.flush()
                        (if (toServer) toServerBytes else toClientBytes).addAndGet(n.toLong())
                    }
                } catch (e: IOException) {
                    // reset or closed
                } catch (e: InterruptedException) {
                    // closed
                }
                end()
            }, "faulty-link-$port-${if (toServer) "up" else "down"}").apply { isDaemon = true }.start()
        }

        private fun awaitFlowing(toServer: Boolean) = synchronized(lock) {
            while (!ended && !closed && (if (toServer) toServerHeld else toClientHeld)) lock.wait(50)
        }

        /** One side closed: the other side is closed too (a FIN each way, as TCP does). */
        fun end() {
            if (ended) return
            ended = true
            connections.remove(this)
            runCatching { client.close() }
            runCatching { server.close() }
        }

        fun reset() {
            ended = true
            connections.remove(this)
            runCatching { client.setSoLinger(true, 0) }
            runCatching { server.setSoLinger(true, 0) }
            runCatching { client.close() }
            runCatching { server.close() }
            synchronized(lock) { lock.notifyAll() }
        }
    }

    override fun close() {
        closed = true
        runCatching { listener.close() }
        reset()
        synchronized(lock) { lock.notifyAll() }
    }
}
