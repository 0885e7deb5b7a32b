#!/usr/bin/env bash
# Writes COPIES disjoint copies of a flat netlist into one file (every node and element name
# prefixed with c<k>_, ground kept), for parser throughput runs on inputs of hundreds of MB.
# usage: benchmarks/replicate_netlist.sh NETLIST COPIES > big.sp
set -euo pipefail
netlist=$1 copies=$2
awk -v copies="$copies" '
  { line[NR] = $0 }
  END {
    for (k = 0; k < copies; ++k)
      for (i = 1; i <= NR; ++i) {
        $0 = line[i]
        c = substr($1, 1, 1)
        if (NF >= 4 && c ~ /[rRvViIcClL]/) {
          p = "c" k "_"
          $1 = p $1
          if ($2 != "0" && tolower($2) != "gnd") $2 = p $2
          if ($3 != "0" && tolower($3) != "gnd") $3 = p $3
          print
        } else if (k == 0 && tolower($1) != ".end") print
      }
    print ".end"
  }' "$netlist"
