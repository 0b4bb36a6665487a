#!/usr/bin/env bash
# Times a rebuild that resumes its bulk phase after a crash against a full rebuild, on one store:
# how long `serve`, killed with SIGKILL at 60% of a rebuild's bulk phase, takes from its restart to
# the rebuild's Done, as a fraction of a whole rebuild of the same work (the target is 0.5 or less).
#
#   bash lab/tools/time-resumed-rebuild.sh
#
# Settings (environment): SIZE (1GiB) and SHAPE (rare-giants) of the dataset, DATA (/tmp/resumed-rebuild)
# where it is loaded once and reused, KILL_AT (60, percent of the bulk phase's bytes), PORT (5097).
#
# What it does: builds the server (Release) once; loads the dataset with `demo --no-rebuild` unless
# DATA already holds one; starts `serve --data DATA`; defines the index `resume-probe` (two text
# fields and a keyword) and waits for its first build; then
#   1. changes the definition (the keyword field renamed: the same work) and times the side-by-side
#      rebuild from the PUT to Done: the full rebuild;
#   2. changes it back, and once the bulk phase has indexed KILL_AT% of its bytes (the progress's
#      bytesIndexed: added by the indexing threads, not only handed to them) kills the server
#      with SIGKILL; restarts it and times from the restart to the resumed rebuild's Done.
# Prints both times, their ratio, the bulk commit cadence at the kill (Indexes:BulkCommitShare of the
# rebuild's estimated duration, at most Indexes:BulkCommitInterval: pass either to serve through the
# environment, e.g. Indexes__BulkCommitShare=1 for the fixed cadence), the resumed run's key and
# skipped documents, and the load average
# before and after (quote the figures with it; above 1.5 they are indicative). Stops the server it
# started; leaves DATA for the next run (delete it yourself). Takes about 3x a full rebuild plus the
# first load (about 15 min for 1 GiB on a 2-core VM).
set -euo pipefail

SIZE=${SIZE:-1GiB}
SHAPE=${SHAPE:-rare-giants}
DATA=${DATA:-/tmp/resumed-rebuild}
KILL_AT=${KILL_AT:-60}
PORT=${PORT:-5097}
BASE="http://127.0.0.1:$PORT"
NAME=resume-probe
cd "$(dirname "$0")/../.."

dotnet build src/Server -c Release --nologo -v quiet >/dev/null
SERVER=(dotnet src/Server/bin/Release/net10.0/indexing.dll)

now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
definition() { # $1: the keyword field's name
  printf '{"name":"%s","collection":"orders","fields":[{"name":"customer","path":"customer.name","type":"text"},{"name":"description","path":"description","type":"text"},{"name":"%s","path":"status","type":"keyword"}]}' "$NAME" "$1"
}
progress() { curl -sf "$BASE/indexes/$NAME/rebuild" || echo '{}'; }

SERVE_PID=
start_server() {
  "${SERVER[@]}" serve --data "$DATA" --port "$PORT" >"$DATA/serve.log" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 600); do
    curl -sf "$BASE/indexes" >/dev/null && return 0
    kill -0 "$SERVE_PID" 2>/dev/null || { cat "$DATA/serve.log"; exit 1; }
    sleep 0.1
  done
  echo "serve did not answer within 60 s" >&2; exit 1
}
stop_server() { if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then kill -TERM "$SERVE_PID"; wait "$SERVE_PID" || true; fi; SERVE_PID=; }
trap stop_server EXIT

wait_done() { # $1: the generation the rebuild builds; waits until it ended, fails unless Done
  local since; since=$(now)
  while true; do
    read -r p g < <(progress | jq -r '[((.phase // "none") | ascii_downcase), (.generation // 0)] | @tsv')
    if [[ $g -ge $1 ]]; then
      case $p in
        done) return 0 ;;
        failed|cancelled) progress >&2; echo "the rebuild ended $p" >&2; exit 1 ;;
      esac
    elif (( $(echo "$(now) - $since > 60" | bc) )); then
      echo "no rebuild to generation $1 started within 60 s (last: phase $p, generation $g)" >&2; exit 1
    fi
    sleep 0.25
  done
}
generation() { curl -sf "$BASE/indexes/$NAME" | jq -r '.generation'; }
define() { curl -sf -X PUT -H 'Content-Type: application/json' --data "$(definition "$1")" "$BASE/indexes/$NAME" >/dev/null; }

mkdir -p "$DATA"
if [[ ! -f $DATA/dataset.json ]]; then
  echo "loading $SIZE of $SHAPE into $DATA (once)"
  "${SERVER[@]}" demo --data "$DATA" --size "$SIZE" --shape "$SHAPE" --no-rebuild --exit-when-done --port 0 >"$DATA/load.log"
fi

echo "load average before: $(load)"
start_server
# The keyword field's name in the definition now (the index may be left from an earlier run).
state="$DATA/$NAME.field"
if [[ $(curl -s "$BASE/indexes/$NAME" -o /dev/null -w '%{http_code}') != 200 ]]; then
  define status
  echo status >"$state"
  wait_done 1
fi
current=$(cat "$state" 2>/dev/null || echo status)
other=$([[ $current == status ]] && echo state || echo status)

# 1. The full rebuild: from the PUT of a changed definition to Done.
next=$(( $(generation) + 1 ))
started=$(now)
define "$other"
echo "$other" >"$state"
wait_done "$next"
full=$(echo "$(now) - $started" | bc)
full_bytes=$(progress | jq -r '.bytesTotal')
echo "full rebuild: $full s"

# 2. The same rebuild, killed at KILL_AT% of its bulk phase's bytes, then resumed by a restart.
next=$(( $(generation) + 1 ))
define "$current"
echo "$current" >"$state"
while true; do
  read -r ph gen bytes total plan cadence commits < <(progress | jq -r '[((.phase // "none") | ascii_downcase), (.generation // 0), (.bytesIndexed // 0), (.bytesTotal // 0), (.prefetch.planComplete // false), (.bulkCommitInterval // "none"), (.bulkCommits // 0)] | @tsv')
  if [[ $gen -ge $next ]]; then
    # Until its plan is complete the run's total is partial: the full rebuild's total stands in.
    [[ $plan == true ]] || total=$full_bytes
    if [[ $ph == bulk && $total -gt 0 && $((bytes * 100)) -ge $((total * KILL_AT)) ]]; then break; fi
    if [[ $ph != bulk ]]; then echo "the bulk phase ended before $KILL_AT% (phase $ph)" >&2; exit 1; fi
  fi
  sleep 0.1
done
kill -KILL "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=
echo "killed at $((bytes * 100 / total))% of the bulk phase's bytes indexed ($bytes of $total), after $commits bulk commits, committing every $cadence"

restarted=$(now)
start_server
wait_done "$next"
resumed=$(echo "$(now) - $restarted" | bc)
progress | jq -c '{resumedAfter, documentsSkipped, documentsDone, documentsTotal, phaseTimes, bulkCommits, bulkCommitInterval}'
echo "resumed rebuild, restart to Done: $resumed s"
echo "ratio resumed / full: $(echo "scale=2; $resumed / $full" | bc) (target 0.5 or less)"
echo "load average after: $(load)"
