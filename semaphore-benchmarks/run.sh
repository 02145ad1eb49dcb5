#!/usr/bin/env bash
# Builds the benchmarks jar, runs every JMH benchmark (ours and the peers in the same run), the
# memory-per-waiter probe, and writes docs/benchmarks.md + docs/benchmarks-ratios.png.
#
#   semaphore-benchmarks/run.sh quick   # about 10 minutes on 2 cores: 1 fork, short iterations, fewer params
#   semaphore-benchmarks/run.sh full    # the full parameter grid, 2 forks (about 75 minutes on 2 cores), then
#                                       # each group where a peer is faster again (about a minute per group)
#   semaphore-benchmarks/run.sh smoke   # about 4 minutes: checks that everything runs; figures meaningless
#   semaphore-benchmarks/run.sh distributed   # about 20 minutes: semaphore-redis vs Redisson (a local redis-server);
#                                             # writes docs/benchmarks-distributed.md + docs/benchmarks-distributed.png
#                                             # and replaces the distributed section at the end of docs/benchmarks.md
#                                             # (the local rows before it are kept as they are)
#   semaphore-benchmarks/run.sh readwrite     # about 14 minutes: only the ReadWriteLock benchmarks (ReadWriteBenchmark,
#                                             # ReadWriteThreadsBenchmark; short and long sections, workInside 50 and 1000)
#                                             # with the full settings (2 forks, 5 x 1 s warm-up,
#                                             # 5 x 1 s measurement); writes docs/benchmarks-readwrite.md + .png and replaces
#                                             # the ReadWriteLock section of docs/benchmarks.md (every other section is kept).
#                                             # It builds only this module, against the core, Java API and redis modules
#                                             # installed in the local Maven repository when they are there (else as the
#                                             # other modes do).
#   semaphore-benchmarks/run.sh diagnostics [REF]   # about 60 minutes (more while it waits for a quiet machine): what
#                                             # diagnostics cost (issue 29). Builds this tree's jar and REF's (default
#                                             # bc8bd15, main before the diagnostics work), then 8 paired
#                                             # rounds (ROUNDS=n to change), each REF's jar then this one's, 1 fork, 3 x 1 s
#                                             # warm-up, 5 x 1 s measurement, with diagnostics off: UncontendedBenchmark
#                                             # (ours, kotlinx as control), JavaUncontendedBenchmark (ours, juc as control),
#                                             # ContendedBenchmark (ours, kotlinx; default dispatcher, 1,000 coroutines,
#                                             # permits 1 and 8), HandoffBenchmark (ours, kotlinx); then DiagnosticsBenchmark
#                                             # (2 forks, 5 x 1 s + 5 x 1 s, -prof gc). Each JMH run first waits for a quiet
#                                             # machine (no other java or Maven process using CPU, load below 1.5), and a
#                                             # round during which one did is measured again. Writes
#                                             # docs/benchmarks-diagnostics.md + .json and the Diagnostics section of
#                                             # docs/benchmarks.md (every other section is kept).
#
# OFFLINE=1 builds with mvn -o. RESUME=1 run.sh diagnostics goes on with a run that was stopped: the same jars, its
# finished rounds kept, the round it was in measured again whole. RESUME=1 REMEASURE_ON=1 run.sh diagnostics keeps a
# finished run's paired rounds and measures DiagnosticsBenchmark again with this tree's jar (after a change that only
# the observed path runs); the report names both commits.
#
# quick, full and smoke run the ReadWriteLock benchmarks too, with their settings (smoke: 10,000 sections).
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
    readwrite=()
    readwrite_text="quick"
    run_text="quick (1 fork, 1 x 1 s warm-up, 2 x 1 s measurement; contended permits 1 and 8; hand-over 200,000 steps; futures 1,000 tasks; memory 500,000 waiters, one reading; cancellation 3 warm-up + 5 measured invocations)"
    ;;
  full)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    contended=()
    cancel=(-f 2 -wi 5 -i 10)
    memory_waiters=1000000
    memory_repeats=3
    readwrite=()
    readwrite_text="full"
    run_text="full (2 forks, 5 x 1 s warm-up, 5 x 1 s measurement, every parameter; cancellation 5 warm-up + 10 measured invocations per fork; memory 1,000,000 waiters, median of 3)"
    ;;
  smoke)
    common=(-f 1 -wi 0 -i 1 -w 200ms -r 200ms)
    contended=(-p permits=1,8 -p sections=10000 -p iterations=10000 -p tasks=16)
    cancel=(-f 1 -wi 1 -i 1)
    memory_waiters=100000
    memory_repeats=1
    readwrite=(-p sections=10000)
    readwrite_text="SMOKE (no warm-up, 10,000 sections): checks that everything runs; the figures are NOT meaningful"
    run_text="SMOKE (1 fork, no warm-up, one 200 ms iteration, tiny sizes, on a shared busy machine): checks that everything runs; the figures are NOT meaningful"
    ;;
  readwrite)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    readwrite_text="readwrite (only these benchmarks, with the full settings)"
    ;;
  distributed)
    ;;
  diagnostics)
    before_ref="${2:-bc8bd15}"
    ;;
  *)
    echo "usage: $0 quick|full|smoke|distributed|readwrite|diagnostics [REF]" >&2
    exit 2
    ;;
