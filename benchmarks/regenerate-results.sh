#!/usr/bin/env bash
# Regenerates the figures of benchmarks/results/README.md: runs, section by section, each command
# its tables name, and keeps every command's output with the load average before and after it.
# Nothing is written into the report itself: read the output, then update the rows it changes
# (date, commit, load and figure, as the report's other rows are given).
#
#   benchmarks/regenerate-results.sh --list              # print the commands, run nothing
#   benchmarks/regenerate-results.sh                     # every section (many hours)
#   benchmarks/regenerate-results.sh controller resume   # only the named sections
#
# Sections: controller, rebuild, lucene, foreground, resume, many, scale, http, faults, slow-readers,
# cluster, other. Run it alone on a quiet machine (2 cores here: a build beside it makes the timings noise);
# the report marks a row measured at a load above 1.5 as under load. Output goes to
# benchmarks/results/raw/regenerate-DATE/ (ignored by git): one log per command, and load.log.
# Needs what the commands need: dotnet, python3, wrk and curl (http, other), libjemalloc2 for the
# jemalloc scale variant, about 25 GB free in /tmp and 25 GB for the 10 GiB scale store.
set -euo pipefail
cd "$(dirname "$0")/.."

# One entry per command: "section|command". The order within a section is the order they run in.
COMMANDS=(
  # Controller vs BestFixed: reading alone, every shape, and the real-text row.
  "controller|lab/tools/controller-figures.sh reading"
  "controller|lab/tools/controller-figures.sh real-text"
  "controller|dotnet run -c Release lab/tools/following-prefetch.cs -- --size 2GB --shape rare-giants --device network-disk --fixed 8,16,32,64 --repeat 3"
  # Rebuild vs its bound (pairs on the slow disk), vs FixedBatch (the 256 MB table, slow and local
  # disks), and the rebuild bound by reading.
  "rebuild|dotnet run -c Release lab/tools/paired-rebuild.cs -- --pairs 5"
  "rebuild|lab/tools/controller-figures.sh rebuilds"
  "rebuild|lab/tools/controller-figures.sh bound-by-reading"
  # IndexOnly vs LuceneOnly on real text, 1 and 2 indexing threads.
  "lucene|COPIES=10 OUT=\$RAW/indexing-throughput lab/tools/indexing-throughput.sh measure"
  # Foreground p99 during a rebuild: three rounds back to back.
  "foreground|dotnet run -c Release --project benchmarks -- --filter '*RebuildPriorityBenchmarks*'"
  "foreground|dotnet run -c Release --project benchmarks -- --filter '*RebuildPriorityBenchmarks*'"
  "foreground|dotnet run -c Release --project benchmarks -- --filter '*RebuildPriorityBenchmarks*'"
  # Resumed rebuild: three runs on one 1 GiB store (the first loads it).
  "resume|DATA=/tmp/resumed-rebuild bash lab/tools/time-resumed-rebuild.sh"
  "resume|DATA=/tmp/resumed-rebuild bash lab/tools/time-resumed-rebuild.sh"
  "resume|DATA=/tmp/resumed-rebuild bash lab/tools/time-resumed-rebuild.sh"
  # Scale and memory: the default at 10 GiB (the first run loads the store), then the allocators
  # one after another on the same store (the recorded comparison ran them side by side on copies).
  # Many indexes, one pass: four indexes three ways, orders and real text, local and slow disks.
  "many|dotnet run -c Release lab/tools/many-indexes.cs -- --size 1GB --device local"
  "many|dotnet run -c Release lab/tools/many-indexes.cs -- --size 1GB --device slow-disk"
  "many|python3 lab/tools/make-real-text-fixture.py --target-bytes 0 --copies 23 --out \$RAW/text.ndjson"
  "many|dotnet run -c Release lab/tools/many-indexes.cs -- --corpus \$RAW/text.ndjson --device local"
  "many|dotnet run -c Release lab/tools/many-indexes.cs -- --corpus \$RAW/text.ndjson --device slow-disk"
  "many|dotnet run -c Release lab/tools/many-indexes.cs -- --size 256MB --shape rare-giants --device slow-disk --repeat 3"
  "scale|lab/tools/scale-run.sh default --out \$RAW"
  "scale|lab/tools/scale-run.sh glibc --out \$RAW"
  "scale|lab/tools/scale-run.sh glibc-arenas2 --out \$RAW"
  "scale|lab/tools/scale-run.sh jemalloc --out \$RAW"
  # HTTP load: three runs of 30 s per mix.
  "http|DURATION=30 bash benchmarks/http-load/run.sh"
  "http|DURATION=30 bash benchmarks/http-load/run.sh"
  "http|DURATION=30 bash benchmarks/http-load/run.sh"
  # Fault sweep: the CI sample, then the full variant (correctness: the load does not matter).
  "faults|dotnet test tests/Indexer.Tests -c Release --filter Category=FaultSweep --logger 'console;verbosity=detailed'"
  "faults|INDEXING_FAULT_SWEEP=full dotnet test tests/Indexer.Tests -c Release --filter Category=FaultSweep --logger 'console;verbosity=detailed'"
  # Slow readers (three runs) and verify (three passes in one process).
  "slow-readers|dotnet build src/Server -c Release"
  "slow-readers|dotnet run lab/tools/slow-readers.cs -- src/Server/bin/Release/net10.0/indexing.dll 200 60 8 4 5391"
  "slow-readers|dotnet run lab/tools/slow-readers.cs -- src/Server/bin/Release/net10.0/indexing.dll 200 60 8 4 5391"
  "slow-readers|dotnet run lab/tools/slow-readers.cs -- src/Server/bin/Release/net10.0/indexing.dll 200 60 8 4 5391"
  "slow-readers|dotnet run lab/tools/verify-memory.cs -c Release -- 300000"
  # The cluster: the rebuild time model from the single-node rates, and the three-node scenario
  # (three etcd members and three nodes on this machine: correctness, not speed).
  "cluster|python3 lab/tools/cluster-model.py"
  "cluster|dotnet test tests/Cluster.Tests -c Release --filter 'FullyQualifiedName~ClusterScenarioTests' --logger 'console;verbosity=detailed'"
  # Other figures: row cache, bulk commit cadence, tombstone purge, hot path, size ceiling, the
  # strategies on RocksDB, the ceiling of 64 readers, the shutdown bound, the demo.
  "other|bash benchmarks/row-cache/run.sh"
  "other|dotnet run lab/tools/measure-bulk-build.cs -- --size 64MiB --repeat 3 --bulk-commit-s 10 --bulk-commit-share 0.05,1"
  "other|dotnet run lab/tools/measure-bulk-build.cs -- --size 256MiB --repeat 3 --bulk-commit-s 10 --bulk-commit-share 0.05,1"
  "other|dotnet run lab/tools/measure-bulk-build.cs -- --size 256MiB --repeat 3 --bulk-commit-s 1,10 --bulk-commit-share 1"
  "other|dotnet run lab/tools/measure-tombstone-purge.cs -- 200000"
  "other|dotnet run -c Release --project benchmarks -- --filter '*BudgetAndHistogramBenchmarks*' --job short"
  "other|dotnet test tests/Prefetcher.Tests -c Release --filter 'FullyQualifiedName~SizeInputTests' --logger 'console;verbosity=detailed'"
  "other|PREFETCH_FIGURES_MB=100 PREFETCH_FIGURES_RUNS=3 dotnet test lab/tests/Lab.Tests -c Release --filter 'FullyQualifiedName~RocksDbStrategyFigures' --logger 'console;verbosity=detailed'"
  "other|PREFETCH_CEILING_SECONDS=60 dotnet test lab/tests/Lab.Tests -c Release --filter 'FullyQualifiedName~CeilingFigures' --logger 'console;verbosity=detailed'"
  "other|dotnet test tests/Prefetcher.Tests -c Release --filter 'FullyQualifiedName~RocksDbShutdownTests' --logger 'console;verbosity=detailed'"
  "other|lab/tools/controller-figures.sh demo"
)

