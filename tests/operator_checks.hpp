#pragma once
// Checks shared by the CMG tests (CPU cycle, Jacobi and Gauss-Seidel smoothers): the properties
// PCG needs of a preconditioner.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "pcg/preconditioner.hpp"
#include "test_util.hpp"

namespace pgsim::test {

inline double inner(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// M (n unknowns) is a fixed symmetric positive definite operator: x'My = y'Mx to 1e-12 relative
// and x'Mx > 0 on five random pairs, and applying it twice to one vector gives the same result
// (no state kept between applications).
inline void check_fixed_spd(const Preconditioner& M, size_t n) {
  for (uint32_t seed = 0; seed < 5; ++seed) {
    const std::vector<double> x = random_vector(n, 2 * seed), y = random_vector(n, 2 * seed + 1);
    std::vector<double> Mx(n), My(n);
    M.apply(x.data(), Mx.data());
    M.apply(y.data(), My.data());
    CHECK(std::fabs(inner(x, My) - inner(y, Mx)) <= 1e-12 * std::sqrt(inner(x, Mx) * inner(y, My)));
    CHECK(inner(x, Mx) > 0);
    CHECK(inner(y, My) > 0);
  }
  const std::vector<double> x = random_vector(n, 99);
  std::vector<double> z1(n), z2(n);
  M.apply(x.data(), z1.data());
  M.apply(x.data(), z2.data());
  CHECK(z1 == z2);
}

}  // namespace pgsim::test