esac

# True if the local Maven repository has every module this one depends on, at the version of the root pom, and
# the installed core has ReadWriteLock.
installed() {
  local repo="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}/dev/semaphore"
  local v
  v="$(sed -n 's:^  <version>\(.*\)</version>.*:\1:p' "$root/pom.xml" | head -1)"
  [ -n "$v" ] && [ -f "$repo/semaphore-parent/$v/semaphore-parent-$v.pom" ] \
    && [ -f "$repo/semaphore-java-api/$v/semaphore-java-api-$v.jar" ] \
    && [ -f "$repo/semaphore-redis/$v/semaphore-redis-$v.jar" ] \
    && [ -f "$repo/semaphore-redis/$v/semaphore-redis-$v-tests.jar" ] \
    && [ -f "$repo/semaphore-core/$v/semaphore-core-$v.jar" ] \
    && jar tf "$repo/semaphore-core/$v/semaphore-core-$v.jar" | grep -qx 'dev/semaphore/ReadWriteLock.class'
}

mvn() { command mvn ${OFFLINE:+-o} "$@"; }

echo "== build"
if [ "$mode" = readwrite ] && installed; then
  # Only this module, against the installed core, Java API and redis modules (another build may be using the
  # other modules' target directories). Run `mvn install -DskipTests` first if the installed ones are older
  # than the sources.
  echo "(semaphore-benchmarks alone, against the modules installed in the local Maven repository)"
  mvn -B -q -f "$root/pom.xml" -pl semaphore-benchmarks package -DskipTests
elif grep -q '<module>semaphore-benchmarks</module>' "$root/pom.xml"; then
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
  # Uncontended: 6 rounds, each running every implementation once (one fork, a fresh server), so that ours
  # and each peer are measured side by side in every round: the round trips vary more from minute to minute
  # than within one. MergeRounds pools the rounds into uncontended.json and writes the paired ratios.
  rounds=()
  for round in 1 2 3 4 5 6; do
    java -jar "$jar" 'dev.semaphore.benchmarks.distributed.DistributedUncontended' -f 1 -wi 5 -i 10 -w 1s -r 1s \
      -rf json -rff "$dist/uncontended-$round.json" | tee -a "$dist/jmh-uncontended.txt"
    rounds+=("$dist/uncontended-$round.json")
  done
  java -cp "$jar" dev.semaphore.benchmarks.distributed.MergeRounds --out "$dist/uncontended.json" \
    --paired "$dist/paired.md" "${rounds[@]}"
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

