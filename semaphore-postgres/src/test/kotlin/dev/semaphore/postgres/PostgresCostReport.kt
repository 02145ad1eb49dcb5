package dev.semaphore.postgres

import dev.semaphore.distributed.spi.RequestRef

import java.sql.Connection
import kotlin.concurrent.thread

/**
 * What one acquisition costs the server, and whether the tables stay flat (docs/postgres.md, "Cost"): on a local
 * PostgreSQL started as the tests start it (with pg_stat_statements), uncontended acquisitions (an acquire and its
 * release) through the client's own calls, measured by the server's counters:
 * - WAL bytes per acquire and per release (`pg_current_wal_lsn()` before and after);
 * - rows inserted, updated (of which HOT) and deleted per acquisition (`pg_stat_user_tables`);
 * - statements per acquisition (`pg_stat_statements.calls`: one per call, so one round trip each) and their mean
 *   server time (`mean_exec_time`; a timing on a shared machine: a rough figure, not a benchmark);
 * - the tables' size (`pg_total_relation_size`, with their indexes) after 10,000, 100,000 and 1,000,000
 *   acquisitions, with autovacuum as configured by default.
 * Counts, not timings, except the mean server time. Run:
 *
 *     mvn -B -q -pl semaphore-postgres -am test-compile exec:java
 *
 * (-Dexec.args=SIZE to stop at another count than 1,000,000). Prints a Markdown table.
 */
object PostgresCostReport {
    @JvmStatic
    fun main(args: Array<String>) {
        val largest = args.firstOrNull()?.toInt() ?: 1_000_000
        LocalPostgresServer.start("shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=top").use { server ->
            val schema = PostgresSchema()
            val calls = PostgresCalls(schema)
            server.connect().use { c ->
                schema.create(c)
                c.createStatement().use { it.execute("CREATE EXTENSION pg_stat_statements") }
            }
            val version = server.query("SHOW server_version")
            println("PostgreSQL $version, autovacuum on (defaults), fsync off, synchronous_commit on; one client connection")
            println()

            // Per call, single connection, one holder at a time: 10,000 acquisitions after 1,000 of warm-up.
            server.connect().use { c ->
                repeat(1000) { i -> pair(calls, c, "cost", i) }
                reset(c)
                val n = 10_000
                var acquireWal = 0L
                var releaseWal = 0L
                for (i in 0 until n) {
                    val before = lsn(c)
                    val place = calls.acquire(c, "cost", 1, 60_000, "c-cost-$i", 1, 30_000, 10_000)
                    check(place.kind == 'G')
                    val between = lsn(c)
                    checkNotNull(calls.release(c, "cost", RequestRef("c-cost-$i", place.slot), 1))
                    acquireWal += between - before
                    releaseWal += lsn(c) - between
                }
                c.createStatement().use { it.execute("SELECT pg_stat_force_next_flush()") }
                c.createStatement().use { it.execute("SELECT 1") } // ends the transaction whose counters are flushed
                Thread.sleep(1200)
                val rows = rows(c)
                println("| per uncontended acquisition (acquire + release, one holder at a time) | |")
                println("|---|---|")
                println("| WAL bytes, acquire | ${"%.0f".format(acquireWal.toDouble() / n)} |")
                println("| WAL bytes, release | ${"%.0f".format(releaseWal.toDouble() / n)} |")
                println("| rows inserted / updated (HOT) / deleted | ${rows.map { "%.2f".format(it.toDouble() / n) }.let { "${it[0]} / ${it[1]} (${it[2]}) / ${it[3]}" }} |")
                for ((what, calls_, mean) in statements(c)) {
                    println("| statements: $what | ${"%.2f".format(calls_.toDouble() / n)} per acquisition, mean server time ${"%.1f".format(mean * 1000)} µs |")
                }
                println()
            }

            // Size after many acquisitions: 2 connections, each on its own 10 semaphores.
            println("| acquisitions | dsem_semaphores | dsem_requests (with indexes) | rows in dsem_requests |")
            println("|---:|---:|---:|---:|")
            var done = 0
            for (size in listOf(10_000, 100_000, 1_000_000).filter { it <= largest }) {
                val todo = size - done
                val workers = (0 until 2).map { w ->
                    thread {
                        server.connect().use { c -> for (i in 0 until todo / 2) pair(calls, c, "size-$w-${i % 10}", done + i) }
                    }
                }
                workers.forEach { it.join() }
                done = size
                server.connect().use { c ->
                    val sems = c.query("SELECT pg_total_relation_size('dsem_semaphores')")
                    val reqs = c.query("SELECT pg_total_relation_size('dsem_requests')")
                    val live = c.query("SELECT count(*) FROM dsem_requests")
                    println("| ${"%,d".format(size)} | ${kb(sems)} | ${kb(reqs)} | $live |")
                }
            }

            // The bound of P10: as many slots as requests at once. 10,000 held at once on one semaphore, released, deleted.
            println()
            println("| one semaphore | rows in dsem_requests | dsem_requests (with indexes) |")
            println("|---|---:|---:|")
            server.connect().use { c ->
                fun line(what: String) = println(
                    "| $what | ${c.query("SELECT count(*) FROM dsem_requests WHERE semaphore = 'peak'")} | " +
                        "${kb(c.query("SELECT pg_total_relation_size('dsem_requests')"))} |",
                )
                val leases = (0 until 10_000).map { i ->
                    val place = calls.acquire(c, "peak", 10_000, 60_000, "c-peak-$i", 1, 30_000, 10_000)
                    check(place.kind == 'G')
                    RequestRef("c-peak-$i", place.slot)
                }
                line("10,000 held at once")
                for (lease in leases) checkNotNull(calls.release(c, "peak", lease, 1))
                line("all released (its slots stay, free, for its next requests)")
                calls.delete(c, "peak")
                line("deleted (as the sweep deletes it once idle)")
            }
        }
    }

