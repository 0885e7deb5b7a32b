#pragma once
// Bit-for-bit comparison of two CMG hierarchies, shared by the tests that build one in two ways
// (thread counts; level 0 coarsened on the host or on the device).
#include <catch2/catch.hpp>

#include "cmg/hierarchy.hpp"
#include "mna/csr.hpp"

namespace pgsim::test {

inline void check_same_csr(const CsrMatrix& a, const CsrMatrix& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.ptr == b.ptr);
  CHECK(a.col == b.col);
  CHECK(a.val == b.val);
}

// Every array of a and b the same: levels, numberings, cycle repeats and weights, coarse factor.
inline void check_same_hierarchy(const CmgHierarchy& a, const CmgHierarchy& b) {
  REQUIRE(a.levels.size() == b.levels.size());
  CHECK(a.level0_of_unknown == b.level0_of_unknown);
  CHECK(a.level0_ground == b.level0_ground);
  for (size_t l = 0; l < a.levels.size(); ++l) {
    INFO("level " << l);
    check_same_csr(a.levels[l].A, b.levels[l].A);
    CHECK(a.levels[l].inv_diag == b.levels[l].inv_diag);
    CHECK(a.levels[l].cluster_ptr == b.levels[l].cluster_ptr);
    CHECK(a.levels[l].repeats == b.levels[l].repeats);
    CHECK(a.levels[l].weights == b.levels[l].weights);
  }
  CHECK(a.coarse.grounded == b.coarse.grounded);
  CHECK(a.coarse.vertex == b.coarse.vertex);
  check_same_csr(a.coarse.L, b.coarse.L);
  check_same_csr(a.coarse.Lt, b.coarse.Lt);
}

}  // namespace pgsim::test