list=false
sections=()
for argument in "$@"; do
  case "$argument" in
    --list|-n) list=true ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    controller|rebuild|lucene|foreground|resume|many|scale|http|faults|slow-readers|cluster|other) sections+=("$argument") ;;
    *) echo "regenerate-results: unknown argument '$argument' (see --help)" >&2; exit 2 ;;
  esac
done

selected() { # $1: section
  [ ${#sections[@]} -eq 0 ] && return 0
  local s
  for s in "${sections[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

RAW=${RAW:-$PWD/benchmarks/results/raw/regenerate-$(date -u +%Y%m%d-%H%M%S)}
if ! $list; then
  mkdir -p "$RAW"
  echo "regenerate-results: commit $(git rev-parse --short HEAD), output in $RAW"
fi

n=0
failed=()
for entry in "${COMMANDS[@]}"; do
  section=${entry%%|*}
  command=${entry#*|}
  selected "$section" || continue
  n=$((n + 1))
  if $list; then
    printf '%-13s %s\n' "$section" "$command"
    continue
  fi
  log="$RAW/$(printf '%02d' "$n")-$section.log"
  echo "$(date -u +%FT%TZ) load before: $(cut -d' ' -f1-3 /proc/loadavg)  $section: $command" | tee -a "$RAW/load.log"
  # The command runs in its own shell with RAW exported, so that an entry may name it. A command
  # that fails is recorded and the next one runs: one broken figure should not cost the night.
  if RAW="$RAW" bash -c "export RAW; $command" 2>&1 | tee "$log"; then status=ok; else status=FAILED; failed+=("$section: $command"); fi
  echo "$(date -u +%FT%TZ) load after: $(cut -d' ' -f1-3 /proc/loadavg)  $status" | tee -a "$RAW/load.log"
done

if ! $list && [ ${#failed[@]} -gt 0 ]; then
  printf 'regenerate-results: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
