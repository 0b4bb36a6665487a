#!/usr/bin/env bash
# The scale run in one command per allocator: builds the lab's `soak` (lab/Soak) once, then runs it (load a
# dataset unless the data directory has it, build the index the first time, rebuild it side by side
# under live traffic, sample memory every second) with the allocator chosen here, and writes
# benchmarks/results/raw/scale-SIZE-ALLOCATOR.{csv,svg,json,md} (ignored by git; the report quotes them in
# benchmarks/results/README.md, "Scale and memory").
#
#   lab/tools/scale-run.sh default               # the product's default: librocksdb.so, glibc malloc, arenas limited to one per core at start
#   lab/tools/scale-run.sh glibc                 # librocksdb.so, glibc malloc at glibc's own arena limit (MALLOC_ARENA_MAX=8 per core)
#   lab/tools/scale-run.sh jemalloc              # librocksdb-jemalloc.so, jemalloc preloaded as the process's malloc
#   lab/tools/scale-run.sh glibc-arenas2         # librocksdb.so, glibc malloc with MALLOC_ARENA_MAX=2 in the environment
#   SIZE=1GiB DATA=/tmp/scale-1g lab/tools/scale-run.sh glibc --after-seconds 30 --Storage:RowCacheBytes=64MiB
#
# SIZE (default 10GiB) and DATA (default ./scale-data) pick the dataset; the three variants share it,
# so only the first run loads and builds. Further arguments go to `soak` (see its --help), settings
# included (--Storage:...). Why an environment and not a setting: both non-default variants act on
# malloc, which the process must have from its first instruction (jemalloc cannot be loaded into a
# running process; glibc reads MALLOC_ARENA_MAX once, at its first allocation).
set -euo pipefail
cd "$(dirname "$0")/../.."

variant=${1:-}
shift || true
SIZE=${SIZE:-10GiB}
DATA=${DATA:-scale-data}

case "$variant" in
  default) env=() ; library=glibc ;;
  glibc) env=(MALLOC_ARENA_MAX=$((8 * $(nproc)))) ; library=glibc ;;
  glibc-arenas2) env=(MALLOC_ARENA_MAX=2) ; library=glibc ;;
  jemalloc)
    if ! ldconfig -p | grep 'libjemalloc\.so\.2' >/dev/null; then
      echo "scale-run: libjemalloc.so.2 is not installed; apt-get install libjemalloc2, then run again" >&2
      exit 1
    fi
    env=(LD_PRELOAD=libjemalloc.so.2) ; library=jemalloc ;;
  *)
    echo "usage: lab/tools/scale-run.sh default|glibc|jemalloc|glibc-arenas2 [soak options and --Storage:... settings]" >&2
    exit 2 ;;
esac

dotnet build lab/Soak -c Release -v q -nologo >/dev/null
echo "scale-run: $variant, $SIZE in $DATA; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
exec env "${env[@]}" dotnet lab/Soak/bin/Release/net10.0/Indexing.Lab.Soak.dll \
  --data "$DATA" --size "$SIZE" --label "$SIZE-$variant" "--Storage:NativeLibrary=$library" "$@"
