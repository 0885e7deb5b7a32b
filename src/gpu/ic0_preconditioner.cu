#include "gpu/ic0_preconditioner.hpp"

#include <algorithm>

#include "cmg/galerkin.hpp"
#include "pcg/ic0.hpp"
#include "pcg/triangular.hpp"

namespace pgsim::gpu {
namespace {

constexpr int kBlock = 256;

// kScatter ? out[order[i]] = in[i] : out[i] = in[order[i]].
template <bool kScatter>
__global__ void permute_kernel(const int32_t* __restrict__ order, const double* __restrict__ in,
                               double* __restrict__ out, int32_t n) {
  const int32_t i = blockIdx.x * kBlock + threadIdx.x;
  if (i >= n) return;
  if (kScatter)
    out[order[i]] = in[i];
  else
    out[i] = in[order[i]];
}

template <bool kScatter>
void permute(const int32_t* order, const double* in, double* out, int32_t n, cudaStream_t stream) {
  permute_kernel<kScatter><<<static_cast<unsigned>((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(order, in, out, n);
  PGSIM_CUDA_LAUNCH();
}

}  // namespace

Ic0DevicePreconditioner::Ic0DevicePreconditioner(const CsrMatrix& G, TrsvMethod method)
    : n_(G.rows), y_(static_cast<size_t>(G.rows)) {
  Ic0Factor f;
  if (method == TrsvMethod::colored) {
    const std::vector<int32_t> color = greedy_coloring(G);
    colors_ = color.empty() ? 0 : *std::max_element(color.begin(), color.end()) + 1;
    const std::vector<int32_t> order = color_order(color);
    f = ic0_factor(permute_symmetric(G, inverse_permutation(order)));
    order_.emplace(order);
    r_ordered_ = DeviceBuffer<double>(static_cast<size_t>(n_));
    z_ordered_ = DeviceBuffer<double>(static_cast<size_t>(n_));
  } else {
    f = ic0_factor(G);
  }
  lower_ = std::make_unique<SpTrsv>(f.L, Triangle::lower, method);
  upper_ = std::make_unique<SpTrsv>(f.Lt, Triangle::upper, method);
}

void Ic0DevicePreconditioner::apply(const double* r, double* z, cudaStream_t stream) {
  if (!order_) {
    lower_->solve(r, y_.data(), stream);
    upper_->solve(y_.data(), z, stream);
    return;
  }
  permute<false>(order_->data(), r, r_ordered_.data(), n_, stream);
  lower_->solve(r_ordered_.data(), y_.data(), stream);
  upper_->solve(y_.data(), z_ordered_.data(), stream);
  permute<true>(order_->data(), z_ordered_.data(), z, n_, stream);
}

}  // namespace pgsim::gpu
