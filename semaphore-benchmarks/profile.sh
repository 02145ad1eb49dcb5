#!/usr/bin/env bash
# Profiles of ours next to kotlinx.coroutines in the same JMH invocation, with async-profiler
# (tools.profiler:async-profiler, from Maven Central) as JMH's `-prof async`. What they showed: docs/profiles.md.
#
#   semaphore-benchmarks/profile.sh     # about 3 minutes on 2 cores; run it on a quiet machine
#
# Writes, under semaphore-benchmarks/target/profiles/:
#   alloc/    hand-off (HandoffBenchmark, ours and kotlinx): who allocates, by class (async-profiler's allocation
#             sampling), next to JMH's -prof gc bytes per invocation;
#   cpu/      hand-off Lock and contended Semaphore(1) (ContendedBenchmark, Dispatchers.Default, one coroutine
#             per core), ours and kotlinx: where the time goes (itimer sampling: perf events are often not
#             available in containers);
#   summary.txt  per profile, the allocated classes (alloc) or the frames on top of the stack (cpu) by share of
#             samples. Each directory also has async-profiler's collapsed stacks (collapsed-*.csv), which any
#             flame-graph tool reads.
# It builds the benchmarks jar first, as run.sh does, unless SKIP_BUILD=1.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
jar="$here/target/benchmarks.jar"
out="$here/target/profiles"
ap_version=4.1
repo="${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}"
ap_jar="$repo/tools/profiler/async-profiler/$ap_version/async-profiler-$ap_version.jar"

case "$(uname -m)" in
  x86_64 | amd64) ap_platform=linux-x64 ;;
  aarch64 | arm64) ap_platform=linux-arm64 ;;
  *) echo "profile.sh: no async-profiler library for $(uname -m)" >&2; exit 2 ;;
esac

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "== build"
  mvn -B -q -f "$root/pom.xml" -pl semaphore-benchmarks -am package -DskipTests
fi
if [ ! -f "$ap_jar" ]; then
  echo "== async-profiler $ap_version from Maven Central"
  mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get \
    -Dartifact="tools.profiler:async-profiler:$ap_version"
fi

rm -rf "$out"
mkdir -p "$out/ap"
(cd "$out/ap" && jar xf "$ap_jar" "$ap_platform/libasyncProfiler.so")
lib="$out/ap/$ap_platform/libasyncProfiler.so"
settings=(-f 1 -wi 5 -i 5 -w 1s -r 1s)

echo "== allocation: hand-off, ours and kotlinx (with -prof gc)"
java -jar "$jar" 'dev.semaphore.benchmarks.HandoffBenchmark' "${settings[@]}" -prof gc \
  -prof "async:libPath=$lib;event=alloc;output=collapsed;dir=$out/alloc" \
  -rf json -rff "$out/alloc.json" | tee "$out/alloc.txt"

echo "== cpu: hand-off Lock, and contended Semaphore(1) on Dispatchers.Default, ours and kotlinx"
java -jar "$jar" 'dev.semaphore.benchmarks.HandoffBenchmark.lock' -p impl=ours,kotlinx "${settings[@]}" \
  -prof "async:libPath=$lib;event=itimer;output=collapsed;dir=$out/cpu" \
  -rf json -rff "$out/cpu-handoff.json" | tee "$out/cpu-handoff.txt"
java -jar "$jar" 'dev.semaphore.benchmarks.ContendedBenchmark' -p impl=ours,kotlinx -p dispatcher=default \
  -p coroutines=parallelism -p permits=1 "${settings[@]}" \
  -prof "async:libPath=$lib;event=itimer;output=collapsed;dir=$out/cpu" \
  -rf json -rff "$out/cpu-contended.json" | tee "$out/cpu-contended.txt"

# Share of samples by the last frame of each stack: the allocated class (alloc) or the running method (cpu).
summarize() {
  awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); top = f[k]; sub(/ +$/, "", top); s[top] += n; t += n }
       END { for (x in s) printf "%6.1f%%  %s\n", 100 * s[x] / t, x }' "$1" | sort -rn | head -"$2"
}

{
  for f in "$out"/alloc/*/collapsed-alloc.csv "$out"/cpu/*/collapsed-*.csv; do
    [ -f "$f" ] || continue
    echo "== $(basename "$(dirname "$f")")"
    case "$f" in
      */alloc/*) summarize "$f" 8 ;;
      *) summarize "$f" 15 ;;
    esac
    echo
  done
} | tee "$out/summary.txt"
echo "profiles in $out"
