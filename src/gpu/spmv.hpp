#pragma once
// y = A x on the device in three layouts, so the fastest can be chosen per matrix:
//   seg       segSpMV (He et al. 2014; thesis chapter 6): rows cut into fixed power-of-two
//             segments, zero-padded; products in shared memory, one thread sums a segment, then
//             a second kernel sums each row's segments on the device.
//   csr       CSR-vector: a group of W lanes per row (W from the mean row length), shuffle sum.
//   cusparse  cusparseSpMV on CSR, the vendor baseline.
// Each uploads its own copy of the matrix once; multiply() only launches kernels on `stream`.
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/instance_id.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {

enum class SpmvLayout { seg, csr, cusparse };

std::string layout_name(SpmvLayout layout);
SpmvLayout parse_layout(const std::string& name);  // throws std::invalid_argument
std::vector<SpmvLayout> all_layouts();

class DeviceSpmv {
 public:
  virtual ~DeviceSpmv() = default;
  virtual void multiply(const double* x, double* y, cudaStream_t stream) = 0;
  virtual SpmvLayout layout() const = 0;
  virtual std::string detail() const = 0;  // e.g. "S=8, 12% padding"
  virtual size_t matrix_bytes() const = 0;  // device bytes of the matrix in this layout
  // The matrix as uploaded, where the layout keeps it as CSR (csr, cusparse); else nothing.
  virtual std::optional<DeviceCsrView> csr() const { return std::nullopt; }
  InstanceId instance;                        // what GpuPcg keys its captured graphs on
};

std::unique_ptr<DeviceSpmv> make_device_spmv(SpmvLayout layout, const CsrMatrix& A);

// Loads the csr layout's kernels, every lane width (launch.cuh load_kernels).
void load_spmv_kernels();

}  // namespace pgsim::gpu
