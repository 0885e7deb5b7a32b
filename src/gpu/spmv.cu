#include "gpu/spmv.hpp"

#include <cusparse.h>

#include <stdexcept>

#include "gpu/cuda_check.hpp"
#include "gpu/cusparse_library.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"

namespace pgsim::gpu {
namespace {

// ---- segSpMV -------------------------------------------------------------------------------

// One thread per stored element writes its product to shared memory; then one thread per
// segment adds its S products. A block covers kBlock elements = kBlock / S whole segments.
template <int S>
__global__ void seg_products(int64_t segments, const int32_t* __restrict__ col, const double* __restrict__ val,
                             const double* __restrict__ x, double* __restrict__ seg_sum) {
  __shared__ double prod[kBlock];
  const int64_t e = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  prod[threadIdx.x] = e < segments * S ? val[e] * x[col[e]] : 0.0;
  __syncthreads();
  if (threadIdx.x < kBlock / S) {
    const int64_t seg = int64_t(blockIdx.x) * (kBlock / S) + threadIdx.x;
    double s = 0;
#pragma unroll
    for (int k = 0; k < S; ++k) s += prod[threadIdx.x * S + k];
    if (seg < segments) seg_sum[seg] = s;
  }
}

// The per-row reduction the thesis left on the host: y_i = sum of row i's segment sums.
__global__ void seg_rows(int32_t rows, const int32_t* __restrict__ seg_ptr, const double* __restrict__ seg_sum,
                         double* __restrict__ y) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= rows) return;
  double s = 0;
  for (int32_t k = seg_ptr[i]; k < seg_ptr[i + 1]; ++k) s += seg_sum[k];
  y[i] = s;
}

class SegSpmv final : public DeviceSpmv {
 public:
  SegSpmv(const CsrMatrix& A, int seg_len) : rows_(A.rows), seg_len_(seg_len) {
    std::vector<int32_t> seg_ptr(size_t(A.rows) + 1, 0);
    for (int32_t i = 0; i < A.rows; ++i)
      seg_ptr[i + 1] = seg_ptr[i] + (A.ptr[i + 1] - A.ptr[i] + seg_len - 1) / seg_len;
    segments_ = seg_ptr.back();
    // Padding: value 0 times x[row] (a column the row already reads, so no extra cache line).
    std::vector<int32_t> col(size_t(segments_) * seg_len);
    std::vector<double> val(col.size(), 0.0);
    for (int32_t i = 0; i < A.rows; ++i) {
      size_t out = size_t(seg_ptr[i]) * seg_len, end = size_t(seg_ptr[i + 1]) * seg_len;
      for (int32_t k = A.ptr[i]; k < A.ptr[i + 1]; ++k, ++out) {
        col[out] = A.col[k];
        val[out] = A.val[k];
      }
      for (; out < end; ++out) col[out] = i;
    }
    padding_ = col.empty() ? 0.0 : 1.0 - double(A.nnz()) / double(col.size());
    seg_ptr_ = DeviceBuffer<int32_t>(seg_ptr);
    col_ = DeviceBuffer<int32_t>(col);
    val_ = DeviceBuffer<double>(val);
    seg_sum_ = DeviceBuffer<double>(size_t(segments_));
  }
  void multiply(const double* x, double* y, cudaStream_t stream) override {
    if (rows_ == 0) return;
    if (segments_ > 0) {
      auto products = seg_len_ == 4 ? seg_products<4> : seg_len_ == 8 ? seg_products<8> : seg_products<16>;
      products<<<blocks_for(int64_t(segments_) * seg_len_), kBlock, 0, stream>>>(segments_, col_.data(), val_.data(),
                                                                                  x, seg_sum_.data());
      PGSIM_CUDA_LAUNCH();
    }
    seg_rows<<<blocks_for(rows_), kBlock, 0, stream>>>(rows_, seg_ptr_.data(), seg_sum_.data(), y);
    PGSIM_CUDA_LAUNCH();
  }
  SpmvLayout layout() const override { return SpmvLayout::seg; }
  std::string detail() const override {
    return "S=" + std::to_string(seg_len_) + ", " + std::to_string(int(padding_ * 100 + 0.5)) + "% padding";
  }
  size_t matrix_bytes() const override {
    return seg_ptr_.size() * 4 + col_.size() * 4 + val_.size() * 8 + seg_sum_.size() * 8;
  }

 private:
  int32_t rows_;
  int seg_len_;
  int32_t segments_ = 0;
  double padding_ = 0;
  DeviceBuffer<int32_t> seg_ptr_, col_;
  DeviceBuffer<double> val_, seg_sum_;
};

// The segment length (4, 8 or 16) that moves the fewest bytes: padded elements (value and
// column, 12 bytes) plus one segment sum written and read back (16 bytes).
int segment_length(const CsrMatrix& A) {
  int best = 4;
  double best_bytes = 1e300;
  for (int s : {4, 8, 16}) {
    double segments = 0;
    for (int32_t i = 0; i < A.rows; ++i) segments += (A.ptr[i + 1] - A.ptr[i] + s - 1) / s;
    const double bytes = segments * s * 12 + segments * 16;
    if (bytes < best_bytes) {
      best_bytes = bytes;
      best = s;
    }
  }
  return best;
}

// ---- CSR-vector ----------------------------------------------------------------------------

template <int W>
__global__ void csr_vector(int32_t rows, const int32_t* __restrict__ ptr, const int32_t* __restrict__ col,
                           const double* __restrict__ val, const double* __restrict__ x, double* __restrict__ y) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int32_t i = int32_t(t / W);
  const int lane = int(t % W);
  double s = 0;
  if (i < rows)
    for (int32_t k = ptr[i] + lane; k < ptr[i + 1]; k += W) s += val[k] * x[col[k]];
  s = group_sum<W>(s);  // all lanes of the warp take part, also those past the last row
  if (lane == 0 && i < rows) y[i] = s;
}

