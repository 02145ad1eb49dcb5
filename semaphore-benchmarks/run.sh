#!/usr/bin/env bash
# Builds the benchmarks jar, runs JMH benchmarks (ours and the peers in the same run) into docs/results/, and
# regenerates docs/benchmarks.md from every directory there (Report.java), so the
# sections a mode does not run keep the figures of the last run that did. What each section measures, and how long
# each mode takes: docs/benchmarking.md.
#
#   run.sh quick | full     # cycles/, contended/, readwrite/, readmostly/ and local/ (cancellation, the memory
#                           # probe); full: 2 forks (readmostly/: 6), every param
#   run.sh cycles           # cycles/ only, with the full settings: the uncontended cycles and the hand-off
#   run.sh handoff          # handoff/ only: the hand-off in each dispatcher shape, direct and behind an interface
#   run.sh contended        # contended/ only, with the full settings: contention, priorities, futures, many threads
#   run.sh smoke            # the same with tiny sizes into target/smoke/ (docs/ untouched): checks that everything runs
#   run.sh readwrite        # readwrite/ only, with the full settings
#   run.sh readmostly       # readmostly/ only: readwrite/'s read-mostly rows again, with 6 forks
#   run.sh local            # local/ only, with the full settings: cancellation and the memory probe
#   run.sh distributed      # distributed/: semaphore-redis vs Redisson on a local redis-server, in rounds
#   run.sh postgres         # postgres/: semaphore-postgres vs the pg_try_advisory_lock recipe and Spring's JdbcLockRegistry
#                           # on a local PostgreSQL, and ours on a local redis-server; then PostgresPeersReport (server cost)
#   run.sh postgres-smoke   # the same with tiny sizes into target/smoke-postgres/ (docs/ untouched): checks that it runs
#   run.sh diagnostics [REF]  # diagnostics/: 8 paired rounds of REF's jar (default bc8bd15) and this tree's, with
#                           # diagnostics off, each JMH run on a quiet machine (no other java or Maven process busy,
#                           # load below 1.5; a disturbed round is measured again), then DiagnosticsBenchmark
#
# OFFLINE=1 builds with mvn -o. RESUME=1 run.sh diagnostics goes on with a run that was stopped: the same jars, its
# finished rounds kept. RESUME=1 REMEASURE_ON=1 run.sh diagnostics keeps the paired rounds and measures
# DiagnosticsBenchmark again with this tree's jar.
set -euo pipefail

mode="${1:-}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
jar="$here/target/benchmarks.jar"
results="$root/docs/results"
report_md="$root/docs/benchmarks.md"

