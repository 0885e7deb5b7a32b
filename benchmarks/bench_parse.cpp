// Parser throughput: parses a netlist REPEATS times and prints the median MB/s (file read included,
// as pgsim's parse phase does), by wall clock and by this process's CPU time: on a shared machine
// the CPU time is the figure that measures the parser rather than the neighbours. Reproduce (README "Benchmarks"):
//   benchmarks/replicate_netlist.sh ../shared/data/ibmpg1.spice 48 > /tmp/big.sp
//   build/benchmarks/bench_parse /tmp/big.sp 5
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
    std::fprintf(stderr, "usage: bench_parse NETLIST [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::stoi(argv[2])) : 3;
  std::vector<double> seconds, cpu_seconds;
  uint64_t bytes = 0;
  size_t elements = 0, nodes = 0;
  try {
    for (int r = 0; r < repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      std::clock_t cpu_start = std::clock();
      pgsim::Netlist nl = pgsim::parse_netlist(argv[1]);
      cpu_seconds.push_back(double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      bytes = nl.bytes_read, elements = nl.elements.size(), nodes = nl.node_count();
    }
  } catch (const pgsim::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(cpu_seconds.begin(), cpu_seconds.end());
  const double median = seconds[seconds.size() / 2], cpu_median = cpu_seconds[cpu_seconds.size() / 2];
  std::printf("%s: %.1f MB, %zu elements, %zu nodes\n", argv[1], double(bytes) / 1e6, elements, nodes);
  std::printf("parse: median of %d: wall %.3f s = %.0f MB/s, cpu %.3f s = %.0f MB/s\n", repeats, median,
              double(bytes) / 1e6 / median, cpu_median, double(bytes) / 1e6 / cpu_median);
  return 0;
}
