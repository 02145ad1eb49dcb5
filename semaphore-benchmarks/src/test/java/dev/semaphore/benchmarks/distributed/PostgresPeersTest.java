package dev.semaphore.benchmarks.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import kotlin.Unit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL section's peers (PostgresPeers.kt) on a real local PostgreSQL: each admits at most its permits at once
 * across two clients (as the two processes of the contended benchmarks), and every worker's cycles complete; so a broken
 * peer cannot produce a fast number. Also the pool they borrow from.
 */
class PostgresPeersTest {
    static PeerServer server;

    @BeforeAll static void start() { server = new PeerServer("springJdbcLock"); } // PostgreSQL, with Spring's INT_LOCK

    @AfterAll static void stop() { server.close(); }

    /** Runs 2 clients of [impl] x [workers] threads x [cycles] cycles; returns the most holders seen at once. */
    static int mostAtOnce(String impl, int permits, int workers, int cycles) throws Exception {
        String name = "test-" + impl + "-" + permits;
        List<Peer> clients = List.of(
                PostgresPeersKt.postgresPeer(server.getTarget(), impl, name, permits),
                PostgresPeersKt.postgresPeer(server.getTarget(), impl, name, permits));
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        try {
            for (Peer p : clients) {
                for (int w = 0; w < workers; w++) {
                    Thread t = new Thread(() -> {
                        try {
                            for (int i = 0; i < cycles; i++) {
                                p.acquireRelease(() -> {
                                    most.accumulateAndGet(holders.incrementAndGet(), Math::max);
                                    Thread.onSpinWait();
                                    holders.decrementAndGet();
                                    done.incrementAndGet();
                                    return Unit.INSTANCE;
                                });
                            }
                        } catch (Throwable e) {
                            synchronized (failures) { failures.add(e); }
                        }
                    });
                    t.start();
                    threads.add(t);
                }
            }
            for (Thread t : threads) t.join(120_000);
        } finally {
            for (Peer p : clients) p.close();
        }
        assertEquals(List.of(), failures, impl);
        assertEquals(2 * workers * cycles, done.get(), impl + ": every cycle completes");
        return most.get();
    }

    @Test
    void theAdvisoryRecipeAdmitsAtMostItsSlots() throws Exception {
        int most = mostAtOnce("advisory", 3, 8, 15);
        assertTrue(most >= 1 && most <= 3, "at most 3 holders at once, was " + most);
        assertEquals(1, mostAtOnce("advisory", 1, 4, 10));
    }

    @Test
    void springsJdbcLockAdmitsOneHolder() throws Exception {
        assertEquals(1, mostAtOnce("springJdbcLock", 1, 3, 5));
        assertThrows(IllegalArgumentException.class, () -> PostgresPeersKt.postgresPeer(server.getTarget(), "springJdbcLock", "x", 2));
    }

    @Test
    void oursOnPostgresAdmitsAtMostItsPermits() throws Exception {
        int most = mostAtOnce("ours", 3, 8, 15);
        assertTrue(most >= 1 && most <= 3, "at most 3 holders at once, was " + most);
        assertEquals(1, mostAtOnce("oursLock", 1, 4, 10));
    }

    @Test
    void theIntLockTableIsSpringsOwnDdl() {
        assertTrue(SpringJdbcLockPeer.Companion.getIntLockDdl().startsWith("CREATE TABLE INT_LOCK"), SpringJdbcLockPeer.Companion.getIntLockDdl());
        assertTrue(SpringJdbcLockPeer.Companion.getIntLockDdl().endsWith(");"));
    }

    @Test
    void theRelayCountsStatementsRoundTripsAndTransactionsAsTheDriverSendsThem() throws Exception {
        int port = Integer.parseInt(server.getTarget().replaceAll(".*:(\\d+)/.*", "$1"));
        try (ProtocolCounter counter = new ProtocolCounter(port);
             Connection c = java.sql.DriverManager.getConnection(
                     "jdbc:postgresql://127.0.0.1:" + counter.getPort() + "/postgres?user=postgres&sslmode=disable&gssEncMode=disable")) {
            ProtocolCounter.Reading start = counter.reading();
            for (int i = 0; i < 7; i++) { // past pgjdbc's prepareThreshold (5): named statements from then on
                try (var st = c.prepareStatement("SELECT ?::int")) {
                    st.setInt(1, i);
                    st.executeQuery().close();
                }
            }
            ProtocolCounter.Reading autocommit = counter.reading();
            assertEquals(7, autocommit.getStatements() - start.getStatements());
            assertEquals(7, autocommit.getRoundTrips() - start.getRoundTrips());
            assertEquals(7, autocommit.getTransactions() - start.getTransactions());
            for (int i = 0; i < 6; i++) { // BEGIN pipelined with the SELECT: one round trip; COMMIT another
                c.setAutoCommit(false);
                try (var st = c.prepareStatement("SELECT ?::int")) {
                    st.setInt(1, i);
                    st.executeQuery().close();
                }
                c.commit();
                c.setAutoCommit(true);
            }
            ProtocolCounter.Reading blocks = counter.reading();
            assertEquals(18, blocks.getStatements() - autocommit.getStatements());
            assertEquals(12, blocks.getRoundTrips() - autocommit.getRoundTrips());
            assertEquals(6, blocks.getTransactions() - autocommit.getTransactions());
            assertEquals(13, blocks.getBySql().get("SELECT $1::int") - start.getBySql().getOrDefault("SELECT $1::int", 0L));
            assertEquals(6, blocks.getBySql().get("COMMIT") - start.getBySql().getOrDefault("COMMIT", 0L));
            assertEquals(6, blocks.getBySql().get("BEGIN") - start.getBySql().getOrDefault("BEGIN", 0L));
        }
    }

    @Test
    void thePoolLendsEachConnectionToOneBorrowerAndTakesItBackOutOfItsTransaction() throws Exception {
        try (FixedPool pool = new FixedPool(server.getTarget(), 2)) {
            Connection a = pool.getConnection();
            Connection b = pool.getConnection();
            a.setAutoCommit(false);
            try (var st = a.createStatement()) { st.execute("CREATE TEMP TABLE pool_test (x int)"); }
            a.close();
            assertTrue(a.isClosed());
            assertThrows(IllegalStateException.class, a::createStatement, "a connection given back cannot be used");
            Connection c = pool.getConnection(); // the one a gave back: rolled back, in autocommit
            assertTrue(c.getAutoCommit());
            try (var st = c.createStatement(); var rs = st.executeQuery("SELECT to_regclass('pg_temp.pool_test') IS NULL")) {
                assertTrue(rs.next() && rs.getBoolean(1), "the borrower's transaction was rolled back");
            }
            b.close();
            c.close();
        }
    }
}