handoff=() # HandoffShapesBenchmark's settings: its class's own unless a mode says
case "$mode" in
  quick)
    common=(-f 1 -wi 1 -i 2 -w 1s -r 1s)
    handoff=("${common[@]}")
    contended=(-p permits=1,8 -p iterations=200000 -p tasks=1000)
    cancel=(-f 1 -wi 3 -i 5)
    memory_waiters=500000
    memory_repeats=1
    readwrite=()
    readwrite_text="every parameter"
    readmostly=("${common[@]}")
    contended_text="contended permits 1 and 8 only; futures 1,000 tasks"
    run_text="hand-over 200,000 steps; memory 500,000 waiters, one reading"
    ;;
  full)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    contended=()
    cancel=(-f 2 -wi 5 -i 10)
    memory_waiters=1000000
    memory_repeats=3
    readwrite=()
    readwrite_text="every parameter"
    readmostly=(-f 6 -wi 5 -i 5 -w 1s -r 1s)
    contended_text="every parameter"
    run_text="every parameter; memory 1,000,000 waiters, median of 3"
    ;;
  smoke)
    common=(-f 1 -wi 0 -i 1 -w 200ms -r 200ms)
    handoff=("${common[@]}")
    contended=(-p permits=1,8 -p sections=10000 -p iterations=10000 -p tasks=16)
    cancel=(-f 1 -wi 1 -i 1)
    memory_waiters=100000
    memory_repeats=1
    readwrite=(-p sections=10000)
    readmostly=("${common[@]}")
    contended_text="tiny sizes: checks that everything runs; the figures are NOT meaningful"
    rm -rf "$here/target/smoke" && mkdir -p "$here/target/smoke" && cp -r "$results" "$here/target/smoke/results"
    results="$here/target/smoke/results"
    report_md="$here/target/smoke/benchmarks.md"
    readwrite_text="10,000 sections: checks that everything runs; the figures are NOT meaningful"
    run_text="tiny sizes: checks that everything runs; the figures are NOT meaningful"
    ;;
  readwrite)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    readwrite_text="every parameter"
    ;;
  readmostly)
    readmostly=(-f 6 -wi 5 -i 5 -w 1s -r 1s)
    readwrite=()
    ;;
  cycles)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    contended=()
    ;;
  handoff)
    ;;
  local)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    cancel=(-f 2 -wi 5 -i 10)
    memory_waiters=1000000
    memory_repeats=3
    run_text="every parameter; memory 1,000,000 waiters, median of 3"
    ;;
  contended)
    common=(-f 2 -wi 5 -i 5 -w 1s -r 1s)
    contended=()
    contended_text="every parameter"
    ;;
  distributed)
    ;;
  postgres|postgres-smoke)
    ;;
  diagnostics)
    before_ref="${2:-bc8bd15}"
    ;;
  *)
    echo "usage: $0 quick|full|smoke|cycles|handoff|contended|distributed|postgres|postgres-smoke|readwrite|readmostly|local|diagnostics [REF]" >&2
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

# Writes $1/run.txt: the run ($2), when it finished, and the machine.
run_txt() {
  local f m
  f="$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | xargs)"; m="$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "$2; finished $(date -u '+%Y-%m-%d %H:%M') UTC on $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | xargs) (family $f, model $m), $(nproc) cores, $(uname -sr)" > "$1/run.txt"
}

# Regenerates the report from every directory of $results; "$@" are more arguments of Report.
report() {
  echo "== report"
  java -cp "$jar" dev.semaphore.benchmarks.report.Report --results "$results" \
    --out "$report_md" "$@"
}

echo "== build"
if { [ "$mode" = readwrite ] || [ "$mode" = readmostly ] || [ "$mode" = cycles ] || [ "$mode" = contended ]; } && installed; then
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
  # semaphore-redis vs Redisson on a local redis-server (one per fork). The uncontended rows in 6 rounds, each running
  # every implementation once (1 fork, a fresh server), so that ours and each peer are measured side by side in every
  # round: round trips vary more from minute to minute than within one (the report pools rounds, R4 of Report.java).
  dist="$results/distributed"
  rm -rf "$dist"
  mkdir -p "$dist"
  for round in 1 2 3 4 5 6; do
    java -jar "$jar" 'dev.semaphore.benchmarks.distributed.DistributedUncontended' -f 1 -wi 5 -i 10 -w 1s -r 1s \
      -rf json -rff "$dist/uncontended-$round.json"
  done
  java -jar "$jar" 'dev.semaphore.benchmarks.distributed.DistributedContended' -f 2 -wi 3 -i 8 -w 2s -r 2s \
    -rf json -rff "$dist/contended.json"
  # Commands per acquisition, fairness, and the server's work in scripts: every implementation on one server in 40
  # interleaved rounds (paired ratios per round), and, with valgrind on the PATH, instructions under callgrind.
  java -cp "$jar" dev.semaphore.benchmarks.distributed.RedisPeersReport | tee "$dist/peers.md"
  # The server the benchmarks ran: LocalRedisServer takes $REDIS_SERVER, else redis-server on the PATH,
  # else the build shipped in embedded-redis.
  redis_bin="${REDIS_SERVER:-$(command -v redis-server || true)}"
  server_version="$( { [ -n "$redis_bin" ] && "$redis_bin" --version | cut -d' ' -f1-3; } 2>/dev/null || echo "the redis-server build of embedded-redis")"
  run_txt "$dist" "\`run.sh distributed\` against $server_version on a loopback port"
  report
  exit 0
