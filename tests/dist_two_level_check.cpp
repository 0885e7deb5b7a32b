// Run under mpirun by tests/test_dist_mpi.cpp: the distributed two-level preconditioner
// (src/dist/two_level.hpp) on a grid split among the job's ranks is
//   - a fixed symmetric positive definite operator: x'By = y'Bx to 1e-12 relative, x'Bx > 0,
//     the same result when applied twice (inner products summed over the ranks);
//   - exact on the coarse space: B G z = z for a column z of Z (BNN: (I - QG) M (I - GQ) G Z = 0
//     and Q G Z = Z), which holds only if every rank's rows of G Z and E, and the halo's coarse
//     unknowns, were assembled right;
//   - the same operator from the coarse problem's matrices as the GPU path applies it
//     (gpu/two_level_device.hpp: Z^T, G Z, (G Z)^T by SpMV, E^{-1} dense, one all-reduce per
//     coarse sum), evaluated here on the host with the same block preconditioner.
// Prints one line per failed check and "two-level checks passed" at the end; exit 1 on a failure.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "dist/coarse_problem.hpp"
#include "dist/coarse_space.hpp"
#include "dist/halo_backend.hpp"
#include "dist/partition.hpp"
#include "dist/two_level.hpp"
#include "grid_system.hpp"
#include "pcg/jacobi.hpp"
#include "pcg/triangular.hpp"
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
  {
    // The GPU path's sequence on the host, against TwoLevelPreconditioner with the same M
    // (block Jacobi: any fixed block preconditioner will do).
    const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
    const Partition p = partition_rows(sys.G, ranks);
    const RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    const CoarseSpace space = build_coarse_space(blk, build_cmg_hierarchy(softened_block(blk, kCutDiagonalShare)), 0);
    const CoarseProblem problem(blk, space, MPI_COMM_WORLD);
    const JacobiPreconditioner M(blk.interior);
    const TwoLevelPreconditioner B(std::make_unique<JacobiPreconditioner>(blk.interior), blk, space, MPI_COMM_WORLD);
    const auto n = static_cast<size_t>(blk.rows());
    const auto N = static_cast<size_t>(problem.unknowns());
    const std::vector<double> einv = problem.dense_inverse(int64_t(N));
    const auto spmv = [](const CsrMatrix& A, const std::vector<double>& x) {
      std::vector<double> y(static_cast<size_t>(A.rows));
      A.multiply(x.data(), y.data());
      return y;
    };
    const auto solve = [&](const std::vector<double>& c) {  // E^{-1} c, dense, summed over ranks first
      std::vector<double> sum = c, y(N, 0.0);
      MPI_Allreduce(MPI_IN_PLACE, sum.data(), int(N), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      for (size_t i = 0; i < N; ++i)
        for (size_t j = 0; j < N; ++j) y[i] += einv[i * N + j] * sum[j];
      return y;
    };
    const std::vector<double> r = test::random_vector(n, 17 + uint32_t(rank));
    const std::vector<double> y1 = solve(spmv(problem.z_transposed(), r));
    std::vector<double> u = spmv(problem.gz(), y1), z(n), want(n);
    for (size_t i = 0; i < n; ++i) u[i] = r[i] - u[i];
    M.apply(u.data(), z.data());
    const std::vector<double> y2 = solve(spmv(problem.gz_transposed(), z));
    for (size_t i = 0; i < n; ++i)
      if (const int32_t c = problem.unknown_of_row()[i]; c >= 0) z[i] += y1[c] - y2[c];
    B.apply(r.data(), want.data());
    double err = 0, size = 0;
    for (size_t i = 0; i < n; ++i) {
      err = std::max(err, std::fabs(z[i] - want[i]));
      size = std::max(size, std::fabs(want[i]));
    }
    check(size > 0 && err <= 1e-12 * size, "the GPU path's sequence gives B r", err, size);
    // The coarse operators' transposes, built on all threads, entry for entry transpose()'s.
    const CsrMatrix gzt = problem.gz_transposed(), want_gzt = transpose(problem.gz(), int32_t(N));
    check(gzt.ptr == want_gzt.ptr && gzt.col == want_gzt.col && gzt.val == want_gzt.val, "(G Z)^T is transpose(G Z)",
          double(gzt.nnz()), double(want_gzt.nnz()));
    CsrMatrix Z;  // this rank's rows of Z, one push at a time
    Z.rows = int32_t(n);
    for (const int32_t c : problem.unknown_of_row()) {
      if (c >= 0) Z.col.push_back(c), Z.val.push_back(1.0);
      Z.ptr.push_back(int32_t(Z.col.size()));
    }
    const CsrMatrix zt = problem.z_transposed(), want_zt = transpose(Z, int32_t(N));
    check(zt.nnz() > 0 && zt.ptr == want_zt.ptr && zt.col == want_zt.col && zt.val == want_zt.val, "Z^T is transpose(Z)",
          double(zt.nnz()), double(want_zt.nnz()));
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) std::printf("two-level checks passed on %d ranks\n", ranks);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
