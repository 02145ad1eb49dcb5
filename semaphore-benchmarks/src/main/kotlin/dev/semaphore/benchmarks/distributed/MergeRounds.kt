package dev.semaphore.benchmarks.distributed

import com.google.gson.GsonBuilder
import com.google.gson.JsonArray
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.apache.commons.math3.distribution.TDistribution
import java.nio.file.Files
import java.nio.file.Path
import kotlin.math.sqrt

/**
 * The uncontended distributed rows move from run to run by more than their error (they are round trips
 * on a shared machine), so `run.sh distributed` measures them in rounds: each round runs every
 * implementation once (one fork, a fresh server), one after another, so that ours and each peer are
 * measured side by side in every round. This merges the rounds' JMH files into one (each benchmark's
 * iterations pooled over the rounds, score and 99.9% error recomputed as JMH does), for
 * DistributedReport, and writes the paired comparison: per round, ours / peer, and their mean with a
 * 95% confidence interval over the rounds.
 *
 *   MergeRounds --out uncontended.json --paired paired.md round-1.json round-2.json ...
 */
object MergeRounds {
    /** Ours and the peer it is compared with, by benchmark method suffix. */
    private val pairs = listOf("ours" to "redissonSemaphore", "ours" to "redissonPermitExpirable", "oursLock" to "redissonFairLock")

    @JvmStatic
    fun main(args: Array<String>) {
        val out = Path.of(args[args.indexOf("--out") + 1])
        val paired = Path.of(args[args.indexOf("--paired") + 1])
        val rounds = args.filterIndexed { i, a -> !a.startsWith("--") && (i == 0 || !args[i - 1].startsWith("--")) }.map { Path.of(it) }
        require(rounds.size >= 2) { "at least 2 rounds are needed, was ${rounds.size}" }
        val byRound = rounds.map { file -> JsonParser.parseString(Files.readString(file)).asJsonArray.map { it.asJsonObject } }

        val merged = JsonArray()
        for (first in byRound[0]) {
            val name = first["benchmark"].asString
            val all = byRound.map { round -> round.single { it["benchmark"].asString == name } }
            val values = all.flatMap { b -> b["primaryMetric"].asJsonObject["rawData"].asJsonArray.flatMap { fork -> fork.asJsonArray.map { it.asDouble } } }
            val copy = first.deepCopy()
            val metric = copy["primaryMetric"].asJsonObject
            metric.add("rawData", JsonArray().also { forks -> all.forEach { b -> b["primaryMetric"].asJsonObject["rawData"].asJsonArray.forEach(forks::add) } })
            metric.addProperty("score", values.average())
            metric.addProperty("scoreError", halfWidth(values, 0.999))
            copy.addProperty("forks", all.size)
            merged.add(copy)
        }
        Files.writeString(out, GsonBuilder().setPrettyPrinting().create().toJson(merged))

        fun score(round: List<JsonObject>, impl: String): Double =
            round.single { it["benchmark"].asString.endsWith("_$impl") }["primaryMetric"].asJsonObject["score"].asDouble

        val md = StringBuilder()
        md.append("| ours / peer, uncontended acquire + release | per round (").append(rounds.size)
            .append(" rounds, one fork each) | mean, 95% confidence over the rounds |\n|---|---|---|\n")
        for ((ours, peer) in pairs) {
            val ratios = byRound.map { score(it, ours) / score(it, peer) }
            md.append("| `").append(ours).append("` / `").append(peer).append("` | ")
                .append(ratios.joinToString(" ") { "%.2f".format(it) }).append(" | ")
                .append("%.2f ± %.2f".format(ratios.average(), halfWidth(ratios, 0.95))).append(" |\n")
        }
        Files.writeString(paired, md.toString())
        print(md)
    }

    /** Half the width of the [confidence] interval of the mean of [values] (Student's t); DiagnosticsReport's too. */
    @JvmStatic
    fun halfWidth(values: List<Double>, confidence: Double): Double {
        if (values.size < 2) return Double.NaN
        val mean = values.average()
        val sd = sqrt(values.sumOf { (it - mean) * (it - mean) } / (values.size - 1))
        return TDistribution((values.size - 1).toDouble()).inverseCumulativeProbability(1 - (1 - confidence) / 2) * sd / sqrt(values.size.toDouble())
    }
}
