#!/usr/bin/env bash
# Three indexing nodes (n1-n3 on 127.0.0.1:5081-5083) of the local cluster, in the foreground until
# Ctrl+C (README, "A cluster on one machine"). Run scripts/local-etcd.sh and `cluster init` first.
# Data in ./cluster-data/nN, logs in ./cluster-data/nN.log.
set -euo pipefail
cd "$(dirname "$0")/.."
ENDPOINTS=${ENDPOINTS:-http://127.0.0.1:12379,http://127.0.0.1:22379,http://127.0.0.1:32379}
dotnet build -c Release src/Server -v quiet -nologo >/dev/null
mkdir -p cluster-data
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; echo "local-nodes: stopped"' EXIT INT TERM
for i in 1 2 3; do
  dotnet src/Server/bin/Release/net10.0/indexing.dll serve --data "cluster-data/n$i" --port "508$i" \
    --cluster "$ENDPOINTS" --node "n$i" >"cluster-data/n$i.log" 2>&1 &
  pids+=($!)
done
for i in 1 2 3; do
  for _ in $(seq 1 600); do
    grep -q '^serving ' "cluster-data/n$i.log" && break
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then echo "local-nodes: n$i stopped:" >&2; tail -5 "cluster-data/n$i.log" >&2; exit 1; fi
    sleep 0.1
  done
  grep '^serving ' "cluster-data/n$i.log"
done
echo "local-nodes: any node takes any request; the admin page of each shows the cluster. Ctrl+C stops them"
wait
