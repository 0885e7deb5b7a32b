#!/usr/bin/env python3
"""The benchmarks' `file` column (benchmarks/file_watch.py) sees pgsim's voltages file arrive: a
run writing -o and --json into a fresh folder is watched for the voltages file only, whose moment
comes after the start and before the process's exit, and a file that never appears stays None.
  file_watch_check.py PGSIM NETLIST"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from file_watch import FileWatch  # noqa: E402


def main():
    pgsim, netlist = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        voltages, report = Path(tmp) / "v.txt", Path(tmp) / "run.json"
        start = time.monotonic()
        watch = FileWatch(voltages, start)
        never = FileWatch(Path(tmp) / "never.txt", start)
        subprocess.run([pgsim, netlist, "-q", "--backend", "cpu", "-o", str(voltages), "--json", str(report)],
                       check=True)
        wall = time.monotonic() - start
        watch.close()
        never.close()
        if not (voltages.exists() and report.exists()):
            sys.exit("pgsim wrote no voltages file or JSON")
        if watch.seconds is None or not 0 < watch.seconds <= wall:
            sys.exit(f"the voltages file's moment {watch.seconds} is not within the run's 0..{wall:.3f} s")
        if never.seconds is not None:
            sys.exit(f"a file that never appeared was seen at {never.seconds} s")
        print(f"voltages file in place at {watch.seconds:.4f} s, exit at {wall:.4f} s")


if __name__ == "__main__":
    main()
