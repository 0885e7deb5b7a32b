// The partition contract (src/dist/partition.hpp): every row owned once, contiguous global
// numbering, halo and send lists that agree between neighbours, and blocks whose SpMV with the
// halo filled in is G's SpMV. Plain C++: no MPI needed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "dist/partition.hpp"
#include "grid_system.hpp"
#include "test_util.hpp"

using namespace pgsim;
using namespace pgsim::dist;

namespace {

CsrMatrix grid_matrix() { return test::make_eliminated_grid(60, 40).G; }

}  // namespace

TEST_CASE("partition: every row is owned by exactly one rank, each rank's rows contiguous", "[dist]") {
  const CsrMatrix G = grid_matrix();
  for (int32_t parts : {1, 2, 3, 4, 7}) {
    CAPTURE(parts);
    const Partition p = partition_rows(G, parts);
    REQUIRE(p.owner.size() == size_t(G.rows));
    REQUIRE(p.offset.size() == size_t(parts) + 1);
    CHECK(p.offset.front() == 0);
    CHECK(p.offset.back() == G.rows);
    std::vector<int32_t> seen(static_cast<size_t>(G.rows), 0);
    for (int32_t i = 0; i < G.rows; ++i) {
      const int32_t g = p.global[i], r = p.owner[i];
      REQUIRE(g >= 0);
      REQUIRE(g < G.rows);
      ++seen[g];
      CHECK(p.original[g] == i);
      CHECK(g >= p.offset[r]);
      CHECK(g < p.offset[r + 1]);
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int32_t c) { return c == 1; }));
    // Balanced: METIS keeps parts within a few percent of n / parts (every rank has work).
    for (int32_t r = 0; r < parts; ++r) {
      CHECK(p.rows_of(r) > 0);
      CHECK(double(p.rows_of(r)) <= 1.1 * double(G.rows) / parts + 1);
    }
  }
}

TEST_CASE("partition: halo ranges and send lists agree between neighbours, blocks hold all of G", "[dist]") {
  const CsrMatrix G = grid_matrix();
  const std::vector<double> b = test::random_vector(size_t(G.rows), 3);
  for (int32_t parts : {2, 3, 4}) {
    CAPTURE(parts);
    const Partition p = partition_rows(G, parts);
    std::vector<RankBlock> blocks;
    for (int32_t r = 0; r < parts; ++r) blocks.push_back(extract_block(G, b, p, r));
    int64_t nnz = 0;
    for (const RankBlock& blk : blocks) {
      nnz += blk.nnz();
      CHECK(blk.rows() == p.rows_of(blk.rank));
      CHECK(std::is_sorted(blk.halo_global.begin(), blk.halo_global.end()));
      CHECK(blk.boundary.rows == int32_t(blk.boundary_rows.size()));
      int32_t covered = 0;
      for (const Neighbor& nb : blk.neighbors) {
        CAPTURE(blk.rank, nb.rank);
        CHECK(nb.rank != blk.rank);
        CHECK(nb.recv_first == covered);  // the ranges tile the halo in rank order
        covered += nb.recv_count;
        for (int32_t h = nb.recv_first; h < nb.recv_first + nb.recv_count; ++h)
          CHECK(p.owner[p.original[blk.halo_global[h]]] == nb.rank);
        // What the neighbour sends is, in order, what this rank expects.
        const RankBlock& other = blocks[nb.rank];
        const auto back = std::find_if(other.neighbors.begin(), other.neighbors.end(),
                                       [&](const Neighbor& n) { return n.rank == blk.rank; });
        REQUIRE(back != other.neighbors.end());
        REQUIRE(back->send.size() == size_t(nb.recv_count));
        for (size_t s = 0; s < back->send.size(); ++s)
          CHECK(other.first_row + back->send[s] == blk.halo_global[nb.recv_first + int32_t(s)]);
      }
      CHECK(covered == blk.halo());
    }
    CHECK(nnz == G.nnz());
  }
}

TEST_CASE("partition: the blocks' SpMV with their halos filled is G's SpMV", "[dist]") {
  const CsrMatrix G = grid_matrix();
  const std::vector<double> b(size_t(G.rows), 0.0), x = test::random_vector(size_t(G.rows), 5);
  std::vector<double> y(x.size());
  G.multiply(x.data(), y.data());
  const Partition p = partition_rows(G, 3);
  std::vector<double> x_global(x.size());
  for (int32_t i = 0; i < G.rows; ++i) x_global[p.global[i]] = x[i];
  double worst = 0;
  for (int32_t r = 0; r < 3; ++r) {
    const RankBlock blk = extract_block(G, b, p, r);
    const std::vector<double> x_local(x_global.begin() + blk.first_row, x_global.begin() + blk.first_row + blk.rows());
    std::vector<double> halo(size_t(blk.halo())), y_local(size_t(blk.rows()));
    for (int32_t h = 0; h < blk.halo(); ++h) halo[h] = x_global[blk.halo_global[h]];
    blk.interior.multiply(x_local.data(), y_local.data());
    std::vector<double> y_boundary(size_t(blk.boundary.rows));
    blk.boundary.multiply(halo.data(), y_boundary.data());
    for (size_t k = 0; k < y_boundary.size(); ++k) y_local[blk.boundary_rows[k]] += y_boundary[k];
    for (int32_t l = 0; l < blk.rows(); ++l)
      worst = std::max(worst, std::fabs(y_local[l] - y[p.original[blk.first_row + l]]));
  }
  CHECK(worst <= 1e-12 * *std::max_element(G.val.begin(), G.val.end()));
}
