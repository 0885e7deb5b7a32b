#!/usr/bin/env bash
# The distributed GPU solve (issue 17) at P = 1 and P = 2 on one host, one rank per GPU:
# iterations, solve time, time per iteration, per-rank device and host memory.
#   benchmarks/dist/gpu_ranks.sh BUILD NETLIST OUTDIR [pgsim options...]
# P = 1 is a plain single-process GPU run (no mpirun), the baseline. NCCL_NVLS_ENABLE=0 in every
# rank: no NVLink multicast on shared machines. Prints one line per run; JSON under OUTDIR.
set -euo pipefail
build=${1:?usage: gpu_ranks.sh BUILD NETLIST OUTDIR [options]}
netlist=${2:?netlist}
out=${3:?output folder}
shift 3
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
"$build/pgsim" "$netlist" --backend gpu -q -o /dev/null --json "$out/p1.json" "$@"
mpirun --allow-run-as-root -x NCCL_NVLS_ENABLE=0 -np 2 "$build/pgsim" "$netlist" --backend gpu -q -o /dev/null \
  --json "$out/p2.json" "$@"
python3 - "$out" <<'PY'
import json, sys
for p in (1, 2):
    j = json.load(open(f"{sys.argv[1]}/p{p}.json"))
    s, t = j["solver"], j["timing"]
    ranks = "; ".join(f"rank {k}: {r['unknowns']} rows, halo {r['halo']}, device {r['peak_device_bytes'] / 1e6:.1f} MB, "
                      f"host {r['peak_host_bytes'] / 1e6:.0f} MB" for k, r in enumerate(j["per_rank"]))
    print(f"P={p}: {j['nodes']} nodes, {s['iterations']} iterations, residual {s['relative_residual']:.2e}, "
          f"setup+upload {t['setup'] + t['upload']:.3f} s, solve {t['solve']:.4f} s "
          f"({1e3 * t['solve'] / max(s['iterations'], 1):.3f} ms/iteration), total {t['total']:.2f} s; {ranks}")
PY