if [ "$mode" = diagnostics ]; then
  dir="$here/target/diagnostics"
  if [ -n "${RESUME:-}" ] && [ -f "$dir/before.jar" ]; then
    echo "== resuming the run in $dir: its jars and refs, its finished rounds kept" | tee -a "$dir/disturbed.txt"
  else
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$jar" "$dir/after.jar"
    git -C "$root" rev-parse --short HEAD > "$dir/after.ref"
    [ -z "$(git -C "$root" status --porcelain -- . ':!docs')" ] || echo "$(cat "$dir/after.ref") with uncommitted changes" > "$dir/after.ref"
    git -C "$root" rev-parse --short "$before_ref^{commit}" > "$dir/before.ref"
    echo "== build $(cat "$dir/before.ref")"
    git clone -q "$root" "$dir/before-src"
    git -C "$dir/before-src" checkout -q "$(cat "$dir/before.ref")"
    mvn -B -q -f "$dir/before-src/pom.xml" -pl semaphore-benchmarks -am package -DskipTests
    cp "$dir/before-src/semaphore-benchmarks/target/benchmarks.jar" "$dir/before.jar"
    rm -rf "$dir/before-src"
    date +%s > "$dir/started"
  fi
  before_ref="$(cat "$dir/before.ref")"
  after_ref="$(cat "$dir/after.ref")"
  if [ -n "${RESUME:-}" ] && [ -n "${REMEASURE_ON:-}" ]; then
    # The paired rounds kept; DiagnosticsBenchmark measured again with this tree's jar (a change of the observed path).
    cp "$jar" "$dir/on.jar"
    git -C "$root" rev-parse --short HEAD > "$dir/on.ref"
    [ -z "$(git -C "$root" status --porcelain -- . ':!docs')" ] || echo "$(cat "$dir/on.ref") with uncommitted changes" > "$dir/on.ref"
    rm -f "$dir/diagnostics.json"
  fi
  on_jar="$dir/after.jar"; on_ref="$after_ref"
  [ ! -f "$dir/on.jar" ] || { on_jar="$dir/on.jar"; on_ref="$(cat "$dir/on.ref")"; }

  # java and Maven processes this script did not start: "pid cpu-ticks command", one a line (ticks of /proc/pid/stat).
  foreign() {
    ps -eo pid=,ppid=,args= | awk -v me=$$ '
      { parent[$1] = $2; c = $0; sub(/^ *[0-9]+ +[0-9]+ +/, "", c); cmd[$1] = c }
      END { for (p in cmd) { split(cmd[p], w, " ")
              if (w[1] !~ /(^|\/)(java|mvn)$/ && cmd[p] !~ /surefire|classworlds/) continue
              q = p; while (q > 1 && q != me && (q in parent)) q = parent[q]
              if (q == me) continue
              stat = ""; getline stat < ("/proc/" p "/stat"); close("/proc/" p "/stat")
              sub(/^.*\) /, "", stat); split(stat, f, " ")
              print p, f[12] + f[13], substr(cmd[p], 1, 100) } }'
  }
  # Sleeps $1 seconds and prints the foreign processes that were busy meanwhile: a Maven build or test, or anything
  # else that used half a second of CPU (an idle compiler daemon is not busy).
  busy() {
    local a b
    a="$(foreign)"; sleep "$1"; b="$(foreign)"
    awk -v t="$(date +%T)" -v hz="$(getconf CLK_TCK)" 'NR == FNR { was[$1] = $2; next } NF {
        d = ($2 - (($1 in was) ? was[$1] : 0)) / hz; c = $0; sub(/^[0-9]+ [0-9]+ /, "", c)
        if (c ~ /surefire|classworlds/ || d >= 0.5) printf "%s pid %s +%.2f s CPU: %s\n", t, $1, d, c }' <(echo "$a") <(echo "$b")
  }
  # Runs "$@" (its output into $dir/$1.txt) once the machine is quiet, watching for other work meanwhile;
  # fails, with what ran, if there was some.
  measure() {
    local name="$1" load b mon
    shift
    while :; do
      b="$(busy 30)"
      load="$(cut -d' ' -f1 /proc/loadavg)"
      [ -z "$b" ] && awk -v l="$load" 'BEGIN { exit !(l < 1.5) }' && break
      echo "   $(date +%T) waiting for a quiet machine (load $load) ${b:+; busy: $(echo "$b" | head -1)}"
    done
    ( while :; do busy 5; done ) > "$dir/$name.busy" &
    mon=$!
    echo "   $(date +%T) $name"
    "$@" > "$dir/$name.txt" 2>&1 || { kill "$mon"; echo "$name failed: see $dir/$name.txt" >&2; exit 1; }
    kill "$mon"
    wait "$mon" 2>/dev/null || true
    [ -s "$dir/$name.busy" ] || return 0
    { echo "redone $name, disturbed by:"; sort -u -k3,3 "$dir/$name.busy" | head -5; } | tee -a "$dir/disturbed.txt"
    return 1
  }
  rows=('dev\.semaphore\.benchmarks\.UncontendedBenchmark\.\w+_(ours|kotlinx)$'
    'dev\.semaphore\.benchmarks\.JavaUncontendedBenchmark\.\w+_(ours|juc)$'
    'dev\.semaphore\.benchmarks\.(Contended|Handoff)Benchmark\.'
    -p impl=ours,kotlinx -p dispatcher=default -p coroutines=1000 -p permits=1,8 -f 1 -wi 3 -i 5 -w 1s -r 1s)
  rounds="${ROUNDS:-8}"
  for round in $(seq 1 "$rounds"); do
    if [ -s "$dir/before-$round.json" ] && [ -s "$dir/after-$round.json" ]; then echo "== round $round: done before"; continue; fi
    echo "== round $round of $rounds: $before_ref, then this tree"
    for attempt in 1 2 3 4 5; do
      quiet=1
      measure "before-$round" java -jar "$dir/before.jar" "${rows[@]}" -rf json -rff "$dir/before-$round.json" || quiet=
      measure "after-$round" java -jar "$dir/after.jar" "${rows[@]}" -rf json -rff "$dir/after-$round.json" || quiet=
      [ -z "$quiet" ] || break
      [ "$attempt" -lt 5 ] || echo "kept round $round although disturbed 5 times" | tee -a "$dir/disturbed.txt"
    done
  done
  echo "== DiagnosticsBenchmark"
  for attempt in 1 2 3; do
    [ ! -s "$dir/diagnostics.json" ] || break
    measure diagnostics java -jar "$on_jar" 'dev\.semaphore\.benchmarks\.DiagnosticsBenchmark\.' \
      -f 2 -wi 5 -i 5 -w 1s -r 1s -prof gc -rf json -rff "$dir/diagnostics.json" && break
  done
  minutes=$(( ($(date +%s) - $(cat "$dir/started") + 59) / 60 ))
  runtext="run.sh diagnostics, $rounds rounds; $minutes minutes after the builds, waits for a quiet machine included"
  [ ! -f "$dir/on.jar" ] || runtext="run.sh diagnostics, $rounds rounds; DiagnosticsBenchmark measured again later (RESUME=1 REMEASURE_ON=1)"
  echo "== report"
  java -cp "$jar" dev.semaphore.benchmarks.report.DiagnosticsReport --dir "$dir" \
    --before "$before_ref" --after "$after_ref" --on "$on_ref" --out "$root/docs/benchmarks-diagnostics.md" \
    --json "$root/docs/benchmarks-diagnostics.json" --splice "$root/docs/benchmarks.md" \
    --run "$runtext"
  exit 0
