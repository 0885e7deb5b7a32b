#!/usr/bin/env python3
"""A one-net N x N mesh netlist (the mesh of tests/test_dist_mpi.cpp, any size): resistances varied
by position, a pad every 10 crossings, a load at every node. Unlike pgsim-gen's grids (VDD and
GND nets, which METIS gives a rank each at P = 2, with no halo), any split of it cuts wires, so
the distributed solve's halo exchange is real.
    benchmarks/dist/one_net_mesh.py N OUT.sp"""
import sys

n, path = int(sys.argv[1]), sys.argv[2]
k = 0
with open(path, "w") as f:
    for y in range(n):
        lines = []
        for x in range(n):
            r = 0.5 + 0.01 * ((x * 7 + y * 13) % 50)
            node = f"n1_{x}_{y}"
            if x + 1 < n:
                lines.append(f"R{k} {node} n1_{x + 1}_{y} {r:.6f}")
                k += 1
            if y + 1 < n:
                lines.append(f"R{k} {node} n1_{x}_{y + 1} {2 * r:.6f}")
                k += 1
            if x % 10 == 5 and y % 10 == 5:
                lines.append(f"R{k} p_{x}_{y} {node} 0.25")
                lines.append(f"V{k} p_{x}_{y} 0 1.8")
                k += 1
            lines.append(f"I{k} {node} 0 {1e-4 * (1 + (x * y) % 5):.6e}")
            k += 1
        f.write("\n".join(lines) + "\n")