    private fun kb(bytes: Long) = "${bytes / 1024} kB"

    private fun pair(calls: PostgresCalls, c: Connection, name: String, i: Int) {
        val id = "c-$name-$i"
        val place = calls.acquire(c, name, 1, 60_000, id, 1, 30_000, 10_000)
        check(place.kind == 'G')
        checkNotNull(calls.release(c, name, RequestRef(id, place.slot), 1))
    }

    private fun Connection.query(sql: String): Long = createStatement().use { st -> st.executeQuery(sql).use { it.next(); it.getLong(1) } }

    private fun lsn(c: Connection): Long = c.query("SELECT pg_current_wal_lsn() - '0/0'")

    private fun reset(c: Connection) {
        c.createStatement().use { st ->
            st.execute("SELECT pg_stat_statements_reset()")
            st.execute("SELECT pg_stat_force_next_flush()")
        }
        Thread.sleep(1200)
        baseline = rowsRaw(c)
    }

    private var baseline = LongArray(4)

    private fun rowsRaw(c: Connection): LongArray = c.createStatement().use { st ->
        st.execute("SELECT pg_stat_clear_snapshot()")
        st.executeQuery(
            "SELECT sum(n_tup_ins), sum(n_tup_upd), sum(n_tup_hot_upd), sum(n_tup_del) FROM pg_stat_user_tables " +
                "WHERE relname IN ('dsem_semaphores', 'dsem_requests')",
        ).use { rs -> rs.next(); LongArray(4) { rs.getLong(it + 1) } }
    }

    /** Inserted, updated, HOT-updated, deleted since [reset]. */
    private fun rows(c: Connection): List<Long> = rowsRaw(c).mapIndexed { i, v -> v - baseline[i] }

    /** (function called, calls, mean ms) of the library's statements since [reset]. */
    private fun statements(c: Connection): List<Triple<String, Long, Double>> = c.createStatement().use { st ->
        st.executeQuery(
            "SELECT query, calls, mean_exec_time FROM pg_stat_statements WHERE query LIKE '%dsem_%' ORDER BY query",
        ).use { rs ->
            val out = mutableListOf<Triple<String, Long, Double>>()
            while (rs.next()) {
                val function = Regex("dsem_(\\w+)").find(rs.getString(1))?.groupValues?.get(1) ?: "?"
                out += Triple(function, rs.getLong(2), rs.getDouble(3))
            }
            out
        }
    }
}
