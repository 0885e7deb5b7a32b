// The coarse space of the distributed coarse correction (src/dist/coarse_space.hpp): rows near
// the cut alone, the rest by the rank's coarsest CMG aggregates, the ground aggregate left out.
// Plain C++: no MPI needed (the MPI side is tests/test_dist_mpi.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "cmg/builder.hpp"
#include "dist/coarse_space.hpp"
#include "grid_system.hpp"

using namespace pgsim;
using namespace pgsim::dist;

namespace {

// Each local row's link distance to the nearest boundary row inside the block (breadth-first).
std::vector<int> distance_to_cut(const RankBlock& blk) {
  std::vector<int> d(static_cast<size_t>(blk.rows()), -1);
  std::vector<int32_t> front(blk.boundary_rows), next;
  for (int32_t i : front) d[i] = 0;
  for (int level = 1; !front.empty(); ++level) {
    next.clear();
    for (int32_t i : front)
      for (int32_t k = blk.interior.ptr[i]; k < blk.interior.ptr[i + 1]; ++k)
        if (d[blk.interior.col[k]] < 0) {
          d[blk.interior.col[k]] = level;
          next.push_back(blk.interior.col[k]);
        }
    front.swap(next);
  }
  return d;
}

}  // namespace

TEST_CASE("coarse space: rows near the cut alone, the others by coarsest aggregate", "[dist]") {
  const EliminatedSystem sys = test::make_eliminated_grid(80, 60);
  for (int32_t parts : {2, 4}) {
    const Partition p = partition_rows(sys.G, parts);
    for (int32_t rank = 0; rank < parts; ++rank) {
      const RankBlock blk = extract_block(sys.G, sys.b, p, rank);
      REQUIRE_FALSE(blk.boundary_rows.empty());
      CmgOptions few;  // a deep hierarchy on these small blocks: several levels to compose
      few.coarse_rows = 100;
      const CmgHierarchy h = build_cmg_hierarchy(blk.interior, few);
      REQUIRE(h.levels.size() >= 3);
      // The coarsest vertex of every row, as coarse_space.cpp must find it (independently here:
      // one row's path through the levels).
      auto coarsest = [&h](int32_t v) {
        for (size_t l = 0; l + 1 < h.levels.size(); ++l) {
          const auto& ptr = h.levels[l].cluster_ptr;
          v = static_cast<int32_t>(std::upper_bound(ptr.begin(), ptr.end(), v) - ptr.begin()) - 1;
        }
        return v;
      };
      const int32_t ground = coarsest(h.level0_ground);
      const std::vector<int> d = distance_to_cut(blk);
      int previous_count = -1;
      for (int layers : {0, 1, 3}) {
        CAPTURE(parts, rank, layers);
        const CoarseSpace s = build_coarse_space(blk, h, layers);
        REQUIRE(s.unknown_of_row.size() == size_t(blk.rows()));
        std::map<int32_t, std::set<int32_t>> rows_of;  // coarse unknown -> its rows
        int32_t next_new = 0;
        for (int32_t i = 0; i < blk.rows(); ++i) {
          const int32_t u = s.unknown_of_row[i];
          REQUIRE(u >= -1);
          REQUIRE(u < s.count);
          if (u >= 0 && !rows_of.count(u)) REQUIRE(u == next_new++);  // numbered by first row
          if (u >= 0) rows_of[u].insert(i);
          const bool near = d[i] >= 0 && d[i] <= layers;
          if (!near) CHECK((u < 0) == (coarsest(h.level0_of_unknown[i]) == ground));
        }
        CHECK(int32_t(rows_of.size()) == s.count);
        int near_rows = 0;
        for (const auto& [u, rows] : rows_of) {
          const int32_t first = *rows.begin();
          if (d[first] >= 0 && d[first] <= layers) {
            CHECK(rows.size() == 1);  // a row near the cut is a coarse unknown of its own
            ++near_rows;
          } else {
            for (int32_t i : rows) {  // an aggregate: one coarsest vertex, no row near the cut
              CHECK(coarsest(h.level0_of_unknown[i]) == coarsest(h.level0_of_unknown[first]));
              CHECK_FALSE((d[i] >= 0 && d[i] <= layers));
            }
          }
        }
        int expected_near = 0;
        for (int x : d) expected_near += (x >= 0 && x <= layers);
        CHECK(near_rows == expected_near);
        CHECK(s.count > previous_count);  // each layer adds coarse unknowns
        previous_count = s.count;
      }
    }
  }
  CHECK_THROWS(build_coarse_space(extract_block(sys.G, sys.b, partition_rows(sys.G, 2), 0),
                                  build_cmg_hierarchy(sys.G), 1));  // another matrix's hierarchy
}

