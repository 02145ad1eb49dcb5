package dev.semaphore.distributed.spi

/**
 * Request ids, "clientId-n/name" (head.lua): DistributedSemaphoreClient.newRequestId makes them, and an
 * inspection reads the client back from them. The name is encoded so that the id has no ':' (the
 * scripts' separator in lx members and grant messages), ',' (between grant messages) or space (the
 * resize ids): those become %3A, %2C and %20, and '%' %25.
 */
@EngineApi
public object RequestIds {
    /** The longest client name. */
    public const val MAX_NAME: Int = 64

    private val ID = Regex("^([0-9a-f]+)-\\d+(?:/(.*))?$")

    /**
     * [name] if it is a valid client name: 1 to [MAX_NAME] characters from '!' to '~' (what Redis's
     * `CLIENT SETNAME` accepts, without spaces).
     * @throws IllegalArgumentException otherwise, naming it.
     */
    public fun checkName(name: String): String {
        require(name.length in 1..MAX_NAME && name.all { it in '!'..'~' }) {
            "a client name must be 1 to $MAX_NAME characters from '!' to '~' (no spaces), was \"$name\""
        }
        return name
    }

    /** [name] as it goes into a request id (see the object's comment). */
    public fun encodeName(name: String): String =
        name.replace("%", "%25").replace(":", "%3A").replace(",", "%2C").replace(" ", "%20")

    /** The reverse of [encodeName]. */
    public fun decodeName(encoded: String): String =
        Regex("%(25|3A|2C|20)").replace(encoded) { m -> m.groupValues[1].toInt(16).toChar().toString() }

    /** The client id and name in [requestId]: (id, name); the whole id and null if it is not one of ours. */
    public fun clientOf(requestId: String): Pair<String, String?> {
        val match = ID.matchEntire(requestId) ?: return requestId to null
        return match.groupValues[1] to match.groups[2]?.value?.let(::decodeName)
    }

    /** "pid@host" of this JVM, for a client whose connections have no name; "pid" if the host is not found. */
    public val defaultName: String by lazy {
        val pid = ProcessHandle.current().pid().toString()
        val host = sequenceOf(
            { System.getenv("HOSTNAME") },
            { System.getenv("COMPUTERNAME") },
            { java.io.File("/etc/hostname").takeIf { it.isFile }?.readText() },
        ).mapNotNull { runCatching(it).getOrNull()?.filter { c -> c in '!'..'~' } }.firstOrNull { it.isNotEmpty() }
        if (host == null) pid else "$pid@$host".take(MAX_NAME)
    }
}
