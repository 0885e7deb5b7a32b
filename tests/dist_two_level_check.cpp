// Run under mpirun by tests/test_dist_mpi.cpp: the distributed two-level preconditioner
// (src/dist/two_level.hpp) on a grid split among the job's ranks is
//   - a fixed symmetric positive definite operator: x'By = y'Bx to 1e-12 relative, x'Bx > 0,
//     the same result when applied twice (inner products summed over the ranks);
//   - exact on the coarse space: B G z = z for a column z of Z (BNN: (I - QG) M (I - GQ) G Z = 0
//     and Q G Z = Z), which holds only if every rank's rows of G Z and E, and the halo's coarse
//     unknowns, were assembled right.
// Prints one line per failed check and "two-level checks passed" at the end; exit 1 on a failure.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "dist/coarse_space.hpp"
#include "dist/halo_backend.hpp"
#include "dist/partition.hpp"
#include "dist/two_level.hpp"
#include "grid_system.hpp"
#include "test_util.hpp"

using namespace pgsim;
using namespace pgsim::dist;

namespace {

int failures = 0;

void check(bool ok, const char* what, double a, double b) {
  if (ok) return;
  ++failures;
  std::printf("FAIL %s: %.17g vs %.17g\n", what, a, b);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  {
    const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
    // Every rank partitions the same G the same way (deterministic) and takes its own block.
    const Partition p = partition_rows(sys.G, ranks);
    const RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    CmgHierarchy h = build_cmg_hierarchy(softened_block(blk, kCutDiagonalShare));
    const CoarseSpace space = build_coarse_space(blk, h, 1);
    const TwoLevelPreconditioner B(std::make_unique<CmgPreconditioner>(std::move(h)), blk, space, MPI_COMM_WORLD);
    const HaloBackend G(blk, MPI_COMM_WORLD);
    const auto n = static_cast<size_t>(blk.rows());
    // This rank's part of a global random vector (the same global vector on every rank).
    const auto part = [&](uint32_t seed) {
      const std::vector<double> all = test::random_vector(static_cast<size_t>(sys.G.rows), seed);
      std::vector<double> mine(n);
      for (size_t i = 0; i < n; ++i) mine[i] = all[p.original[blk.first_row + i]];
      return mine;
    };

    for (uint32_t seed = 0; seed < 5; ++seed) {
      const std::vector<double> x = part(2 * seed), y = part(2 * seed + 1);
      std::vector<double> Bx(n), By(n);
      B.apply(x.data(), Bx.data());
      B.apply(y.data(), By.data());
      const double xBy = G.dot(x, By), yBx = G.dot(y, Bx), xBx = G.dot(x, Bx), yBy = G.dot(y, By);
      check(std::fabs(xBy - yBx) <= 1e-12 * std::sqrt(xBx * yBy), "x'By = y'Bx", xBy, yBx);
      check(xBx > 0 && yBy > 0, "x'Bx > 0 and y'By > 0", xBx, yBy);
      std::vector<double> again(n);
      B.apply(x.data(), again.data());
      check(again == Bx, "the same result applied twice", G.dot(again, again), G.dot(Bx, Bx));
    }

    // B G z = z for three columns z of Z: the first, a middle and the last coarse unknown.
    const int64_t N = B.coarse_unknowns();
    check(N > ranks, "coarse unknowns beyond one per rank", double(N), double(ranks));
    int32_t first = 0;  // this rank's first global coarse unknown: the ranks' counts before it
    MPI_Exscan(&space.count, &first, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) first = 0;
    for (const int64_t c : {int64_t(0), N / 2, N - 1}) {
      std::vector<double> z(n, 0.0), Gz(n), BGz(n);
      for (size_t i = 0; i < n; ++i)
        if (space.unknown_of_row[i] >= 0 && first + space.unknown_of_row[i] == c) z[i] = 1;
      G.multiply(z.data(), Gz.data());
      B.apply(Gz.data(), BGz.data());
      std::vector<double> diff(n);
      for (size_t i = 0; i < n; ++i) diff[i] = BGz[i] - z[i];
      const double err = std::sqrt(G.dot(diff, diff)), size = std::sqrt(G.dot(z, z));
      check(size >= 1 && err <= 1e-9 * size, "B G z = z for a coarse basis vector z", err, size);
    }
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) std::printf("two-level checks passed on %d ranks\n", ranks);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
