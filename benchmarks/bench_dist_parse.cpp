// The distributed parse's time and memory per rank (issue 17). Under mpirun -np P each rank parses
// its byte range (dist/distributed_parse.hpp) and prints one line: its range's bytes, owned nodes,
// elements, wall seconds of the parse, and the growth of its peak resident memory over the parse
// (VmHWM after it minus VmHWM before it, so MPI's and the program's own memory are left out),
// in bytes per node of the whole netlist and per owned node, and the growth of its resident
// memory (what it holds after the parse). --serial: the one-process
// parse_netlist instead (run it without mpirun), the reference the ranks' peaks are compared with.
// --write OUT: then the voltages file of made-up values, write_voltages_distributed (or
// write_voltages with --serial), timed. Reproduce (docs/distributed.md):
//   build-cpu/pgsim-gen --nodes 2M --seed 1 -o /tmp/g2m.sp
//   OMP_NUM_THREADS=1 build-cpu/benchmarks/bench_dist_parse /tmp/g2m.sp --serial
//   mpirun -np 2 -x OMP_NUM_THREADS=1 build-cpu/benchmarks/bench_dist_parse /tmp/g2m.sp
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "app/distributed_voltages.hpp"
#include "app/voltage_file.hpp"
#include "dist/distributed_parse.hpp"
#include "mna/host_memory.hpp"

using namespace pgsim;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc < 2) {
    if (rank == 0) std::fprintf(stderr, "usage: bench_dist_parse NETLIST [--serial] [--write OUT]\n");
    MPI_Finalize();
    return 2;
  }
  const std::string path = argv[1];
  bool serial = false;
  std::string out;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--serial") serial = true;
    else if (a == "--write" && i + 1 < argc) out = argv[++i];
  }
  const HostMemory base = host_memory();
  double t0 = MPI_Wtime();
  uint64_t owned = 0, elements = 0, bytes = 0, total = 0;
  Netlist netlist;
  dist::RankNetlist rn;
  if (serial) {
    netlist = parse_netlist(path);
    owned = netlist.node_count() - 1, elements = netlist.elements.size(), bytes = netlist.bytes_read;
    total = netlist.node_count();
  } else {
    rn = dist::parse_distributed(path, MPI_COMM_WORLD);
    owned = rn.owned(), elements = rn.elements.size(), bytes = rn.bytes_read, total = rn.total_nodes;
  }
  const double parse_seconds = MPI_Wtime() - t0;
  const HostMemory parsed = host_memory();
  const uint64_t grown = parsed.peak - base.peak, held = parsed.resident - base.resident;
  double write_seconds = 0;
  if (!out.empty()) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (serial) {
      write_voltages(out, netlist, std::vector<double>(netlist.node_count(), 1.25));
    } else {
      write_voltages_distributed(out, rn, std::vector<double>(rn.owned(), 1.25), MPI_COMM_WORLD);
    }
    write_seconds = MPI_Wtime() - t0;
  }
  const uint64_t grown_all = host_memory().peak - base.peak;
  for (int q = 0; q < ranks; ++q) {
    if (q == rank)
      std::printf("rank %d/%d%s: %.1f MB read, %llu owned nodes of %llu, %llu elements, parse %.3f s, peak +%.1f MB = "
                  "%.1f B/node (%.1f B/owned node); holds +%.1f MB = %.1f B/node%s\n",
                  rank, ranks, serial ? " (serial)" : "", double(bytes) / 1e6, (unsigned long long)owned, (unsigned long long)total,
                  (unsigned long long)elements, parse_seconds, double(grown) / 1e6, double(grown) / double(total),
                  owned ? double(grown) / double(owned) : 0.0, double(held) / 1e6, double(held) / double(total),
                  out.empty() ? "" : (", write " + std::to_string(write_seconds) + " s, peak with it +" +
                                      std::to_string(grown_all / 1000000) + " MB").c_str());
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
