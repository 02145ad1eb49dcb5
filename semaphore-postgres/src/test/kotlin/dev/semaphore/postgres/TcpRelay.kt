package dev.semaphore.postgres

import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.CopyOnWriteArrayList

/**
 * A TCP relay on a free loopback port to [targetPort], for a network partition between a standby and its primary:
 * [cut] resets every relayed connection (what either side had sent and the other had not yet read is lost, as on a
 * network that drops) and refuses new ones until [close].
 */
class TcpRelay(private val targetPort: Int) : AutoCloseable {
    private val server = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    val port: Int = server.localPort
    private val sockets = CopyOnWriteArrayList<Socket>()

    @Volatile
    private var cut = false

    init {
        Thread {
            while (!server.isClosed) {
                val client = runCatching { server.accept() }.getOrNull() ?: break
                if (cut) {
                    reset(client)
                    continue
                }
                val upstream = runCatching { Socket(InetAddress.getLoopbackAddress(), targetPort) }.getOrNull()
                if (upstream == null) {
                    reset(client)
                    continue
                }
                sockets += client
                sockets += upstream
                pump(client, upstream)
                pump(upstream, client)
            }
        }.apply { isDaemon = true; start() }
    }

    private fun pump(from: Socket, to: Socket) {
        Thread {
            val buffer = ByteArray(16384)
            runCatching {
                val input = from.getInputStream()
                val output = to.getOutputStream()
                while (true) {
                    val n = input.read(buffer)
                    if (n < 0 || cut) break
                    output.write(buffer, 0, n)
                    output.flush()
                }
            }
            if (!cut) runCatching { to.shutdownOutput() }
        }.apply { isDaemon = true; start() }
    }

    private fun reset(socket: Socket) {
        runCatching { socket.setSoLinger(true, 0) }
        runCatching { socket.close() }
    }

    /** The partition: every relayed connection reset, new ones refused. */
    fun cut() {
        cut = true
        sockets.forEach(::reset)
    }

    override fun close() {
        cut()
        runCatching { server.close() }
    }
}
