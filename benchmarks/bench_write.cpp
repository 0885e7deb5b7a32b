// Voltages-file write throughput (issue 13). Parses NETLIST once, gives every node a voltage
// (synthetic, 1.7 to 1.8 V: every value has its 13 digits, as a solution's have), then writes the
// voltages file REPEATS times for each thread count, the counts alternating within each repeat so
// that a busy neighbour slows them alike, into OUT (a regular file: temporary, fsync, rename, as
// pgsim -o does) and into /dev/null (formatting and write calls only). Prints the median MB/s,
// and the median CPU time of all threads: on a shared machine, where the wall clock waits for the
// neighbours, equal CPU time for 1 and N threads says the parallel write adds no work.
// Reproduce (README "Tests, fuzzing, benchmarks"):
//   build/pgsim-gen --nodes 2M --seed 1 -o /tmp/g2m.sp
//   build/benchmarks/bench_write /tmp/g2m.sp /tmp/g2m.voltages 5 1 2
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "app/voltage_file.hpp"
#include "parser/netlist.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_write NETLIST OUT REPEATS THREADS...\n");
    return 2;
  }
  const std::string out = argv[2];
  const int repeats = std::max(1, std::stoi(argv[3]));
  std::vector<int> thread_counts;
  for (int i = 4; i < argc; ++i) thread_counts.push_back(std::max(1, std::stoi(argv[i])));
  try {
    const pgsim::Netlist netlist = pgsim::parse_netlist(argv[1]);
    std::vector<double> voltages(netlist.node_count());
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> volts(1.7, 1.8);
    for (double& v : voltages) v = volts(rng);
    std::map<std::pair<int, std::string>, std::vector<double>> seconds, cpu;  // (threads, target) -> times
    for (int r = 0; r < repeats; ++r)
      for (int threads : thread_counts)
        for (const std::string& target : {out, std::string("/dev/null")}) {
          omp_set_num_threads(threads);
          const auto start = std::chrono::steady_clock::now();
          const std::clock_t cpu_start = std::clock();
          pgsim::write_voltages(target, netlist, voltages);
          cpu[{threads, target}].push_back(double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
          seconds[{threads, target}].push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
    const double mb = double(std::filesystem::file_size(out)) / 1e6;
    std::printf("%s: %u nodes, voltages file %.1f MB\n", argv[1], netlist.node_count() - 1, mb);
    auto median = [](std::vector<double> times) {
      std::sort(times.begin(), times.end());
      return times[times.size() / 2];
    };
    for (const auto& [key, times] : seconds)
      std::printf("threads %2d  %-32s median of %d: wall %.3f s = %.0f MB/s, cpu %.3f s\n", key.first,
                  key.second.c_str(), repeats, median(times), mb / median(times), median(cpu[key]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