fi

# The ReadWriteLock benchmarks: ours and its three peers in one JMH run (the ratios come from one run).
run_readwrite() {
  echo "== read-write lock (ReadWriteBenchmark, ReadWriteThreadsBenchmark)"
  java -jar "$jar" 'dev.semaphore.benchmarks.ReadWrite(Threads)?Benchmark' "${common[@]}" ${readwrite[@]+"${readwrite[@]}"} \
    -rf json -rff "$out/readwrite.json"
}

if [ "$mode" = readwrite ]; then
  mkdir -p "$out"
  readwrite=()
  run_readwrite
  echo "== report"
  # Writes docs/benchmarks-readwrite.md + .png, and replaces the ReadWriteLock section of docs/benchmarks.md
  # (placed before the distributed section); every other section stays as the last quick/full/distributed run
  # wrote it. BenchmarkReport carries benchmarks-readwrite.md along when it regenerates benchmarks.md.
  java -Djava.awt.headless=true -cp "$jar" dev.semaphore.benchmarks.report.ReadWriteReport --json "$out/readwrite.json" \
    --out "$root/docs/benchmarks-readwrite.md" --chart "$root/docs/benchmarks-readwrite.png" --run "$readwrite_text" \
    --splice "$root/docs/benchmarks.md"
  exit 0
