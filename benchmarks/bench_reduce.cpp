// reduce() alone: parses a netlist once, then reduces it REPEATS times per thread count and prints
// the median wall and CPU seconds (on a shared machine the wall clock includes waiting for other
// jobs). Thread counts alternate round by round, so a busy moment hits all of them alike. Large
// arrays fault in as in pgsim, where each is allocated once: linked with pgsim's allocation
// functions (src/app/huge_pages.cpp), and every block of 128 KB or more mapped afresh (glibc would
// otherwise raise its mmap threshold after the first free and serve later runs from the heap).
//   build/pgsim-gen --nodes 1M --seed 1 -o /tmp/g1m.sp
//   build/benchmarks/bench_reduce /tmp/g1m.sp 5 1 2
#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_reduce NETLIST [REPEATS] [THREADS...]  (default: 5 repeats, all threads)\n");
    return 2;
  }
  mallopt(M_MMAP_THRESHOLD, 128 << 10);  // fixed: no dynamic threshold
  const int repeats = argc > 2 ? std::max(1, std::stoi(argv[2])) : 5;
  std::vector<int> threads;
  for (int i = 3; i < argc; ++i) threads.push_back(std::max(1, std::stoi(argv[i])));
  if (threads.empty()) threads.push_back(omp_get_max_threads());
  std::vector<std::vector<double>> seconds(threads.size()), cpu_seconds(threads.size());
  try {
    const pgsim::Netlist nl = pgsim::parse_netlist(argv[1]);
    int64_t unknowns = 0, nnz = 0;
    for (int r = 0; r < repeats; ++r)
      for (size_t t = 0; t < threads.size(); ++t) {
        omp_set_num_threads(threads[t]);
        const auto start = std::chrono::steady_clock::now();
        const std::clock_t cpu_start = std::clock();
        const pgsim::ReducedSystem sys = pgsim::reduce(nl);
        cpu_seconds[t].push_back(double(std::clock() - cpu_start) / CLOCKS_PER_SEC);
        seconds[t].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        unknowns = sys.unknowns(), nnz = sys.G.nnz();
      }
    std::printf("%s: %zu elements, %u nodes -> %lld unknowns, %lld nonzeros\n", argv[1], nl.elements.size(),
                nl.node_count(), static_cast<long long>(unknowns), static_cast<long long>(nnz));
  } catch (const pgsim::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  for (size_t t = 0; t < threads.size(); ++t)
    std::printf("reduce, %d thread(s): median of %d: wall %.4f s, cpu %.4f s\n", threads[t], repeats,
                median(seconds[t]), median(cpu_seconds[t]));
  return 0;
}
