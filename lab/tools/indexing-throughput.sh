#!/usr/bin/env bash
# The indexer against Lucene.Net alone (issue 22): `measure` on real text of very uneven sizes (the
# Debian copyright files, repeated COPIES times; 479 distinct files, about 11 MiB a copy), modes
# IndexOnly and LuceneOnly, --repeat 3, with 1 and then 2 indexing threads; then the foreground Get
# p99 during a rebuild at nice 0 and nice 10 (RebuildPriorityBenchmarks). Run it alone on a quiet
# machine; it takes about 10 minutes here. Results go to OUT (default /tmp/indexing-throughput): measure's
# JSON and console output per thread count, the benchmark's table, and uptime every 10 s. The last
# lines print the medians and the load average around each part.
#
#   lab/tools/indexing-throughput.sh               # both parts
#   lab/tools/indexing-throughput.sh measure       # one part: measure | priority
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/indexing-throughput}
COPIES=${COPIES:-10}
PARTS=${*:-measure priority}
mkdir -p "$OUT"

(while true; do echo "$(date -u +%H:%M:%S) $(uptime)"; sleep 10; done) >> "$OUT/load-average.log" &
LOAD_LOGGER=$!
cleanup() { kill "$LOAD_LOGGER" 2>/dev/null || true; rm -rf "$OUT/work"; }
trap cleanup EXIT

dotnet build Indexing.sln -c Release -v quiet

for part in $PARTS; do
  case "$part" in
    measure)
      texts="$OUT/texts-x$COPIES.ndjson"
      [ -f "$texts" ] || python3 lab/tools/make-real-text-fixture.py --target-bytes 0 --copies "$COPIES" --out "$texts"
      for threads in 1 2; do
        echo "load before $threads thread(s): $(uptime)" | tee -a "$OUT/summary.txt"
        dotnet run -c Release --no-build --project src/Server -- measure "$texts" --modes IndexOnly,LuceneOnly --repeat 3 \
          --indexing-threads "$threads" --work "$OUT/work" --json "$OUT/measure-$threads-threads.json" | tee "$OUT/measure-$threads-threads.log"
        echo "load after $threads thread(s): $(uptime)" | tee -a "$OUT/summary.txt"
        python3 - "$OUT/measure-$threads-threads.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
for m in r["results"]:
    runs = ", ".join(f"{x['megabytesPerSecond']:.1f}" for x in m["runs"])
    print(f"  {r['settings']['indexingThreads']} thread(s) {m['mode']:<10} median {m['megabytesPerSecond']:6.1f} MB/s  {m['wallSeconds']:6.2f} s  (runs: {runs} MB/s)")
print(f"  IndexOnly / LuceneOnly wall time: {r['indexOnlyToLuceneOnly']:.2f}")
PY
      done ;;
    priority)
      echo "load before the priority benchmark: $(uptime)" | tee -a "$OUT/summary.txt"
      rm -rf benchmarks/BenchmarkDotNet.Artifacts
      (cd benchmarks && dotnet run -c Release --no-build -- --filter '*RebuildPriorityBenchmarks*') | tee "$OUT/priority.log"
      cp benchmarks/BenchmarkDotNet.Artifacts/results/*RebuildPriorityBenchmarks-report-github.md "$OUT/"
      echo "load after the priority benchmark: $(uptime)" | tee -a "$OUT/summary.txt" ;;
    *) echo "unknown part '$part': use measure or priority" >&2; exit 2 ;;
  esac
done

cat "$OUT/summary.txt"
