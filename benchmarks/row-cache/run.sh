#!/usr/bin/env bash
# The row cache on and off (Storage:RowCacheBytes), measured over HTTP with a realistic hot set
# (hot.lua: 90% of requests to the hottest 10% of keys): Get (GET /docs/{id}) and search-then-fetch
# (GET /indexes/orders/query?...&include=docs). One data directory of DOCUMENTS orders (about 1.5 KB
# each) with an index, loaded once; then REPEATS rounds, each running `serve` fresh (cold caches) with
# the row cache off, then on: WARMUP seconds of wrk discarded, DURATION seconds measured, per mix.
# Prints a Markdown table of medians over the rounds (requests/s, p50, p90, p99) with the row cache's
# hit rate and the foreground Gets' block cache hit rate, read from /metrics, and the load average.
#
#   bash benchmarks/row-cache/run.sh                       # 400,000 orders, 64 MiB row cache, 3 rounds
#   DOCUMENTS=100000 DURATION=10 REPEATS=1 bash benchmarks/row-cache/run.sh
#
# Needs dotnet, wrk, curl and python3. Leaves nothing behind (the data directory is temporary).
set -euo pipefail
cd "$(dirname "$0")/../.."

DOCUMENTS=${DOCUMENTS:-400000}
ROW_CACHE=${ROW_CACHE:-64MiB}
REPEATS=${REPEATS:-3}
WARMUP=${WARMUP:-10}
DURATION=${DURATION:-30}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
PORT=${PORT:-5482}
MIXES=${MIXES:-"get query"}

work=$(mktemp -d /tmp/row-cache.XXXXXX)
server_pid=""
stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT

base="http://127.0.0.1:$PORT"
start_server() {
  dotnet src/Server/bin/Release/net10.0/indexing.dll serve --data "$work/data" --port "$PORT" "--Storage:RowCacheBytes=$1" >"$work/server.log" 2>&1 &
  server_pid=$!
  until curl -sf "$base/indexes" >/dev/null; do
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
    sleep 0.2
  done
}

dotnet build src/Server -c Release -v q -nologo >/dev/null
start_server 0
python3 - "$DOCUMENTS" >"$work/orders.ndjson" <<'PY'
import json, random, sys
random.seed(11)
names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
statuses = ["new", "paid", "shipped", "cancelled"]
for i in range(1, int(sys.argv[1]) + 1):
    doc = {"customer": {"name": f"{random.choice(names)} {random.randrange(5000)}"}, "status": random.choice(statuses),
           "total": round(random.uniform(1, 9000), 2), "lines": [{"sku": f"sku-{random.randrange(900)}", "quantity": random.randrange(1, 9)} for _ in range(random.randrange(1, 6))],
           "note": "x" * random.randrange(400, 2000)}
    print(json.dumps({"id": f"orders/{i:08d}", "doc": doc}))
PY
split -l 50000 "$work/orders.ndjson" "$work/part."
for part in "$work"/part.*; do
  curl -sf -X POST "$base/docs/bulk" -H 'Content-Type: application/x-ndjson' --data-binary @"$part" >/dev/null
done
curl -sf -X PUT "$base/indexes/orders" -H 'Content-Type: application/json' -d '{"name": "orders", "collection": "orders", "fields": [
  {"name": "customer", "path": "customer.name", "type": "text"},
  {"name": "status", "path": "status", "type": "keyword"}]}' >/dev/null
until [ "$(curl -s "$base/indexes/orders/rebuild" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("phase", "none"))')" = done ]; do sleep 1; done
stop_server

metric() { curl -s "$base/metrics" | awk -v name="$1" '$1 == name { print $2 }'; }
for round in $(seq 1 "$REPEATS"); do
  for cache in 0 "$ROW_CACHE"; do
    start_server "$cache"
    for mix in $MIXES; do
      HOT_MODE=$mix HOT_IDS=$DOCUMENTS wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s benchmarks/row-cache/hot.lua "$base" >/dev/null
      before=$(printf '%s %s %s %s' "$(metric indexing_rocksdb_row_cache_hits)" "$(metric indexing_rocksdb_row_cache_misses)" \
        "$(metric indexing_rocksdb_foreground_block_cache_hits)" "$(metric indexing_rocksdb_foreground_block_cache_misses)")
      HOT_MODE=$mix HOT_IDS=$DOCUMENTS wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s -s benchmarks/row-cache/hot.lua "$base" >"$work/wrk.$mix.$cache.$round"
      sleep 1.1 # the metrics are the server's one-second samples
      after=$(printf '%s %s %s %s' "$(metric indexing_rocksdb_row_cache_hits)" "$(metric indexing_rocksdb_row_cache_misses)" \
        "$(metric indexing_rocksdb_foreground_block_cache_hits)" "$(metric indexing_rocksdb_foreground_block_cache_misses)")
      echo "$before $after $(cut -d' ' -f1 /proc/loadavg)" >"$work/caches.$mix.$cache.$round"
    done
    stop_server
  done
done

python3 - "$work" "$REPEATS" "$ROW_CACHE" $MIXES <<'PY'
import json, statistics, sys
work, repeats, row_cache, mixes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def rate(h, m):
    return f"{100 * h / (h + m):.1f}%" if h + m > 0 else "-"
print("| mix | row cache | requests/s | p50 ms | p90 ms | p99 ms | row cache hits | Get block cache hits | load average |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for mix in mixes:
    for cache in ["0", row_cache]:
        runs, hits = [], []
        for r in range(1, repeats + 1):
            line = next(l for l in open(f"{work}/wrk.{mix}.{cache}.{r}") if l.startswith("HOT-RESULT "))
            runs.append(json.loads(line[len("HOT-RESULT "):]))
            hits.append([float(x) for x in open(f"{work}/caches.{mix}.{cache}.{r}").read().split()])
        med = lambda key: statistics.median(x[key] for x in runs)
        rows = [(h[4] - h[0], h[5] - h[1], h[6] - h[2], h[7] - h[3], h[8]) for h in hits]
        print(f"| {mix} | {'off' if cache == '0' else cache} | {statistics.median(x['requests'] / x['seconds'] for x in runs):,.0f} "
              f"| {med('p50_ms'):.2f} | {med('p90_ms'):.2f} | {med('p99_ms'):.2f} "
              f"| {rate(sum(r[0] for r in rows), sum(r[1] for r in rows))} | {rate(sum(r[2] for r in rows), sum(r[3] for r in rows))} "
              f"| {', '.join(f'{r[4]:.1f}' for r in rows)} |")
PY
