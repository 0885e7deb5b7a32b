// Parser throughput: parses a netlist REPEATS times per thread count and prints the median MB/s
// (file read included, as pgsim's parse phase does) by wall clock, and the CPU time all threads
// spent (on a shared machine the wall clock includes waiting for other jobs; CPU time over wall
// time says how many cores the parse kept busy). Thread counts are measured alternately, round by
// round, so a busy moment of the machine hits all of them alike. Reproduce (README "Benchmarks"):
//   benchmarks/replicate_netlist.sh ../shared/data/ibmpg1.spice 48 > /tmp/big.sp
//   build/benchmarks/bench_parse /tmp/big.sp 5 1 2
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>
#include <vector>

#include "parser/input_error.hpp"
#include "parser/netlist.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_parse NETLIST [REPEATS] [THREADS...]  (default: 3 repeats, all threads)\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::stoi(argv[2])) : 3;
  std::vector<int> threads;
  for (int i = 3; i < argc; ++i) threads.push_back(std::max(1, std::stoi(argv[i])));
  if (threads.empty()) threads.push_back(omp_get_max_threads());
  std::vector<std::vector<double>> seconds(threads.size()), cpu_seconds(threads.size());
  uint64_t bytes = 0;
  size_t elements = 0, nodes = 0;
  try {
    for (int r = 0; r < repeats; ++r)
      for (size_t t = 0; t < threads.size(); ++t) {
        omp_set_num_threads(threads[t]);
        auto start = std::chrono::steady_clock::now();
        std::clock_t cpu_start = std::clock();
        pgsim::Netlist nl = pgsim::parse_netlist(argv[1]);
        cpu_seconds[t].push_back(double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
        seconds[t].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        bytes = nl.bytes_read, elements = nl.elements.size(), nodes = nl.node_count();
      }
  } catch (const pgsim::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::printf("%s: %.1f MB, %zu elements, %zu nodes\n", argv[1], double(bytes) / 1e6, elements, nodes);
  for (size_t t = 0; t < threads.size(); ++t) {
    std::sort(seconds[t].begin(), seconds[t].end());
    std::sort(cpu_seconds[t].begin(), cpu_seconds[t].end());
    const double median = seconds[t][seconds[t].size() / 2], cpu_median = cpu_seconds[t][cpu_seconds[t].size() / 2];
    std::printf("parse, %d thread(s): median of %d: wall %.3f s = %.0f MB/s, cpu %.3f s\n", threads[t], repeats, median,
                double(bytes) / 1e6 / median, cpu_median);
  }
  return 0;
}
