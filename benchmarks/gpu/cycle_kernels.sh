#!/usr/bin/env bash
# Per-kernel GPU time of the CMG cycle, from Nsight Compute: the kernels of about two
# preconditioner applications of a pgsim GPU solve, grouped by kernel and launch size (a launch
# size is one level), with the microseconds of one launch. ncu runs each kernel alone with the
# caches flushed, so these are the kernels' own durations, without launch gaps.
#   benchmarks/gpu/cycle_kernels.sh BUILD_DIR NETLIST [SKIP] [COUNT]
# SKIP launches of the cycle's kernels are passed over first (the first iterations), COUNT are
# measured (default 600 and 240).
set -eu
bld=$1; netlist=$2; skip=${3:-600}; count=${4:-240}
csv=$(mktemp)
trap 'rm -f "$csv" "$csv.txt"' EXIT
ncu --clock-control none --kernel-name regex:"restrict_kernel|prolong_kernel|coarse_kernel|scatter_in|gather_out" \
  --launch-skip "$skip" --launch-count "$count" \
  --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size --csv --print-units base \
  "$bld/pgsim" "$netlist" --backend gpu -q -o "$csv.txt" > "$csv"
python3 - "$csv" <<'PY'
import collections, csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, data = rows[0], rows[1:]
name, metric, value, ident = (head.index(k) for k in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
launches = collections.defaultdict(dict)
for r in data:
    launches[r[ident]][r[metric]] = r[value]
    launches[r[ident]]["name"] = r[name].split("(")[0].split("<")[0].replace("void ", "")
groups = collections.defaultdict(lambda: [0, 0.0])
for d in launches.values():
    key = (d["name"], d["launch__grid_size"], d["launch__block_size"])
    groups[key][0] += 1
    groups[key][1] += float(d["gpu__time_duration.sum"].replace(",", "")) / 1e3
total = sum(us for _, us in groups.values())
print(f"{len(launches)} kernels, {total:.1f} us")
print("| kernel | grid | block | launches | us each | us |")
print("|---|---:|---:|---:|---:|---:|")
for (k, grid, block), (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
    print(f"| {k} | {grid} | {block} | {n} | {us / n:.2f} | {us:.1f} |")
PY
