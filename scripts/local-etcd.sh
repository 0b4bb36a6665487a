#!/usr/bin/env bash
# Three etcd members on 127.0.0.1, in the foreground until Ctrl+C: the coordination a local cluster
# of indexing nodes needs (README, "A cluster on one machine"). Data in ./cluster-data/etcd-N, kept
# across runs. Client URLs (the nodes' --cluster): see ENDPOINTS below. Needs Debian's etcd-server.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v etcd >/dev/null || { echo "local-etcd: etcd is not installed (apt-get install etcd-server)" >&2; exit 1; }

ENDPOINTS=http://127.0.0.1:12379,http://127.0.0.1:22379,http://127.0.0.1:32379
PEERS=e1=http://127.0.0.1:12380,e2=http://127.0.0.1:22380,e3=http://127.0.0.1:32380
mkdir -p cluster-data
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; echo "local-etcd: stopped"' EXIT INT TERM
for i in 1 2 3; do
  state=new
  [ -d "cluster-data/etcd-$i/member" ] && state=existing
  etcd --name "e$i" --data-dir "cluster-data/etcd-$i" \
    --listen-client-urls "http://127.0.0.1:${i}2379" --advertise-client-urls "http://127.0.0.1:${i}2379" \
    --listen-peer-urls "http://127.0.0.1:${i}2380" --initial-advertise-peer-urls "http://127.0.0.1:${i}2380" \
    --initial-cluster "$PEERS" --initial-cluster-token indexing-local --initial-cluster-state "$state" \
    --heartbeat-interval 100 --election-timeout 1000 >"cluster-data/etcd-$i.log" 2>&1 &
  pids+=($!)
done
echo "local-etcd: three members serving $ENDPOINTS (logs in cluster-data/etcd-N.log); Ctrl+C stops them"
wait