class CsrVectorSpmv final : public DeviceSpmv {
 public:
  explicit CsrVectorSpmv(const CsrMatrix& A) : A_(staged_copy(A)) {
    double mean = A.rows ? double(A.nnz()) / A.rows : 0.0;
    lanes_ = mean <= 3 ? 2 : mean <= 6 ? 4 : mean <= 12 ? 8 : mean <= 24 ? 16 : 32;
  }
  void multiply(const double* x, double* y, cudaStream_t stream) override {
    if (A_.rows == 0) return;
    auto kernel = lanes_ == 2    ? csr_vector<2>
                  : lanes_ == 4  ? csr_vector<4>
                  : lanes_ == 8  ? csr_vector<8>
                  : lanes_ == 16 ? csr_vector<16>
                                 : csr_vector<32>;
    kernel<<<blocks_for(int64_t(A_.rows) * lanes_), kBlock, 0, stream>>>(A_.rows, A_.ptr.data(), A_.col.data(),
                                                                         A_.val.data(), x, y);
    PGSIM_CUDA_LAUNCH();
  }
  SpmvLayout layout() const override { return SpmvLayout::csr; }
  std::string detail() const override { return "W=" + std::to_string(lanes_) + " lanes per row"; }
  size_t matrix_bytes() const override { return A_.ptr.size() * 4 + A_.col.size() * 4 + A_.val.size() * 8; }
  std::optional<DeviceCsrView> csr() const override { return A_.view(); }

 private:
  DeviceCsr A_;  // staged up (host_staging.hpp)
  int lanes_ = 4;
};

// ---- cuSPARSE ------------------------------------------------------------------------------

class CusparseSpmv final : public DeviceSpmv {
 public:
  explicit CusparseSpmv(const CsrMatrix& A) : rows_(A.rows), ptr_(A.ptr), col_(A.col), val_(A.val) {
    PGSIM_CUSPARSE(cusparse().Create(&handle_));
    PGSIM_CUSPARSE(cusparse().CreateCsr(&mat_, A.rows, A.rows, A.nnz(), ptr_.data(), col_.data(), val_.data(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    DeviceBuffer<double> probe(size_t(A.rows > 0 ? A.rows : 1));
    PGSIM_CUSPARSE(cusparse().CreateDnVec(&x_, A.rows, probe.data(), CUDA_R_64F));
    PGSIM_CUSPARSE(cusparse().CreateDnVec(&y_, A.rows, probe.data(), CUDA_R_64F));
    size_t bytes = 0;
    const double one = 1, zero = 0;
    PGSIM_CUSPARSE(cusparse().SpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &zero, y_,
                                           CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG1, &bytes));
    work_ = DeviceBuffer<char>(bytes);
  }
  ~CusparseSpmv() override {
    cusparse().DestroyDnVec(y_);
    cusparse().DestroyDnVec(x_);
    cusparse().DestroySpMat(mat_);
    cusparse().Destroy(handle_);
  }
  void multiply(const double* x, double* y, cudaStream_t stream) override {
    if (rows_ == 0) return;
    const double one = 1, zero = 0;
    PGSIM_CUSPARSE(cusparse().SetStream(handle_, stream));
    PGSIM_CUSPARSE(cusparse().DnVecSetValues(x_, const_cast<double*>(x)));
    PGSIM_CUSPARSE(cusparse().DnVecSetValues(y_, y));
    PGSIM_CUSPARSE(cusparse().SpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &zero, y_, CUDA_R_64F,
                                CUSPARSE_SPMV_CSR_ALG1, work_.data()));
  }
  SpmvLayout layout() const override { return SpmvLayout::cusparse; }
  std::string detail() const override { return "CSR_ALG1"; }
  size_t matrix_bytes() const override { return ptr_.size() * 4 + col_.size() * 4 + val_.size() * 8; }
  std::optional<DeviceCsrView> csr() const override { return DeviceCsrView{rows_, ptr_.data(), col_.data(), val_.data()}; }

 private:
  int32_t rows_;
  DeviceBuffer<int32_t> ptr_, col_;
  DeviceBuffer<double> val_;
  DeviceBuffer<char> work_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
};

}  // namespace

std::string layout_name(SpmvLayout layout) {
  switch (layout) {
    case SpmvLayout::seg: return "seg";
    case SpmvLayout::csr: return "csr";
    case SpmvLayout::cusparse: return "cusparse";
  }
  return "?";
}

SpmvLayout parse_layout(const std::string& name) {
  for (auto l : all_layouts())
    if (layout_name(l) == name) return l;
  throw std::invalid_argument("unknown SpMV layout '" + name + "' (seg, csr or cusparse)");
}

std::vector<SpmvLayout> all_layouts() { return {SpmvLayout::seg, SpmvLayout::csr, SpmvLayout::cusparse}; }

std::unique_ptr<DeviceSpmv> make_device_spmv(SpmvLayout layout, const CsrMatrix& A) {
  switch (layout) {
    case SpmvLayout::seg: return std::make_unique<SegSpmv>(A, segment_length(A));
    case SpmvLayout::csr: return std::make_unique<CsrVectorSpmv>(A);
    case SpmvLayout::cusparse: return std::make_unique<CusparseSpmv>(A);
  }
  throw std::invalid_argument("unknown SpMV layout");
}

void load_spmv_kernels() { load_kernels(csr_vector<2>, csr_vector<4>, csr_vector<8>, csr_vector<16>, csr_vector<32>); }

}  // namespace pgsim::gpu