TEST_CASE("coarse space: rows near the cut grouped by their vertex on a CMG level, counts by level", "[dist]") {
  const EliminatedSystem sys = test::make_eliminated_grid(80, 60);
  const Partition p = partition_rows(sys.G, 3);
  for (int32_t rank = 0; rank < 3; ++rank) {
    const RankBlock blk = extract_block(sys.G, sys.b, p, rank);
    CmgOptions few;
    few.coarse_rows = 100;
    const CmgHierarchy h = build_cmg_hierarchy(blk.interior, few);
    REQUIRE(h.levels.size() >= 3);
    auto on_level = [&h](int32_t v, size_t level) {  // a level-0 vertex's vertex on `level`
      for (size_t l = 0; l < level; ++l) {
        const auto& ptr = h.levels[l].cluster_ptr;
        v = static_cast<int32_t>(std::upper_bound(ptr.begin(), ptr.end(), v) - ptr.begin()) - 1;
      }
      return v;
    };
    const size_t coarsest = h.levels.size() - 1;
    const std::vector<int> d = distance_to_cut(blk);
    const std::vector<int64_t> counts = coarse_counts_by_level(blk, h, 1);
    REQUIRE(counts.size() == h.levels.size());
    CHECK(build_coarse_space(blk, h, 1, 0).unknown_of_row == build_coarse_space(blk, h, 1).unknown_of_row);
    for (size_t g = 0; g <= coarsest + 1; ++g) {  // one beyond the coarsest: clamped
      CAPTURE(rank, g);
      const size_t level = std::min(g, coarsest);
      const CoarseSpace s = build_coarse_space(blk, h, 1, int(g));
      CHECK(s.count == counts[level]);
      if (g > 0 && g <= coarsest) CHECK(counts[g] <= counts[g - 1]);  // grouping never grows the coarse system
      std::map<int32_t, int32_t> unknown_of_group;  // level vertex of a near row -> its unknown
      std::set<int32_t> near_unknowns, far_unknowns;
      int32_t next_new = 0;
      std::set<int32_t> seen;
      for (int32_t i = 0; i < blk.rows(); ++i) {
        const int32_t u = s.unknown_of_row[i];
        if (u >= 0 && seen.insert(u).second) REQUIRE(u == next_new++);  // numbered by first row
        if (d[i] >= 0 && d[i] <= 1) {
          REQUIRE(u >= 0);  // near the cut: always in a coarse unknown, even in the ground's aggregate
          const auto [at, fresh] = unknown_of_group.emplace(on_level(h.level0_of_unknown[i], level), u);
          CHECK(at->second == u);  // same level vertex, same unknown
          (void)fresh;
          near_unknowns.insert(u);
        } else if (u >= 0) {
          far_unknowns.insert(u);
        }
      }
      CHECK(near_unknowns.size() == unknown_of_group.size());  // distinct vertices, distinct unknowns
      for (int32_t u : far_unknowns) CHECK(near_unknowns.count(u) == 0);  // groups and aggregates disjoint
    }
    CHECK(counts.back() < counts.front());
  }
}
