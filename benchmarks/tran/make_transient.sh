#!/bin/sh
# Turns a pgsim-gen netlist (DC) into a transient one shaped like IBM's ibmpg1t, for timing the
# transient solvers on grids of any size (README "Transient analysis"):
#   - each pad source `vpK _X_n 0 E` moves behind a 1 nH package inductor (`vpK _Y_n 0 E`,
#     `lpK _Y_n _X_n 1e-9`);
#   - each load `iB...` gets a 0.12 nF decap from its grid node to ground and a PULSE to 50x its
#     DC value, delays staggered over 0..200 ps, 100 ps edges, 10 ps wide, period 3 ns;
#   - `.op` becomes `.tran 1e-11 TSTOP` and `.print tran` of the first 5 loads' grid nodes.
# Usage: make_transient.sh IN.sp OUT.sp [TSTOP, default 1e-9]
set -eu
[ $# -ge 2 ] || { echo "usage: $0 IN.sp OUT.sp [TSTOP]" >&2; exit 2; }
tstop=${3:-1e-9}
awk -v tstop="$tstop" '
  /^vp/ { y = $2; sub(/^_X_/, "_Y_", y); print $1, y, $3, $4; print "l" substr($1, 2), y, $2, "1e-9"; next }
  /^iB/ {
    node = ($2 == "0") ? $3 : $2
    k++
    printf "%s %s %s %s pulse(%s, %.6e, %.0e, 1e-10, 1e-10, 1e-11, 3e-09)\n", $1, $2, $3, $4, $4, 50 * $4, (k % 5) * 5e-11
    printf "c%s %s 0 1.2e-10\n", $1, node
    if (k <= 5) printed = printed " v(" node ")"
    next
  }
  /^\.op/ { next }
  /^\.end/ { print ".tran 1e-11", tstop; print ".print tran" printed; print; next }
  { print }
' "$1" > "$2"
