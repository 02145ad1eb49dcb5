package dev.semaphore.benchmarks.distributed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RedisPeersReport's interleaved rounds: the order of each round, and the statistics of the per-round figures. */
class RoundsTest {
    @Test
    void everyRoundRunsEachImplementationOnceAndOverRoundsEachRunsAtEachPositionAsOften() {
        int n = 5;
        int[][] atPosition = new int[n][n];
        int[][] before = new int[n][n];
        for (int round = 0; round < 2 * n; round++) {
            List<Integer> order = Rounds.order(round, n);
            assertEquals(n, new HashSet<>(order).size(), "round " + round + ": " + order);
            for (int p = 0; p < n; p++) {
                atPosition[order.get(p)][p]++;
                for (int q = p + 1; q < n; q++) before[order.get(p)][order.get(q)]++;
            }
        }
        for (int i = 0; i < n; i++) {
            for (int p = 0; p < n; p++) assertEquals(2, atPosition[i][p], "implementation " + i + " at position " + p);
            for (int j = 0; j < n; j++) if (i != j) assertEquals(n, before[i][j], "implementation " + i + " before " + j);
        }
    }

    @Test
    void quantilesInterpolateBetweenRanks() {
        List<Double> v = List.of(4.0, 1.0, 3.0, 2.0, 5.0);
        assertEquals(3.0, Rounds.median(v), 1e-12);
        assertEquals(2.0, Rounds.quantile(v, 0.25), 1e-12);
        assertEquals(4.0, Rounds.quantile(v, 0.75), 1e-12);
        assertEquals(2.5, Rounds.median(List.of(1.0, 2.0, 3.0, 4.0)), 1e-12);
        assertEquals(7.0, Rounds.median(List.of(7.0)), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> Rounds.quantile(List.of(), 0.5));
    }

    @Test
    void ratiosArePairedByRoundAndTheIntervalIsStudentsT() {
        List<Double> a = List.of(2.0, 4.0, 6.0), b = List.of(1.0, 2.0, 4.0);
        assertEquals(List.of(2.0, 2.0, 1.5), Rounds.ratios(a, b));
        assertThrows(IllegalArgumentException.class, () -> Rounds.ratios(a, List.of(1.0)));
        // sd of {1, 2, 3} is 1; t(0.975, 2 degrees of freedom) = 4.302653
        assertEquals(4.302653 / Math.sqrt(3), Rounds.halfWidth95(List.of(1.0, 2.0, 3.0)), 1e-5);
        assertTrue(Double.isNaN(Rounds.halfWidth95(List.of(1.0))));
        List<Double> same = new ArrayList<>(List.of(1.0, 1.0, 1.0, 1.0));
        assertEquals(0.0, Rounds.halfWidth95(same), 0.0);
    }
}
