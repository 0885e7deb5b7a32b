// An exchange between the ranks of one host, both ways (dist/byte_exchange.hpp): each rank sends
// MB megabytes to every other rank through exchange_bytes, read by the receivers on all their
// threads (SameHost::kDirectReads, where the kernel lets them: dist/direct_reads.hpp) and as MPI
// messages (SameHost::kMessages), alternating, REPEAT times each, into one receive buffer (paged
// in by the first round). Rank 0 prints each round's seconds (the slowest rank's, from a barrier
// to the exchange's end) and the median of each way, in GB/s per rank received. Reproduce (benchmarks/dist/README.md):
//   mpirun -np 2 --bind-to none -x OMP_NUM_THREADS=15 build/benchmarks/bench_exchange [MB] [REPEAT]
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "dist/byte_exchange.hpp"
#include "dist/direct_reads.hpp"
#include "parser/default_init.hpp"

using namespace pgsim;
using namespace pgsim::dist;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const uint64_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const int repeat = argc > 2 ? std::atoi(argv[2]) : 5;
  const uint64_t share = mb << 20;
  const std::vector<uint64_t> counts(size_t(ranks), share);
  FillVector<char> send(share * uint64_t(ranks)), recv(share * uint64_t(ranks));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < int64_t(send.size()); ++i) send[size_t(i)] = char(i * 7 + rank);
  const bool direct = host_peers(MPI_COMM_WORLD).readable;
  if (rank == 0)
    std::printf("%d ranks, %d threads each, %llu MB to each other rank; direct reads %s\n", ranks, omp_get_max_threads(),
                (unsigned long long)mb, direct ? "allowed" : "refused (both ways are MPI messages)");
  std::vector<double> seconds[2];
  for (int r = 0; r < repeat; ++r)
    for (int way = 0; way < 2; ++way) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      exchange_bytes(send.data(), counts, recv.data(), counts, MPI_COMM_WORLD, OwnShare::kLeft, kMaxMessageBytes,
                     way == 0 ? SameHost::kDirectReads : SameHost::kMessages);
      double t = MPI_Wtime() - start;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      seconds[way].push_back(t);
      // Every byte from rank q is where it belongs (q's byte i for this rank: i of q's share for it).
      long bad = 0;
      for (int q = 0; q < ranks; ++q)
        if (q != rank)
          for (uint64_t i = 0; i < share; i += 4093)
            bad += recv[q * share + i] != char((uint64_t(rank) * share + i) * 7 + uint64_t(q));
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (bad != 0) {
        if (rank == 0) std::fprintf(stderr, "bench_exchange: %ld bytes wrong\n", bad);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      if (rank == 0) std::printf("round %d, %s: %.4f s\n", r, way == 0 ? "direct reads" : "messages", t);
    }
  if (rank == 0)
    for (int way = 0; way < 2; ++way) {
      std::vector<double> s = seconds[way];
      std::sort(s.begin(), s.end());
      const double median = s[s.size() / 2];
      std::printf("%-13s median %.4f s, %.1f GB/s per rank received\n", way == 0 ? "direct reads" : "messages", median,
                  double(share) * double(ranks - 1) / median / 1e9);
    }
  MPI_Finalize();
  return 0;
}