fi

if [ "$mode" = postgres ] || [ "$mode" = postgres-smoke ]; then
  # semaphore-postgres vs its peers on a local PostgreSQL (one per JMH fork, as semaphore-postgres's tests start it), and
  # ours on a local redis-server, in the same run. The uncontended rows in rounds, each running every implementation once
  # (1 fork, a fresh server), as run.sh distributed does (round trips vary more from minute to minute than within one);
  # the contended rows (PostgresContendedBenchmark, PostgresContendedLockBenchmark) with a second JVM as the load.
  if [ "$mode" = postgres-smoke ]; then
    rm -rf "$here/target/smoke-postgres" && mkdir -p "$here/target/smoke-postgres" && cp -r "$results" "$here/target/smoke-postgres/results"
    results="$here/target/smoke-postgres/results"
    report_md="$here/target/smoke-postgres/benchmarks.md"
    rounds=2
    uncontended=(-f 1 -wi 1 -i 2 -w 1s -r 1s)
    contended=(-f 1 -wi 1 -i 2 -w 1s -r 1s)
    cost=(--rounds 2 --batch 20 --cycles 2)
    pg_text="tiny sizes (2 rounds of 1 warm-up + 2 iterations; cost: 2 rounds of 20): checks that everything runs; the figures are NOT meaningful"
  else
    rounds=6
    uncontended=(-f 1 -wi 5 -i 10 -w 1s -r 1s)
    contended=(-f 2 -wi 3 -i 8 -w 2s -r 2s)
    cost=()
    pg_text="every parameter"
  fi
  pg="$results/postgres"
  rm -rf "$pg"
  mkdir -p "$pg"
  for round in $(seq 1 "$rounds"); do
    echo "== PostgreSQL, uncontended: round $round of $rounds"
    java -jar "$jar" 'dev.semaphore.benchmarks.distributed.PostgresUncontended' "${uncontended[@]}" \
      -rf json -rff "$pg/uncontended-$round.json"
  done
  echo "== PostgreSQL, contended: 2 JVMs x 100 workers"
  java -jar "$jar" 'dev.semaphore.benchmarks.distributed.PostgresContended' "${contended[@]}" -rf json -rff "$pg/contended.json"
  echo "== PostgreSQL, server cost per acquisition (PostgresPeersReport)"
  java -cp "$jar" dev.semaphore.benchmarks.distributed.PostgresPeersReport ${cost[@]+"${cost[@]}"} --out "$pg"
  # The servers the benchmarks ran: LocalPostgresServer takes $PG_BIN, else the newest /usr/lib/postgresql/*/bin, else
  # postgres on the PATH; LocalRedisServer takes $REDIS_SERVER, else redis-server on the PATH, else embedded-redis's build.
  pg_bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
  pg_version="$( { { [ -n "$pg_bin" ] && "$pg_bin/postgres" --version; } 2>/dev/null || postgres --version 2>/dev/null || echo "postgres"; } | sed 's/^postgres (PostgreSQL)/PostgreSQL/')"
  redis_bin="${REDIS_SERVER:-$(command -v redis-server || true)}"
  server_version="$( { [ -n "$redis_bin" ] && "$redis_bin" --version | cut -d' ' -f1-3; } 2>/dev/null || echo "the redis-server build of embedded-redis")"
  run_txt "$pg" "\`run.sh $mode\`: $pg_text; against $pg_version and $server_version on loopback ports, at $(git -C "$root" rev-parse --short HEAD)"
  report
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
    'dev\.semaphore\.benchmarks\.JavaUncontendedBenchmark\.(acquireRelease|tryAcquireRelease)_(ours|juc)$'
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
  rm -rf "$results/diagnostics"
  mkdir -p "$results/diagnostics"
  cp "$dir"/before-*.json "$dir"/after-*.json "$dir/diagnostics.json" "$results/diagnostics/"
  run_txt "$results/diagnostics" "\`$runtext\`: before is $before_ref, after $after_ref, DiagnosticsBenchmark at $on_ref"
  report
  exit 0
