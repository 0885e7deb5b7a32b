#!/usr/bin/env bash
# Parser before/after on one machine, in one run: two builds' bench_parse (say main's and a
# branch's) on the same netlist, alternated round by round so that a busy moment of a shared
# machine hits both alike, each round one parse per thread count. Prints each build's median CPU
# time (user + system, all threads) and wall time per thread count, and the ratios. On a loaded
# machine only the CPU ratio means much; on an idle one the wall clock shows the scaling.
#   benchmarks/parse_before_after.sh BEFORE_BUILD AFTER_BUILD NETLIST [ROUNDS] [THREADS...]
#   (defaults: 5 rounds, 1 and 2 threads; OMP_WAIT_POLICY=passive so that idle threads do not
#   spin into the CPU time)
# e.g. build-cpu/pgsim-gen --nodes 1M --seed 1 -o /tmp/g1m.sp
#      benchmarks/parse_before_after.sh /tmp/main-build build-cpu /tmp/g1m.sp 5 1 2
set -euo pipefail
before=$1 after=$2 netlist=$3
rounds=${4:-5}
shift $(($# < 4 ? $# : 4))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
export OMP_WAIT_POLICY=passive
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for t in "${threads[@]}"; do
    for side in before after; do
      build=$before
      [ $side = after ] && build=$after
      # One parse; /usr/bin/time: wall, user and system seconds.
      /usr/bin/time -f "$side $t %e %U %S" -a -o "$out" "$build/benchmarks/bench_parse" "$netlist" 1 "$t" >/dev/null
    done
  done
done
python3 - "$out" "$netlist" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    side, t, wall, user, sys_ = line.split()
    runs.setdefault((int(t), side), []).append((float(wall), float(user) + float(sys_)))
print(f"{sys.argv[2]}: median of {len(next(iter(runs.values())))} runs each")
print(f"{'threads':>7} {'before cpu':>10} {'after cpu':>10} {'cpu ratio':>9} {'before wall':>11} {'after wall':>10} {'wall ratio':>10}")
for t in sorted({t for t, _ in runs}):
    b, a = runs[(t, 'before')], runs[(t, 'after')]
    bc, ac = statistics.median(x[1] for x in b), statistics.median(x[1] for x in a)
    bw, aw = statistics.median(x[0] for x in b), statistics.median(x[0] for x in a)
    print(f"{t:>7} {bc:10.3f} {ac:10.3f} {bc / ac:9.2f} {bw:11.3f} {aw:10.3f} {bw / aw:10.2f}")
PY
