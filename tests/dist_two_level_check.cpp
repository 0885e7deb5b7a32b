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
#include <cstring>
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "cmg/builder.hpp"
#include "cmg/cmg_preconditioner.hpp"
#include "dist/coarse_problem.hpp"
#include "dist/coarse_space.hpp"
#include "dist/halo_backend.hpp"
#include "dist/partition.hpp"
#include "dist/two_level.hpp"
#include "coarse_sequence.hpp"
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

// B with the block preconditioner `local` on this rank's block of the partition p of sys.G: SPD,
// deterministic, and B G z = z for three columns z of Z.
void two_level_checks(std::unique_ptr<Preconditioner> local, const RankBlock& blk, const CoarseSpace& space,
                      const EliminatedSystem& sys, const Partition& p, int rank, int ranks) {
  {
    const TwoLevelPreconditioner B(std::move(local), blk, space, MPI_COMM_WORLD);
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
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
    // Every rank partitions the same G the same way (deterministic) and takes its own block.
    const Partition p = partition_rows(sys.G, ranks);
    RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    // Softened in place for the build only: the block's bits after it are the bits before, and
    // the hierarchy is the one of a softened copy (each boundary row's diagonal lowered by
    // (1 - share) times its cut couplings' magnitudes).
    const CsrMatrix before = blk.interior;
    CsrMatrix softened = blk.interior;
    for (int32_t k = 0; k < blk.boundary.rows; ++k) {
      double cut = 0;
      for (int32_t e = blk.boundary.ptr[k]; e < blk.boundary.ptr[k + 1]; ++e) cut -= blk.boundary.val[e];
      const int32_t i = blk.boundary_rows[k];
      for (int32_t e = softened.ptr[i]; e < softened.ptr[i + 1]; ++e)
        if (softened.col[e] == i) softened.val[e] -= (1 - kCutDiagonalShare) * cut;
    }
    CmgHierarchy h = softened_block_hierarchy(blk, kCutDiagonalShare);
    check(blk.interior.col == before.col && blk.interior.ptr == before.ptr &&
              std::memcmp(blk.interior.val.data(), before.val.data(), before.val.size() * sizeof(double)) == 0,
          "the block's bits after the softened build", double(blk.interior.nnz()), double(before.nnz()));
    const CmgHierarchy reference = build_cmg_hierarchy(softened);
    check(h.levels.size() == reference.levels.size() && h.levels[0].A.col == reference.levels[0].A.col &&
              std::memcmp(h.levels[0].A.val.data(), reference.levels[0].A.val.data(),
                          reference.levels[0].A.val.size() * sizeof(double)) == 0,
          "the hierarchy of the block softened in place is the softened copy's", double(h.levels.size()),
          double(reference.levels.size()));
    const CoarseSpace space = build_coarse_space(blk, h, 1);
    two_level_checks(std::make_unique<CmgPreconditioner>(std::move(h)), blk, space, sys, p, rank, ranks);
  }
  {
    // The GPU path's sequence on the host (gpu/two_level_device.hpp: the same steps over the
    // same operators, E^{-1} as the rows this rank reads, one all-reduce per coarse sum),
    // against TwoLevelPreconditioner with the same M (block Jacobi: any fixed block
    // preconditioner will do).
    const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
    const Partition p = partition_rows(sys.G, ranks);
    RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    const CoarseSpace space = build_coarse_space(blk, softened_block_hierarchy(blk, kCutDiagonalShare), 0);
    const CoarseProblem problem(blk, space, MPI_COMM_WORLD);
    const CoarseOperators& op = problem.operators();
    const JacobiPreconditioner M(blk.interior);
    const TwoLevelPreconditioner B(std::make_unique<JacobiPreconditioner>(blk.interior), blk, space, MPI_COMM_WORLD);
    const auto n = static_cast<size_t>(blk.rows());
    const auto N = static_cast<size_t>(problem.unknowns());
    const auto m = static_cast<size_t>(op.positions());
    const std::vector<double> rows = problem.inverse_rows();
    check(rows.size() == m * N && m > size_t(op.count), "E^{-1}'s rows: own and neighbours' unknowns", double(m),
          double(op.count));
    // Each row is the coarse solve of its unit vector, bit for bit (column blocks of the same solves).
    double row_diff = 0;
    for (size_t k = 0; k < m; ++k) {
      std::vector<double> e(N, 0.0);
      e[size_t(op.read[k])] = 1;
      problem.solve(e.data());
      for (size_t j = 0; j < N; ++j) row_diff = std::max(row_diff, std::fabs(rows[k * N + j] - e[j]));
    }
    check(row_diff == 0, "E^{-1}'s rows are the coarse solves of unit vectors", row_diff, 0);
    const std::vector<double> r = test::random_vector(n, 17 + uint32_t(rank));
    const std::vector<double> z = test::coarse_sequence(
        op, rows, r,
        [&](std::vector<double>& c) {
          MPI_Allreduce(MPI_IN_PLACE, c.data(), int(N), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        },
        [&](const std::vector<double>& u, std::vector<double>& w) { M.apply(u.data(), w.data()); });
    std::vector<double> want(n);
    B.apply(r.data(), want.data());
    double err = 0, size = 0;
    for (size_t i = 0; i < n; ++i) {
      err = std::max(err, std::fabs(z[i] - want[i]));
      size = std::max(size, std::fabs(want[i]));
    }
    check(size > 0 && err <= 1e-12 * size, "the GPU path's sequence gives B r", err, size);

    // The operators against G Z computed column by column through the distributed SpMV: row i
    // of G Z is own_coupling[i] at its own unknown and rest's entries elsewhere.
    const HaloBackend G(blk, MPI_COMM_WORLD);
    int32_t first = 0;
    MPI_Exscan(&space.count, &first, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) first = 0;
    check(op.first == first && op.count == space.count, "own unknowns numbered rank after rank", op.first, first);
    std::vector<std::vector<double>> gz(n, std::vector<double>(N, 0.0));  // from the operators, dense
    for (size_t i = 0; i < n; ++i)
      if (op.position_of_row[i] >= 0) gz[i][size_t(first + op.position_of_row[i])] = op.own_coupling[i];
    for (int32_t k = 0; k < op.rest.rows; ++k)
      for (int32_t e = op.rest.ptr[k]; e < op.rest.ptr[k + 1]; ++e) {
        const int32_t q = op.rest.col[e];
        check(q >= 0 && q < op.positions() && op.read[q] != first + op.position_of_row[op.rest_rows[k]],
              "a rest entry at another unknown", q, op.positions());
        gz[size_t(op.rest_rows[k])][size_t(op.read[q])] += op.rest.val[e];
      }
    double worst = 0, scale = 0;
    for (size_t col = 0; col < N; ++col) {
      std::vector<double> zc(n, 0.0), gzc(n);
      for (size_t i = 0; i < n; ++i)
        zc[i] = space.unknown_of_row[i] >= 0 && size_t(first + space.unknown_of_row[i]) == col;
      G.multiply(zc.data(), gzc.data());
      for (size_t i = 0; i < n; ++i) {
        worst = std::max(worst, std::fabs(gzc[i] - gz[i][col]));
        scale = std::max(scale, std::fabs(gzc[i]));
      }
    }
    check(scale > 0 && worst <= 1e-13 * scale, "own couplings and rest are G Z", worst, scale);
    // Z^T: each own unknown's rows, ascending, every row with a coarse unknown once.
    for (int32_t q = 0; q < op.count; ++q) {
      std::vector<int32_t> want_rows;
      for (size_t i = 0; i < n; ++i)
        if (space.unknown_of_row[i] == q) want_rows.push_back(int32_t(i));
      const std::vector<int32_t> got(op.members.begin() + op.member_ptr[q], op.members.begin() + op.member_ptr[q + 1]);
      check(got == want_rows && op.read[size_t(q)] == first + q, "Z^T's rows of an own unknown", double(got.size()),
            double(want_rows.size()));
    }
    // Each unknown read once: a neighbour's unknown that many rows reach is one position (one row
    // of E^{-1}), not one per entry of rest (at 50M nodes on 4 ranks: 355,555 positions of 10,620
    // unknowns, 30 GB of E^{-1}'s rows on each rank).
    check(std::adjacent_find(op.read.begin() + op.count, op.read.end(), std::greater_equal<int32_t>()) == op.read.end(),
          "the neighbours' positions strictly ascending", 0, 0);
    check(m <= N, "no more positions than coarse unknowns", double(m), double(N));
    // rest^T is the transpose of rest, columns global unknowns.
    CsrMatrix rest_global = op.rest;
    for (auto& q : rest_global.col) q = op.read[size_t(q)];
    for (int32_t k = 0; k < rest_global.rows; ++k)
      sort_row(&rest_global.col[rest_global.ptr[k]], &rest_global.val[rest_global.ptr[k]],
               rest_global.ptr[k + 1] - rest_global.ptr[k]);
    CsrMatrix want_t = transpose(rest_global, int32_t(N));
    for (auto& k : want_t.col) k = op.rest_rows[size_t(k)];
    check(op.rest_transposed.ptr == want_t.ptr && op.rest_transposed.col == want_t.col &&
              op.rest_transposed.val == want_t.val,
          "rest^T is transpose(rest)", double(op.rest_transposed.nnz()), double(want_t.nnz()));
  }
  {
    // A coarse space over a bound: the rows at the cut grouped by a CMG level, at most
    // `bound` unknowns over all ranks, the preconditioner still SPD and exact on its coarse space.
    const EliminatedSystem sys = test::make_eliminated_grid(60, 40);
    const Partition p = partition_rows(sys.G, ranks);
    RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    CmgOptions deep;  // several levels on these small blocks
    deep.coarse_rows = 100;
    CmgHierarchy h = softened_block_hierarchy(blk, kCutDiagonalShare, deep);
    // The bound: all ranks' unknowns with the cut rows grouped by level 2 (ranks' depths differ:
    // a shallower rank counts its coarsest level).
    std::vector<int64_t> counts = coarse_counts_by_level(blk, h, 1);
    counts.resize(std::max<size_t>(counts.size(), 3), counts.back());
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    const int64_t free_count = counts[0], bound = counts[2];
    check(bound < counts[1] && counts[1] < free_count, "fewer unknowns on each level", double(bound),
          double(free_count));
    int level = 0;
    const CoarseSpace space = build_bounded_coarse_space(blk, h, 1, bound, MPI_COMM_WORLD, &level);
    int64_t total = space.count;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    check(level == 2 && total == bound, "grouped by the finest level within the bound", double(total), double(bound));
    check(build_bounded_coarse_space(blk, h, 1, free_count, MPI_COMM_WORLD, &level).unknown_of_row ==
                  build_coarse_space(blk, h, 1).unknown_of_row && level == 0,
          "within the bound: each row at the cut alone", level, 0);
    bool threw = false;
    try {
      build_bounded_coarse_space(blk, h, 1, ranks - 1, MPI_COMM_WORLD);
    } catch (const std::length_error&) {
      threw = true;
    }
    check(threw, "no level within a bound below one unknown per rank: length_error", 0, 0);
    two_level_checks(std::make_unique<CmgPreconditioner>(std::move(h)), blk, space, sys, p, rank, ranks);
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) std::printf("two-level checks passed on %d ranks\n", ranks);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