fi

# The ReadWriteLock benchmarks: ours and its peers in one JMH run (the ratios come from one run), into readwrite/.
run_readwrite() {
  echo "== read-write lock (ReadWriteBenchmark, ReadWriteThreadsBenchmark)"
  rm -rf "$results/readwrite"
  mkdir -p "$results/readwrite"
  java -jar "$jar" 'dev.semaphore.benchmarks.ReadWrite(Threads)?Benchmark' "${common[@]}" ${readwrite[@]+"${readwrite[@]}"} \
    -rf json -rff "$results/readwrite/readwrite.json"
  run_txt "$results/readwrite" "\`run.sh $mode\`: $readwrite_text"
}

# readwrite/'s read-mostly rows (readPercent=90: every contender, both dispatchers, both section lengths) once more,
# in one JMH run of their own with more forks, into readmostly/: on this shared machine, 2 forks leave ratios of the
# read-mostly rows with errors of 4 to 6%, more than the differences between the best contenders.
run_readmostly() {
  echo "== read-write lock, the read-mostly rows with ${readmostly[1]} forks"
  rm -rf "$results/readmostly"
  mkdir -p "$results/readmostly"
  java -jar "$jar" 'dev.semaphore.benchmarks.ReadWrite(Threads)?Benchmark' "${readmostly[@]}" ${readwrite[@]+"${readwrite[@]}"} \
    -p readPercent=90 -rf json -rff "$results/readmostly/readmostly.json"
  run_txt "$results/readmostly" "\`run.sh $mode\`: readPercent=90 only, ${readmostly[1]} forks"
}

# Every group of the files $2 (a comma-separated list, relative to $results) where a peer is faster is measured a
# second time, in a JMH invocation of its own (fresh JVMs, the same settings), into the directory of the group's file,
# and the report shows both ratios: one slow phase of this shared machine during the long run then shows as a row
# whose two measurements disagree. Each line of the list is that directory, then a selector that pins every
# parameter of its group. $1 is the list's file.
recheck() {
  report --recheck-list "$1" "$2"
  [ -s "$1" ] || return 0
  echo "== recheck: each group where a peer is faster, again"
  local n=0 words dir settings
  while read -r -a words; do
    n=$((n + 1))
    dir="${words[0]}"
    case "${words[1]}" in
      *CancellationBenchmark*) settings=("${cancel[@]}") ;;
      *) settings=("${common[@]}") ;;
    esac
    java -jar "$jar" "${words[@]:1}" "${settings[@]}" -rf json -rff "$results/$dir/recheck-$n.json" < /dev/null
  done < "$1"
  report
}

# The uncontended cycles (Kotlin: direct calls, through a one-method interface, in users' call shapes; Java) with
# -prof gc, and the hand-off between two coroutines, into cycles/: what one operation costs when nobody else is busy.
run_cycles() {
  echo "== uncontended, Kotlin and Java (with -prof gc), and the hand-off"
  rm -rf "$results/cycles"
  mkdir -p "$results/cycles"
  java -jar "$jar" 'dev.semaphore.benchmarks.((Java)?UncontendedBenchmark|UncontendedInterfaceBenchmark|CallShapesBenchmark)' "${common[@]}" -prof gc \
    -rf json -rff "$results/cycles/uncontended.json"
  java -jar "$jar" 'dev.semaphore.benchmarks.HandoffBenchmark' "${common[@]}" ${contended[@]+"${contended[@]}"} \
    -rf json -rff "$results/cycles/handoff.json"
  run_txt "$results/cycles" "\`run.sh $mode\`: ${run_text:-every parameter}"
}

