#!/usr/bin/env python3
"""Issue 9: an exported system loads in SciPy, and SciPy's direct solution matches pgsim's
voltages to 1e-9 V. Exits 77 (ctest: skipped) without SciPy or without the netlist.
usage: scipy_export_check.py PGSIM NETLIST"""
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import scipy.io
    import scipy.sparse.linalg
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

pgsim, netlist = sys.argv[1], sys.argv[2]
if not os.path.exists(netlist):
    print(f"skipped: no {netlist}")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    prefix = os.path.join(tmp, "sys")
    start = time.perf_counter()
    subprocess.run([pgsim, netlist, "--export-system", prefix, "--export-only", "-q"], check=True)
    export_seconds = time.perf_counter() - start
    subprocess.run([pgsim, netlist, "--solver", "direct", "-o", os.path.join(tmp, "v.txt"), "-q"], check=True)

    G = scipy.io.mmread(prefix + ".G.mtx").tocsc()  # mmread fills in the upper triangle
    b = np.asarray(scipy.io.mmread(prefix + ".b.mtx")).ravel()
    with open(prefix + ".nodes.txt") as f:
        names = f.read().split("\n")[:-1]
    x = scipy.sparse.linalg.spsolve(G, b)

    voltage = {}
    with open(os.path.join(tmp, "v.txt")) as f:
        for line in f:
            name, value = line.split()
            voltage[name] = float(value)

assert G.shape == (len(b), len(b)) == (len(names), len(names)), (G.shape, len(b), len(names))
error = max(abs(x[k] - voltage[name]) for k, name in enumerate(names))
print(f"{len(b)} unknowns, {G.nnz} nonzeros; pgsim run with --export-only {export_seconds:.3f} s; "
      f"max |SciPy - pgsim| = {error:.3e} V")
sys.exit(0 if error <= 1e-9 else 1)
