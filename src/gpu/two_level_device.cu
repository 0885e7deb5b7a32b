#include "gpu/two_level_device.hpp"

#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/launch.cuh"

namespace pgsim::gpu {
namespace {

// The row a thread's warp works on (one warp per row), and the thread's lane in it.
struct WarpRow {
  int32_t row;
  int lane;
};
__device__ inline WarpRow warp_row() {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  return {int32_t(t / 32), int(t % 32)};
}

// y[i] = (row i of a dense row-major rows x n A) . x: one warp per row.
__global__ void dense_gemv(int32_t rows, int32_t n, const double* __restrict__ A, const double* __restrict__ x,
                           double* __restrict__ y) {
  const auto [i, lane] = warp_row();
  double s = 0;
  if (i < rows)
    for (int32_t j = lane; j < n; j += 32) s += A[int64_t(i) * n + j] * x[j];
  s = group_sum<32>(s);
  if (lane == 0 && i < rows) y[i] = s;
}

// Row p of a CSR matrix times x, one warp per row: s = sum_k val[k] x[col[k]]; with val null,
// the index list's sum, weighted by weight[col[k]] (null: 1): Z^T x and Z^T (w o x). Written
// to out[row_of[p]] (row_of null: out[p]) as scale * s, or added to it with `add`.
__global__ void rows_times(int32_t rows, const int32_t* __restrict__ ptr, const int32_t* __restrict__ col,
                           const double* __restrict__ val, const double* __restrict__ weight,
                           const double* __restrict__ x, const int32_t* __restrict__ row_of, double scale, bool add,
                           double* __restrict__ out) {
  const auto [p, lane] = warp_row();
  double s = 0;
  if (p < rows)
    for (int32_t k = ptr[p] + lane; k < ptr[p + 1]; k += 32) {
      const int32_t j = col[k];
      s += (val ? val[k] : weight ? weight[j] : 1.0) * x[j];
    }
  s = group_sum<32>(s);
  if (lane == 0 && p < rows) {
    double& o = out[row_of ? row_of[p] : p];
    o = add ? o + scale * s : scale * s;
  }
}

// u = r - own_coupling o y1[position] (u may be z's storage, never r's)
__global__ void subtract_own(int32_t n, const int32_t* __restrict__ position, const double* __restrict__ own_coupling,
                             const double* __restrict__ r, const double* __restrict__ y1, double* __restrict__ u) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int32_t p = position[i];
  u[i] = p >= 0 ? r[i] - own_coupling[i] * y1[p] : r[i];
}

// z += Z (y1 - y2), by position
__global__ void add_coarse(int32_t n, const int32_t* __restrict__ position, const double* __restrict__ y1,
                           const double* __restrict__ y2, double* __restrict__ z) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const int32_t p = position[i];
  if (p >= 0) z[i] += y1[p] - y2[p];
}

}  // namespace

DeviceTwoLevel::DeviceTwoLevel(std::unique_ptr<DevicePreconditioner> local, const CoarseCorrectionData& data,
                               DeviceScalarSum& across_ranks)
    : local_(std::move(local)),
      across_ranks_(across_ranks),
      rows_(data.operators.rows()),
      unknowns_(data.operators.unknowns),
      first_(data.operators.first),
      count_(data.operators.count),
      positions_(data.operators.positions()),
      rest_rows_count_(data.operators.rest.rows),
      position_of_row_(data.operators.position_of_row),
      member_ptr_(data.operators.member_ptr),
      members_(data.operators.members),
      rest_rows_(data.operators.rest_rows),
      rest_ptr_(data.operators.rest.ptr),
      rest_col_(data.operators.rest.col),
      restt_ptr_(data.operators.rest_transposed.ptr),
      restt_col_(data.operators.rest_transposed.col),
      own_coupling_(data.operators.own_coupling),
      rest_val_(data.operators.rest.val),
      restt_val_(data.operators.rest_transposed.val),
      inverse_rows_(data.inverse_rows),
      c_(size_t(data.operators.unknowns)),
      y1_(size_t(data.operators.positions())),
      y2_(size_t(data.operators.count)) {
  if (unknowns_ <= 0 || data.inverse_rows.size() != size_t(positions_) * size_t(unknowns_) ||
      data.operators.rest_transposed.rows != unknowns_)
    throw std::invalid_argument("DeviceTwoLevel: no coarse unknowns, or operators of the wrong size");
}

void DeviceTwoLevel::apply(const double* r, double* z, cudaStream_t stream) {
  // Launches of no threads are skipped (a rank may own no coarse unknown, or have no rest row).
  const auto warps = [](int32_t rows) { return blocks_for(int64_t(rows) * 32); };
  PGSIM_CUDA(cudaMemsetAsync(c_.data(), 0, c_.size() * sizeof(double), stream));
  if (count_ > 0) {
    rows_times<<<warps(count_), kBlock, 0, stream>>>(count_, member_ptr_.data(), members_.data(), nullptr, nullptr, r,
                                                    nullptr, 1.0, false, c_.data() + first_);
    PGSIM_CUDA_LAUNCH();
  }
  across_ranks_.sum(c_.data(), unknowns_, stream);
  if (positions_ > 0) {
    dense_gemv<<<warps(positions_), kBlock, 0, stream>>>(positions_, unknowns_, inverse_rows_.data(), c_.data(),
                                                        y1_.data());
    PGSIM_CUDA_LAUNCH();
  }
  if (rows_ > 0) {
    subtract_own<<<blocks_for(rows_), kBlock, 0, stream>>>(rows_, position_of_row_.data(), own_coupling_.data(), r,
                                                          y1_.data(), z);
    PGSIM_CUDA_LAUNCH();
  }
  if (rest_rows_count_ > 0) {
    // u[rest_rows[k]] -= rest's row k . y1 (distinct rows: no two warps write one entry)
    rows_times<<<warps(rest_rows_count_), kBlock, 0, stream>>>(rest_rows_count_, rest_ptr_.data(), rest_col_.data(),
                                                              rest_val_.data(), nullptr, y1_.data(), rest_rows_.data(),
                                                              -1.0, true, z);
    PGSIM_CUDA_LAUNCH();
  }
  local_->apply(z, z, stream);  // in place: u is z's storage
  rows_times<<<warps(unknowns_), kBlock, 0, stream>>>(unknowns_, restt_ptr_.data(), restt_col_.data(),
                                                     restt_val_.data(), nullptr, z, nullptr, 1.0, false, c_.data());
  PGSIM_CUDA_LAUNCH();
  if (count_ > 0) {
    rows_times<<<warps(count_), kBlock, 0, stream>>>(count_, member_ptr_.data(), members_.data(), nullptr,
                                                    own_coupling_.data(), z, nullptr, 1.0, true, c_.data() + first_);
    PGSIM_CUDA_LAUNCH();
  }
  across_ranks_.sum(c_.data(), unknowns_, stream);
  if (count_ > 0) {
    dense_gemv<<<warps(count_), kBlock, 0, stream>>>(count_, unknowns_, inverse_rows_.data(), c_.data(), y2_.data());
    PGSIM_CUDA_LAUNCH();
  }
  if (rows_ > 0) {
    add_coarse<<<blocks_for(rows_), kBlock, 0, stream>>>(rows_, position_of_row_.data(), y1_.data(), y2_.data(), z);
    PGSIM_CUDA_LAUNCH();
  }
}

}  // namespace pgsim::gpu
