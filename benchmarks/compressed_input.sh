#!/usr/bin/env bash
# Issue 14's check on a large grid: a generated netlist read as a plain file, as a gzip file, and
# through pipes (plain and zcat) must give byte-identical voltages files. Prints, per input, pgsim's
# parse time and parse rate (netlist text MB per second, from --json) and the whole run's time.
#   benchmarks/compressed_input.sh [NODES] [BUILD_DIR]     (defaults: 1M, build)
# ctest runs the same comparison on a 20k-node grid (test_inputs).
set -euo pipefail
nodes=${1:-1M}
build=${2:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/pgsim-gen" --nodes "$nodes" --seed 1 -o "$work/g.sp" >/dev/null
gzip -k "$work/g.sp"
echo "grid: $nodes nodes, $(du -m "$work/g.sp" | cut -f1) MB plain, $(du -m "$work/g.sp.gz" | cut -f1) MB gzip"
printf '%-22s %8s %10s %8s  %s\n' input "parse s" "text MB/s" "total s" "voltages"
run() {  # LABEL SHELL-COMMAND (pgsim's arguments end with -o OUT --json JSON)
  local label=$1 cmd=$2 start end
  start=$(date +%s.%N)
  bash -c "$cmd -o '$work/$label.txt' --json '$work/$label.json' -q"
  end=$(date +%s.%N)
  local same=reference
  if [ "$label" != plain ]; then cmp -s "$work/plain.txt" "$work/$label.txt" && same=identical || same=DIFFERENT; fi
  python3 - "$work/$label.json" "$label" "$start" "$end" "$same" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:<22} {r['timing']['parse']:8.3f} {r['parse_mb_per_s']:10.1f} "
      f"{float(sys.argv[4]) - float(sys.argv[3]):8.2f}  {sys.argv[5]}")
PY
  [ "$same" != DIFFERENT ]
}
pgsim=$(realpath "$build/pgsim")
run plain "'$pgsim' '$work/g.sp'"
run gzip-file "'$pgsim' '$work/g.sp.gz'"
run zcat-pipe "zcat '$work/g.sp.gz' | '$pgsim' -"
run cat-pipe "cat '$work/g.sp' | '$pgsim' -"
