#pragma once
// The GPU coarse correction's steps (gpu/two_level_device.hpp) on the host, over the same
// operators (dist/coarse_operators.hpp) and rows of E^{-1}: the reference the device is checked
// against (tests/test_gpu_halo.cpp, one rank) and that is checked against the CPU operator
// (tests/dist_two_level_check.cpp, under mpirun). `sum(c)`: the sum over ranks of N_c doubles,
// in place; `local(u, z)`: z = M u.
#include <cstddef>
#include <vector>

#include "dist/coarse_operators.hpp"

namespace pgsim::test {

template <class Sum, class Local>
std::vector<double> coarse_sequence(const dist::CoarseOperators& op, const std::vector<double>& inverse_rows,
                                    const std::vector<double>& r, Sum&& sum, Local&& local) {
  const auto N = static_cast<size_t>(op.unknowns);
  const auto rows_times = [&](const std::vector<double>& c, size_t rows) {  // the first `rows` rows of E^{-1} times c
    std::vector<double> y(rows, 0.0);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < N; ++j) y[i] += inverse_rows[i * N + j] * c[j];
    return y;
  };
  std::vector<double> c(N, 0.0), u(r.size()), z(r.size());
  dist::own_sums(op, r.data(), false, c.data() + op.first);
  sum(c);
  const std::vector<double> y1 = rows_times(c, size_t(op.positions()));
  dist::subtract_gz(op, r.data(), y1.data(), u.data());
  local(u, z);
  dist::gz_transposed_times(op, z.data(), c.data());
  sum(c);
  const std::vector<double> y2 = rows_times(c, size_t(op.count));
  dist::add_coarse(op, y1.data(), y2.data(), z.data());
  return z;
}

}  // namespace pgsim::test
