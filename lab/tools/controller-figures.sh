#!/usr/bin/env bash
# Reproduces the controller's figures (issue 26) and the rebuild table at 256 MB (issue 23, item 5):
# benchmarks/results/README.md, "Controller vs BestFixed" and "Rebuild vs its bound and FixedBatch".
# Run from anywhere; takes about an hour here and needs about 25 GB free under DATA (default
# /tmp/controller-figures, removed at the end). Results go to OUT (default
# benchmarks/results/raw/controller-run, ignored by git): BenchmarkDotNet's tables, the median runs'
# timelines and decisions, measure's JSON, the demo's logs, and uptime every 30 s.
#
#   lab/tools/controller-figures.sh                 # everything
#   lab/tools/controller-figures.sh reading         # one part: reading | bound-by-reading | real-text | rebuilds | demo
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DATA=${DATA:-/tmp/controller-figures}
OUT=${OUT:-$ROOT/benchmarks/results/raw/controller-run}
PARTS=${*:-reading bound-by-reading real-text rebuilds demo}
mkdir -p "$DATA" "$OUT"

(while true; do uptime; sleep 30; done) >> "$OUT/load-average.log" &
LOAD_LOGGER=$!
cleanup() { kill "$LOAD_LOGGER" 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT

dotnet build Indexing.sln -c Release -v quiet

benchmark() { # $1: label, $2: BenchmarkDotNet filter
  rm -rf benchmarks/BenchmarkDotNet.Artifacts
  (cd benchmarks && REBUILD_BENCH_DIR="$DATA" dotnet run -c Release --no-build -- --filter "$2") | tee "$OUT/$1.log"
  mkdir -p "$OUT/$1"
  cp -r benchmarks/BenchmarkDotNet.Artifacts/results "$OUT/$1/"
  if [ -d benchmarks/BenchmarkDotNet.Artifacts/runs ]; then cp -r benchmarks/BenchmarkDotNet.Artifacts/runs "$OUT/$1/"; fi
}

for part in $PARTS; do
  case "$part" in
    # Reading alone: the controller (ReadOnly) against BestFixed, every shape at 2 GiB on the
    # default modelled disk; lognormal and rare giants at 512 MB on a slow and a capped disk.
    reading) benchmark reading '*ReadingAloneBenchmarks*' ;;
    # A rebuild bound by reading: keyword and numeric fields over 2 GiB of rare giants.
    bound-by-reading) benchmark bound-by-reading '*ReadingBoundRebuildBenchmarks*' ;;
    # Reading alone on real text: the Debian copyright files, repeated to about 2.2 GiB.
    real-text)
      python3 lab/tools/make-real-text-fixture.py --target-bytes 0 --copies 200 --out "$DATA/texts.ndjson"
      dotnet src/Server/bin/Release/net10.0/indexing.dll measure "$DATA/texts.ndjson" --device network-disk \
        --modes ReadOnly,BestFixed --repeat 3 --json "$OUT/real-text.json" --timeline "$OUT/real-text-readonly.csv" \
        --work "$DATA/measure-work" | tee "$OUT/real-text.log"
      rm -f "$DATA/texts.ndjson" ;;
    # The rebuild table: every shape at 256 MB, product defaults, local disk and the slow disk.
    rebuilds) benchmark rebuilds '*.RebuildBenchmarks.*' ;;
    # The main job's prefetch pass on the default 1 GiB (three runs; the first also loads it).
    demo)
      for run in 1 2 3; do
        dotnet src/Server/bin/Release/net10.0/indexing.dll demo --data "$DATA/demo" --no-rebuild --exit-when-done --port 0 \
          > "$OUT/demo-$run.log" 2>&1
        grep -E "wall time|throughput|mean concurrency" "$OUT/demo-$run.log"
      done ;;
    *) echo "unknown part '$part': use reading, bound-by-reading, real-text, rebuilds or demo" >&2; exit 2 ;;
  esac
done
