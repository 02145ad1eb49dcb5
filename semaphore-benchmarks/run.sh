#!/usr/bin/env bash
# Builds the benchmarks jar, runs every JMH benchmark (ours and the peers in the same run), the
# memory-per-waiter probe, and writes docs/benchmarks.md + docs/benchmarks-ratios.png.
#
#   semaphore-benchmarks/run.sh quick   # about 5 minutes on 2 cores: 1 fork, short iterations, fewer params
#   semaphore-benchmarks/run.sh full    # the full parameter grid, 2 forks (about 40 minutes on 2 cores)
#   semaphore-benchmarks/run.sh smoke   # about 3 minutes: checks that everything runs; figures meaningless
#   semaphore-benchmarks/run.sh distributed   # about 10 minutes: semaphore-redis vs Redisson (a local redis-server);
#                                             # writes docs/benchmarks-distributed.md + docs/benchmarks-distributed.png
#                                             # and replaces the distributed section at the end of docs/benchmarks.md
#                                             # (the local rows before it are kept as they are)
#
# Run it on a quiet machine: anything else running skews the figures.
set -euo pipefail

mode="${1:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
jar="$here/target/benchmarks.jar"
out="$here/target/results"

case "$mode" in
  quick)
    common=(-f 1 -wi 1 -i 2 -w 1s -r 1s)
    contended=(-p permits=1,8 -p iterations=200000 -p tasks=1000)
    cancel=(-f 1 -wi 3 -i 5)
    memory_waiters=500000
    memory_repeats=1
    run_text="quick (1 fork, 1 x 1 s warm-up, 2 x 1 s measurement; contended permits 1 and 8; hand-over 200,000 steps; futures 1,000 tasks; memory 500,000 waiters, one reading; cancellation 3 warm-up + 5 measured invocations)"
    ;;
  full)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    contended=()
    cancel=(-f 2 -wi 5 -i 10)
    memory_waiters=1000000
    memory_repeats=3
    run_text="full (2 forks, 5 x 1 s warm-up, 5 x 1 s measurement, every parameter; cancellation 5 warm-up + 10 measured invocations per fork; memory 1,000,000 waiters, median of 3)"
    ;;
  smoke)
    common=(-f 1 -wi 0 -i 1 -w 200ms -r 200ms)
    contended=(-p permits=1,8 -p sections=10000 -p iterations=10000 -p tasks=16)
    cancel=(-f 1 -wi 1 -i 1)
    memory_waiters=100000
    memory_repeats=1
    run_text="SMOKE (1 fork, no warm-up, one 200 ms iteration, tiny sizes, on a shared busy machine): checks that everything runs; the figures are NOT meaningful"
    ;;
  distributed)
    ;;
  *)
    echo "usage: $0 quick|full|smoke|distributed" >&2
    exit 2
    ;;
esac

echo "== build"
if grep -q '<module>semaphore-benchmarks</module>' "$root/pom.xml"; then
  mvn -B -q -f "$root/pom.xml" -pl semaphore-benchmarks -am package -DskipTests
else
  # Not yet a module of the root pom: install the parent, core and the Java API, then package this module alone.
  mvn -B -q -f "$root/pom.xml" -N install
  mvn -B -q -f "$root/semaphore-core/pom.xml" install -DskipTests
  mvn -B -q -f "$root/semaphore-java-api/pom.xml" install -DskipTests
  mvn -B -q -f "$here/pom.xml" package -DskipTests
fi

if [ "$mode" = distributed ]; then
  # semaphore-redis vs Redisson on a local redis-server (one per fork): JMH rows, then commands per
  # acquisition and the FIFO check, into $here/target/distributed/. DistributedReport turns them into
  # docs/benchmarks-distributed.md + .png, and replaces the section of docs/benchmarks.md from its line
  # "## Distributed: semaphore-redis vs Redisson" to the end with the same text; the local rows before it
  # stay as the last quick/full run wrote them (and that report includes benchmarks-distributed.md as it is).
  dist="$here/target/distributed"
  rm -rf "$dist"
  mkdir -p "$dist"
  # 2 forks, each on a fresh server; the round trips vary a lot on a shared machine, hence the iterations.
  java -jar "$jar" 'dev.semaphore.benchmarks.distributed.DistributedUncontended' -f 2 -wi 5 -i 10 -w 1s -r 1s \
    -rf json -rff "$dist/uncontended.json" | tee "$dist/jmh-uncontended.txt"
  java -jar "$jar" 'dev.semaphore.benchmarks.distributed.DistributedContended' -f 2 -wi 3 -i 8 -w 2s -r 2s \
    -rf json -rff "$dist/contended.json" | tee "$dist/jmh-contended.txt"
  java -cp "$jar" dev.semaphore.benchmarks.distributed.RedisPeersReport | tee "$dist/peers.md"
  # The server the benchmarks ran: LocalRedisServer takes $REDIS_SERVER, else redis-server on the PATH,
  # else the build shipped in embedded-redis.
  redis_bin="${REDIS_SERVER:-$(command -v redis-server || true)}"
  server_version="$( { [ -n "$redis_bin" ] && "$redis_bin" --version; } 2>/dev/null || echo "the redis-server build of embedded-redis")"
  echo "== report"
  java -Djava.awt.headless=true -cp "$jar" dev.semaphore.benchmarks.report.DistributedReport --dir "$dist" \
    --out "$root/docs/benchmarks-distributed.md" --chart "$root/docs/benchmarks-distributed.png" \
    --server "$server_version" --splice "$root/docs/benchmarks.md"
  exit 0
fi

rm -rf "$out"
mkdir -p "$out"

echo "== uncontended, Kotlin and Java (with -prof gc)"
java -jar "$jar" 'dev.semaphore.benchmarks.(Java)?UncontendedBenchmark' "${common[@]}" -prof gc \
  -rf json -rff "$out/uncontended.json"

echo "== contended, hand-over, priority, Java futures"
java -jar "$jar" 'dev.semaphore.benchmarks.(ContendedBenchmark|ContendedLockBenchmark|HandoffBenchmark|PriorityBenchmark|FuturesContendedBenchmark)' \
  "${common[@]}" ${contended[@]+"${contended[@]}"} -rf json -rff "$out/contended.json"

echo "== cancellation"
java -jar "$jar" 'dev.semaphore.benchmarks.CancellationBenchmark' "${cancel[@]}" -rf json -rff "$out/cancellation.json"

echo "== memory per waiter"
# Serial GC: a full collection compacts exactly, so the used heap after it is the live set.
java -XX:+UseSerialGC -Xms3g -Xmx3g -cp "$jar" dev.semaphore.benchmarks.MemoryPerWaiter \
  "$memory_waiters" "$out/memory.json" "$memory_repeats"

echo "== report"
java -Djava.awt.headless=true -cp "$jar" dev.semaphore.benchmarks.report.BenchmarkReport \
  --out "$root/docs/benchmarks.md" --chart "$root/docs/benchmarks-ratios.png" \
  --memory "$out/memory.json" --run "$run_text" \
  "$out"/uncontended.json "$out"/contended.json "$out"/cancellation.json