fi

rm -rf "$out"
mkdir -p "$out"

echo "== uncontended, Kotlin (direct calls, through a one-method interface, in users' call shapes) and Java (with -prof gc)"
java -jar "$jar" 'dev.semaphore.benchmarks.((Java)?UncontendedBenchmark|UncontendedInterfaceBenchmark|CallShapesBenchmark)' "${common[@]}" -prof gc \
  -rf json -rff "$out/uncontended.json"

echo "== contended, hand-over, priority, Java futures, many threads"
java -jar "$jar" 'dev.semaphore.benchmarks.(ContendedBenchmark|ContendedLockBenchmark|HandoffBenchmark|EngineStepBenchmark|PriorityBenchmark|FuturesContendedBenchmark|ThreadsBenchmark|ThreadsSuspendingBenchmark)' \
  "${common[@]}" ${contended[@]+"${contended[@]}"} -rf json -rff "$out/contended.json"

echo "== contended, on more threads than cores: a fixed pool of 64 threads and Dispatchers.IO"
java -jar "$jar" 'dev.semaphore.benchmarks.(ContendedBenchmark|ContendedLockBenchmark)' "${common[@]}" \
  -p dispatcher=pool64,io -p coroutines=1000 -p permits=1,8 -rf json -rff "$out/oversubscribed.json"

run_readwrite

echo "== cancellation"
java -jar "$jar" 'dev.semaphore.benchmarks.CancellationBenchmark' "${cancel[@]}" -rf json -rff "$out/cancellation.json"

echo "== memory per waiter"
# Serial GC: a full collection compacts exactly, so the used heap after it is the live set.
java -XX:+UseSerialGC -Xms3g -Xmx3g -cp "$jar" dev.semaphore.benchmarks.MemoryPerWaiter \
  "$memory_waiters" "$out/memory.json" "$memory_repeats"

echo "== report"
# First the ReadWriteLock section (its own file, which BenchmarkReport then includes before the distributed one).
java -Djava.awt.headless=true -cp "$jar" dev.semaphore.benchmarks.report.ReadWriteReport --json "$out/readwrite.json" \
  --out "$root/docs/benchmarks-readwrite.md" --chart "$root/docs/benchmarks-readwrite.png" --run "$readwrite_text"
report=(java -Djava.awt.headless=true -cp "$jar" dev.semaphore.benchmarks.report.BenchmarkReport
  --out "$root/docs/benchmarks.md" --chart "$root/docs/benchmarks-ratios.png"
  --memory "$out/memory.json" --run "$run_text")
results=("$out"/uncontended.json "$out"/contended.json "$out"/oversubscribed.json "$out"/cancellation.json)
"${report[@]}" --recheck-list "$out/recheck.txt" "${results[@]}"

# Every group where a peer is faster is measured a second time, in a JMH invocation of its own (fresh JVMs, the
# same settings), and the report shows both ratios: one slow phase of this shared machine during the long run then
# shows as a row whose two measurements disagree. Each selector line pins every parameter of its group.
if [ -s "$out/recheck.txt" ]; then
  echo "== recheck: each group where a peer is faster, again"
  n=0
  rechecks=()
  while read -r -a selector; do
    n=$((n + 1))
    case "${selector[0]}" in
      *CancellationBenchmark*) settings=("${cancel[@]}") ;;
      *) settings=("${common[@]}") ;;
    esac
    java -jar "$jar" "${selector[@]}" "${settings[@]}" -rf json -rff "$out/recheck-$n.json" < /dev/null
    rechecks+=(--recheck "$out/recheck-$n.json")
  done < "$out/recheck.txt"
  "${report[@]}" "${rechecks[@]}" "${results[@]}"
fi
