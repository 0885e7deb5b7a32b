#!/usr/bin/env bash
# Builds the libFuzzer target for the parser and the reduction with clang (ASan + UBSan) and runs
# it for a bounded time (default 60 s) from the seed corpus in tests/fuzz/corpus. Any crash,
# leak, timeout, out-of-memory or broken invariant fails the run; the input that caused it is
# kept in the build folder (crash-*, leak-*, timeout-*, oom-*).
# usage: tests/fuzz/run_fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
out=$(mkdir -p "${2:-$root/build-fuzz}" && cd "${2:-$root/build-fuzz}" && pwd)
cxx=${CLANGXX:-clang++}

# One translation unit set, compiled directly: the fuzz build needs its own flags throughout.
"$cxx" -std=c++17 -O1 -g -fno-omit-frame-pointer -fopenmp \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/src" $(pkg-config --cflags spdlog) \
  "$here/fuzz_netlist.cpp" "$root"/src/parser/*.cpp "$root/src/mna/reduce.cpp" \
  "$root/src/mna/concurrent_union_find.cpp" "$root/src/mna/prefix_sum.cpp" "$root/src/mna/source_loop.cpp" \
  $(pkg-config --libs spdlog fmt zlib) -o "$out/fuzz_netlist"

# Run in a scratch folder: new corpus entries go there (the seeds stay as committed), and the
# fuzzer's relative .include lines find the small file written here.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
printf 'R9 a b 1k\nI9 b 0 1m\n' > "$work/part.sp"
gzip -c "$work/part.sp" > "$work/part.sp.gz"
cd "$work"
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
  "$out/fuzz_netlist" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -dict="$here/netlist.dict" -artifact_prefix="$out/" -print_final_stats=1 \
  "$work/corpus" "$here/corpus" > "$out/fuzz.log" 2>&1 || {
  tail -n 60 "$out/fuzz.log"
  echo "fuzz: FAILED (full log: $out/fuzz.log)"
  exit 1
}
grep -E '^stat::|^Done ' "$out/fuzz.log"
echo "fuzz: no crash, leak or hang in ${seconds} s (log: $out/fuzz.log)"
