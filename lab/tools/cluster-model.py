#!/usr/bin/env python3
"""Models a cluster rebuild's wall time against the node count and prints it as a markdown table.

A model, not a measurement: it takes the single-node rates measured on this machine
(benchmarks/results/README.md, "Cluster rebuild time, modelled", which quotes the rows) and the
cluster's rules (src/Cluster: every shard builds the new generation over its own buckets; the
switch waits for the slowest shard's ready report, then one etcd transaction):

  T(N) = bytes on the largest shard / per-node rate  +  catch-up  +  switch

- bytes on the largest shard: the collection's bytes / N times a skew factor. The map deals B
  buckets (default 64) round robin, so shards hold ceil(B/N) or floor(B/N) buckets; and a bucket's
  bytes vary, because documents land in buckets by the hash of their id: with n documents whose
  sizes have mean m and mean square s, a shard given the share p of the buckets holds
  p * total * (1 +- sqrt((1 - p) * s / (p * n * m^2))) (one standard deviation). The skew factor is
  the expected largest shard over total / N, the shards taken as independent normals. That needs
  several of the large documents per bucket: for 10 GiB of rare giants (about 19 giants a bucket)
  a simulation of the giants' buckets, 2,000 draws per N, gave skews within 0.03 of it.
- catch-up: the changes written while the bulk phase ran, as a share of the shard's bulk time,
  measured by the 10 GiB scale run under live traffic (whole rebuild minus bulk phase, which also
  holds the single node's own swap: an upper bound).
- switch: the slowest shard notices its build is ready and reports it at its next poll, another
  node's next poll sees every report ready and runs the transaction (milliseconds): about one poll
  interval, 0.25 s by default (Cluster:PollInterval), half a second at worst.

  python3 lab/tools/cluster-model.py                                  # the table in the report
  python3 lab/tools/cluster-model.py --rate 14 --shape uniform --nodes 1,2,4,8,16,32,64
"""
import argparse, math, re
from statistics import NormalDist

# benchmarks/results/README.md, "Rebuild vs its bound and FixedBatch", slow disk at 721cb77: the
# Adaptive rebuild of 256 MB with 2 indexing threads, 23.7 / 30.7 / 36.6 / 26.0 MB/s for growing,
# lognormal, rare giants, uniform; their median. Decimal MB, as the benchmarks count them.
RATE_MB_S = 28.35
# benchmarks/results/scale-10GiB-default.md: whole rebuild 773.1 s, bulk phase 766.5 s.
CATCH_UP_SHARE = (773.1 - 766.5) / 766.5
SWITCH_S = 0.25

MIB = 1 << 20
# Document sizes of the generated shapes (src/Datasets/Generation/SizePlan.cs): mean and mean square.
def moments(shape):
    if shape == "uniform":  # 4096 bytes +-10%, uniform
        return 4096.0, 4096.0 ** 2 * (1 + 0.1 ** 2 / 3)
    if shape == "lognormal":  # median 4096 bytes, sigma 1.5
        return 4096.0 * math.exp(1.5 ** 2 / 2), 4096.0 ** 2 * math.exp(2 * 1.5 ** 2)
    if shape == "rare-giants":  # 2048 bytes +-10%; one in 200 log-uniform from 2 to 20 MiB
        a, b, every = 2 * MIB, 20 * MIB, 200
        small_mean, small_square = 2048.0, 2048.0 ** 2 * (1 + 0.1 ** 2 / 3)
        giant_mean = (b - a) / math.log(b / a)
        giant_square = (b * b - a * a) / (2 * math.log(b / a))
        return ((every - 1) * small_mean + giant_mean) / every, ((every - 1) * small_square + giant_square) / every
    raise SystemExit(f"cluster-model: shape {shape!r} is not one of uniform, lognormal, rare-giants")


def size_bytes(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)", text.strip())
    if not m:
        raise SystemExit(f"cluster-model: size {text!r} is not a size such as 10GiB or 1TiB")
    return float(m.group(1)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m.group(2)]


def largest_share(nodes, buckets, documents, square_over_mean2):
    """Expected share of the collection's bytes on the largest of `nodes` shards."""
    groups = {}  # buckets per shard -> how many shards hold that many
    for node in range(nodes):
        k = len(range(node, buckets, nodes))
        groups[k] = groups.get(k, 0) + 1
    shards = []
    for k, count in groups.items():
        p = k / buckets
        sd = p * math.sqrt((1 - p) * square_over_mean2 / (p * documents))
        shards.append((p, sd, count))
    if all(sd == 0 for _, sd, _ in shards):
        return max(p for p, _, _ in shards)
    # E[max] = integral over x >= 0 of P(max > x), the shards' shares being (nearly) non-negative.
    top = max(p + 12 * sd for p, sd, _ in shards)
    steps = 20000
    h = top / steps
    total = 0.0
    for i in range(steps + 1):
        x = i * h
        below = 1.0
        for p, sd, count in shards:
            below *= (NormalDist(p, sd).cdf(x) if sd > 0 else float(x >= p)) ** count
        total += (0.5 if i in (0, steps) else 1.0) * (1 - below)
    return total * h


def duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 120 * 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def main():
    parser = argparse.ArgumentParser(description="A cluster rebuild's wall time against the node count, modelled; prints a markdown table.")
    parser.add_argument("--nodes", default="1,2,3,4,8,16,32", help="node counts, comma-separated")
    parser.add_argument("--sizes", default="10GiB,1TiB", help="collection sizes, comma-separated (B, KiB, MiB, GiB, TiB)")
    parser.add_argument("--shape", default="rare-giants", help="document sizes: rare-giants (the scale run's), lognormal or uniform")
    parser.add_argument("--buckets", type=int, default=64, help="buckets in the shard map (the default map's 64)")
    parser.add_argument("--rate", type=float, default=RATE_MB_S, help="per-node rebuild rate, decimal MB/s")
    parser.add_argument("--catch-up-share", type=float, default=CATCH_UP_SHARE, help="catch-up time over the bulk phase's")
    parser.add_argument("--switch-s", type=float, default=SWITCH_S, help="from the slowest shard ready to the switch, seconds")
    args = parser.parse_args()

    nodes = [int(n) for n in args.nodes.split(",")]
    if any(n < 1 or n > args.buckets for n in nodes):
        parser.error(f"--nodes must be from 1 to --buckets ({args.buckets}): a map gives every node at least one bucket")
    sizes = [(re.sub(r"(\d)([A-Za-z])", r"\1 \2", s.strip()), size_bytes(s)) for s in args.sizes.split(",")]
    mean, square = moments(args.shape)

    header = ["nodes", "buckets on the largest shard"]
    for label, _ in sizes:
        header += [f"{label}: skew", f"{label}: rebuild", f"{label}: speed-up"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---:"] * len(header)) + "|")
    single = {}
    for n in nodes:
        row = [str(n), str(math.ceil(args.buckets / n))]
        for label, total in sizes:
            share = largest_share(n, args.buckets, total / mean, square / mean ** 2)
            bulk = total * share / (args.rate * 1e6)
            seconds = bulk * (1 + args.catch_up_share) + args.switch_s
            if n == 1:
                single[label] = seconds
            base = single.get(label)
            row += [f"{share * n:.2f}", duration(seconds), f"{base / seconds:.1f}x" if base else "-"]
        print("| " + " | ".join(row) + " |")


main()
