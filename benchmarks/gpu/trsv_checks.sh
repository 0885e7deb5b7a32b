#!/usr/bin/env bash
# The triangular-solve evidence in one batch on a GPU machine, from an existing build:
# tests, compute-sanitizer on the GPU SpTRSV tests (memcheck on every kernel; racecheck on the kernels
# with shared memory, the sync-free ones: under racecheck cuSPARSE's SpSV and thousands of level
# launches do not finish in minutes), the benchmark table.
#   benchmarks/gpu/trsv_checks.sh BUILD_DIR IBMPG1_NETLIST OUT_DIR
set -u
bld=$1; netlist=$2; out=$3
mkdir -p "$out"
filter="GPU SpTRSV*,GPU IC(0) preconditioner*"  # the kernels here; PCG runs kernels tested elsewhere
(cd "$bld" && timeout 150 ctest --output-on-failure > "$out/ctest.log" 2>&1); echo "ctest rc $?" > "$out/summary.txt"
timeout 200 "$bld/trsv_bench" --netlist "$netlist" > "$out/bench.md" 2>&1; echo "bench rc $?" >> "$out/summary.txt"
timeout 150 compute-sanitizer --tool memcheck --leak-check full "$bld/tests/test_gpu_sptrsv" "$filter" > "$out/memcheck.log" 2>&1
echo "memcheck rc $?" >> "$out/summary.txt"
timeout 100 compute-sanitizer --tool racecheck --kernel-name kns=syncfree "$bld/tests/test_gpu_sptrsv" "$filter" > "$out/racecheck.log" 2>&1
echo "racecheck rc $?" >> "$out/summary.txt"
grep -h -E "tests passed|tests failed|Total Test time" "$out/ctest.log" >> "$out/summary.txt"
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|All tests passed|test cases:" "$out/memcheck.log" "$out/racecheck.log" >> "$out/summary.txt"
cat "$out/summary.txt"
grep -E "^#|^\|" "$out/bench.md"
