#!/usr/bin/env bash
# The HTTP load test at full length: `indexing serve` with its default settings over a fresh data
# directory of DOCUMENTS generated orders and an index over them; then, for each mix (get, put,
# query, mixed: see mix.lua), DURATION seconds of Debian's wrk at CONNECTIONS connections while the
# index is rebuilt side by side over and over (the next rebuild starts when one ends; after wrk
# stops, the last one is waited for). Samples the server's RSS every second. Prints a Markdown
# table: requests/s, latency percentiles, statuses, socket errors, RSS, rebuilds.
#
#   bash benchmarks/http-load/run.sh              # 60 s per mix, 64 connections, 100,000 orders
#   DURATION=10 MIXES=mixed bash benchmarks/http-load/run.sh
#
# Needs dotnet, wrk, curl and python3. Leaves nothing behind (the data directory is temporary).
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION=${DURATION:-60}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
DOCUMENTS=${DOCUMENTS:-100000}
MIXES=${MIXES:-"get put query mixed"}
PORT=${PORT:-5481}

work=$(mktemp -d /tmp/http-load.XXXXXX)
server_pid=""
cleanup() {
  touch "$work/stop" 2>/dev/null || true
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

dotnet build src/Server -c Release -v q -nologo >/dev/null
dotnet src/Server/bin/Release/net10.0/indexing.dll serve --data "$work/data" --port "$PORT" >"$work/server.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$PORT"
until curl -sf "$base/indexes" >/dev/null; do
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.2
done

# Orders of about 1 KB: ids orders/00000001.. (what mix.lua reads), words the queries look for.
python3 - "$DOCUMENTS" >"$work/orders.ndjson" <<'PY'
import json, random, sys
random.seed(7)
names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
statuses = ["new", "paid", "shipped", "cancelled"]
for i in range(1, int(sys.argv[1]) + 1):
    doc = {"customer": {"name": f"{random.choice(names)} {random.randrange(5000)}"}, "status": random.choice(statuses),
           "total": round(random.uniform(1, 9000), 2), "lines": [{"sku": f"sku-{random.randrange(900)}", "quantity": random.randrange(1, 9)} for _ in range(random.randrange(1, 6))],
           "note": "x" * random.randrange(200, 1200)}
    print(json.dumps({"id": f"orders/{i:08d}", "doc": doc}))
PY
curl -sf -X POST "$base/docs/bulk" -H 'Content-Type: application/x-ndjson' --data-binary @"$work/orders.ndjson" >/dev/null
curl -sf -X PUT "$base/indexes/orders" -H 'Content-Type: application/json' -d '{"name": "orders", "collection": "orders", "fields": [
  {"name": "customer", "path": "customer.name", "type": "text"},
  {"name": "status", "path": "status", "type": "keyword", "sortable": true},
  {"name": "total", "path": "total", "type": "double", "sortable": true}]}' >/dev/null

phase() { curl -s "$base/indexes/orders/rebuild" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("phase", "none"))'; }
until [ "$(phase)" = done ]; do sleep 0.5; done

# Rebuild after rebuild until $work/stop exists; each one's end phase and seconds into rebuilds.$mix.
rebuild_loop() {
  local mix=$1 started ended
  while [ ! -e "$work/stop" ]; do
    curl -sf -X POST "$base/indexes/orders/rebuild" >/dev/null || true
    started=$(date +%s.%N)
    until ended=$(phase) && [[ $ended =~ ^(done|failed|cancelled)$ ]]; do sleep 0.5; done
    echo "$ended $(awk "BEGIN { print $(date +%s.%N) - $started }")" >>"$work/rebuilds.$mix"
  done
}

rss_loop() {
  while [ ! -e "$work/stop" ] && kill -0 "$server_pid" 2>/dev/null; do
    awk '/^VmRSS/ { print $2 }' "/proc/$server_pid/status"
    sleep 1
  done >"$work/rss.$1"
}

for mix in $MIXES; do
  rm -f "$work/stop"
  rebuild_loop "$mix" &
  rebuilds=$!
  rss_loop "$mix" &
  rss=$!
  LOAD_MIX=$mix LOAD_IDS=$DOCUMENTS LOAD_INDEX=orders \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s -s benchmarks/http-load/mix.lua "$base" >"$work/wrk.$mix"
  touch "$work/stop"
  wait "$rebuilds" "$rss"
done

python3 - "$work" $MIXES <<'PY'
import json, statistics, sys
work, mixes = sys.argv[1], sys.argv[2:]
print("| mix | requests/s | p50 ms | p90 ms | p99 ms | max ms | statuses | socket errors | RSS MiB first 10 s / last 10 s / max | rebuilds (done, s each) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
for mix in mixes:
    line = next(l for l in open(f"{work}/wrk.{mix}") if l.startswith("LOAD-RESULT "))
    r = json.loads(line[len("LOAD-RESULT "):])
    rss = [int(x) / 1024 for x in open(f"{work}/rss.{mix}") if x.strip()]
    rebuilds = [l.split() for l in open(f"{work}/rebuilds.{mix}")]
    done = [float(s) for p, s in rebuilds if p == "done"]
    statuses = ", ".join(f"{k}: {v:,}" for k, v in sorted(r["statuses"].items()))
    errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items() if k != "status" and v) or "none"
    print(f"| {mix} | {r['requests'] / r['seconds']:,.0f} | {r['p50_ms']:.1f} | {r['p90_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.0f} | {statuses} | {errors} "
          f"| {statistics.median(rss[:10]):.0f} / {statistics.median(rss[-10:]):.0f} / {max(rss):.0f} "
          f"| {len(done)} of {len(rebuilds)} ({', '.join(f'{s:.0f}' for s in done)}) |")
PY
