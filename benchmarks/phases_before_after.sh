#!/usr/bin/env bash
# Host phases before/after on one machine, in one run: two pgsim binaries (say main's build and a
# branch's) on the same netlist with the CPU back end, alternated run by run so that a busy moment
# of a shared machine hits both alike, each round one run per thread count. Prints, per thread
# count and phase (the --json "timing" fields), each binary's fastest and median time over the
# rounds and the ratios before/after, and each whole process's CPU time (user + system, all
# threads; OMP_WAIT_POLICY=passive so that idle threads do not spin into it). On a loaded machine
# the fastest run is the one least disturbed by the neighbours, and only the CPU time is steady:
# on one thread it is the work each build does.
#   benchmarks/phases_before_after.sh BEFORE_PGSIM AFTER_PGSIM NETLIST [ROUNDS] [THREADS...]
#   (defaults: 5 rounds, 1 and 2 threads; --tol 1e-6 keeps the solve, which neither side is
#   meant to change, short)
# e.g. build-cpu/pgsim-gen --nodes 1M --seed 1 -o /tmp/g1m.sp
#      benchmarks/phases_before_after.sh /tmp/main-build/pgsim build-cpu/pgsim /tmp/g1m.sp 5 1 2
set -euo pipefail
before=$1 after=$2 netlist=$3
rounds=${4:-5}
shift $(($# < 4 ? $# : 4))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
export OMP_WAIT_POLICY=passive
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for t in "${threads[@]}"; do
    for side in before after; do
      bin=$before
      [ $side = after ] && bin=$after
      /usr/bin/time -f "%U %S" -o "$dir/$side.$t.$r.cpu" \
        "$bin" "$netlist" -q --backend cpu --tol 1e-6 --threads "$t" -o "$dir/voltages" --json "$dir/$side.$t.$r.json"
    done
  done
done
python3 - "$dir" "$netlist" "$rounds" "${threads[@]}" <<'PY'
import json, statistics, sys
folder, netlist, rounds, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(t) for t in sys.argv[4:]]
phases = ["reduce", "eliminate", "setup", "solve", "recover", "write", "total"]
print(f"{netlist}: {rounds} rounds, fastest and median seconds per phase (before / after = ratio)")
for t in threads:
    runs = {side: [json.load(open(f"{folder}/{side}.{t}.{r}.json"))["timing"] for r in range(rounds)]
            for side in ("before", "after")}
    print(f"threads {t}")
    print(f"  {'phase':<10} {'before min':>10} {'after min':>10} {'ratio':>6}   {'before med':>10} {'after med':>10} {'ratio':>6}")
    for p in phases:
        b = [run[p] for run in runs["before"]]
        a = [run[p] for run in runs["after"]]
        bm, am, bd, ad = min(b), min(a), statistics.median(b), statistics.median(a)
        ratio = lambda x, y: f"{x / y:6.2f}" if y > 0 else "     -"
        print(f"  {p:<10} {bm:10.3f} {am:10.3f} {ratio(bm, am)}   {bd:10.3f} {ad:10.3f} {ratio(bd, ad)}")
    cpu = {side: [sum(map(float, open(f"{folder}/{side}.{t}.{r}.cpu").read().split())) for r in range(rounds)]
           for side in ("before", "after")}
    b, a = cpu["before"], cpu["after"]
    print(f"  {'cpu':<10} {min(b):10.3f} {min(a):10.3f} {min(b) / min(a):6.2f}   "
          f"{statistics.median(b):10.3f} {statistics.median(a):10.3f} {statistics.median(b) / statistics.median(a):6.2f}")
PY