# The hand-off in each dispatcher shape (waiter on Unconfined, runBlocking's loop, Default, a thread of its own; direct
# and behind an interface) with -prof gc, into handoff/: its own settings (the class's: 2 forks, 3 + 5 x 1 s).
run_handoff() {
  echo "== hand-off by dispatcher shape (with -prof gc)"
  rm -rf "$results/handoff"
  mkdir -p "$results/handoff"
  java -jar "$jar" 'dev.semaphore.benchmarks.HandoffShapesBenchmark' ${handoff[@]+"${handoff[@]}"} -prof gc -rf json -rff "$results/handoff/shapes.json"
  run_txt "$results/handoff" "\`run.sh $mode\`: ${run_text:-every parameter}"
}

# The contended benchmarks of one process (contention on 2 threads, 64 threads and Dispatchers.IO, priorities, Java
# futures, many platform threads), into contended/.
run_contended() {
  rm -rf "$results/contended"
  mkdir -p "$results/contended"
  echo "== contended, priority, Java futures, many threads"
  java -jar "$jar" 'dev.semaphore.benchmarks.(ContendedBenchmark|ContendedLockBenchmark|PriorityBenchmark|FuturesContendedBenchmark|ThreadsBenchmark|ThreadsSuspendingBenchmark)' \
    "${common[@]}" ${contended[@]+"${contended[@]}"} -rf json -rff "$results/contended/contended.json"
  echo "== contended, on more threads than cores: a fixed pool of 64 threads and Dispatchers.IO"
  java -jar "$jar" 'dev.semaphore.benchmarks.(ContendedBenchmark|ContendedLockBenchmark)' "${common[@]}" \
    -p dispatcher=pool64,io -p coroutines=1000 -p permits=1,8 -rf json -rff "$results/contended/oversubscribed.json"
  echo "== many threads on a lock"
  java -jar "$jar" 'dev.semaphore.benchmarks.ThreadsLockBenchmark' "${common[@]}" -rf json -rff "$results/contended/threads-lock.json"
  run_txt "$results/contended" "\`run.sh $mode\`: $contended_text"
}

if [ "$mode" = contended ]; then
  run_contended
  recheck "$here/target/recheck.txt" contended/contended.json,contended/oversubscribed.json,contended/threads-lock.json
  exit 0
fi

if [ "$mode" = readwrite ]; then
  readwrite=()
  run_readwrite
  report
  exit 0
fi

if [ "$mode" = readmostly ]; then
  run_readmostly
  report
  exit 0
fi

if [ "$mode" = handoff ]; then
  run_handoff
  report
  exit 0
fi

if [ "$mode" = cycles ]; then
  run_cycles
  recheck "$here/target/recheck.txt" cycles/uncontended.json,cycles/handoff.json
  exit 0
fi

# local/: the cost of cancelling a waiter, and the memory probe.
run_local() {
  local out="$results/local"
  rm -rf "$out"
  mkdir -p "$out"

  echo "== cancellation"
  java -jar "$jar" 'dev.semaphore.benchmarks.CancellationBenchmark' "${cancel[@]}" -rf json -rff "$out/cancellation.json"

  echo "== memory per waiter"
  # Serial GC: a full collection compacts exactly, so the used heap after it is the live set.
  java -XX:+UseSerialGC -Xms3g -Xmx3g -cp "$jar" dev.semaphore.benchmarks.MemoryPerWaiter \
    "$memory_waiters" "$out/memory.json" "$memory_repeats"

  run_txt "$out" "\`run.sh $mode\`: $run_text"
}

if [ "$mode" = local ]; then
  run_local
  recheck "$here/target/recheck.txt" local/cancellation.json
  exit 0
fi

run_cycles
run_handoff
run_contended
run_readwrite
run_readmostly
run_local
recheck "$here/target/recheck.txt" cycles/uncontended.json,cycles/handoff.json,contended/contended.json,contended/oversubscribed.json,contended/threads-lock.json,local/cancellation.json
