#pragma once
// The coarsest level's direct solve as a dense inverse (host side): built once from the
// Cholesky factor, applied on the device as one small dense matrix-vector product, which on a
// level of a few thousand vertices is a single short kernel instead of two long chains of
// dependent triangular-solve steps. Another coarse solver (a device SpTRSV on the factor) can
// replace it behind the same device call (see cmg_device.cu, coarse_solve).
#include <cstdint>
#include <vector>

#include "cmg/hierarchy.hpp"

namespace pgsim::gpu {

// Largest coarsest level accepted (the inverse is n^2 doubles).
constexpr int32_t kMaxDenseCoarse = 4096;

// Row-major n x n inverse of the coarsest Laplacian with the grounded vertex held at 0 (its row
// and column are zero), n = the coarsest level's vertex count. Throws std::invalid_argument when
// n > kMaxDenseCoarse or the factor does not match n.
std::vector<double> dense_coarse_inverse(const CoarseFactor& factor, int32_t n);

}  // namespace pgsim::gpu
