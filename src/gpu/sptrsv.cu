#include "gpu/sptrsv.hpp"

#include <chrono>
#include <optional>

#include "gpu/cusparse_library.hpp"
#include "gpu/cusparse_spsv.hpp"
#include "gpu/device_buffer.hpp"
#include "parser/input_error.hpp"

namespace pgsim::gpu {
namespace {

constexpr int kBlock = 256;
constexpr int kWarpsPerBlock = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;
// Above this parallel granularity thread-per-row beats warp-per-row (Su et al. 2020, sec. 5.2,
// where the crossover is 0.7). Ours is lower: on every factor of trsv_bench (granularity 0.63
// to 1.13, H100) the thread kernel won, by 2.1x on ibmpg1 in natural order (0.63).
constexpr double kThreadGranularity = 0.5;

struct DevTri {
  int32_t n;
  const int32_t* ptr;
  const int32_t* col;
  const double* val;
};

// The k-th row in processing order: lower triangles top down, upper ones bottom up, so that a
// row's dependencies always come earlier in processing order.
template <Triangle T>
__device__ __forceinline__ int32_t row_at(int32_t n, int32_t k) {
  return T == Triangle::lower ? k : n - 1 - k;
}

// Row i: its diagonal's position and its off-diagonal range [begin, end).
template <Triangle T>
__device__ __forceinline__ void row_parts(const DevTri& A, int32_t i, int32_t& diag, int32_t& begin, int32_t& end) {
  const int32_t lo = A.ptr[i], hi = A.ptr[i + 1];
  diag = T == Triangle::lower ? hi - 1 : lo;
  begin = T == Triangle::lower ? lo : lo + 1;
  end = T == Triangle::lower ? hi - 1 : hi;
}

// An unsolved x entry holds kPending, a NaN bit pattern (sign set, all payload bits set) that the
// solve never stores (store_solved swaps it for the canonical NaN). The value is its own ready
// flag: one relaxed 64-bit store publishes it, one relaxed load both tests and reads it. A
// separate flag would need a release fence between the value and the flag on the writer's side
// and a second dependent load on the reader's, on the critical path of every dependency.
constexpr unsigned long long kPending = ~0ull;

__device__ __forceinline__ double load_relaxed(const double* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p));
  return __longlong_as_double(static_cast<long long>(v));
}
__device__ __forceinline__ bool pending(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v)) == kPending;
}
__device__ __forceinline__ void store_solved(double* p, double v) {
  unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(v));
  if (bits == kPending) bits = 0x7ff8000000000000ull;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(bits) : "memory");
}

// Sync-free scheduling: every block takes a ticket (one atomic per block: per-warp tickets made
// the single counter the bottleneck), handed out in the order blocks start, and solves the rows
// of place ticket % blocks in processing order. A row therefore only ever waits on rows of
// blocks that are already running: no deadlock whatever order the hardware starts blocks in.
// The counter is never reset (the modulo), so graph replays need nothing but the x reset.
__device__ __forceinline__ int32_t take_place(unsigned long long* tickets, unsigned long long blocks) {
  __shared__ unsigned long long ticket;
  if (threadIdx.x == 0) ticket = atomicAdd(tickets, 1ull);
  __syncthreads();
  return static_cast<int32_t>(ticket % blocks);
}

// Liu et al.: one warp per row; lanes split the row's entries, each waiting for its column.
template <Triangle T>
__global__ void __launch_bounds__(kBlock)
    syncfree_warp_kernel(DevTri A, const double* __restrict__ b, double* x, unsigned long long* tickets,
                         unsigned long long blocks) {
  const int32_t place = take_place(tickets, blocks);
  const int32_t k = place * kWarpsPerBlock + static_cast<int32_t>(threadIdx.x / 32);
  if (k >= A.n) return;  // the whole warp
  const int lane = threadIdx.x & 31;
  const int32_t i = row_at<T>(A.n, k);
  int32_t diag, begin, end;
  row_parts<T>(A, i, diag, begin, end);
  double s = 0;
  for (int32_t q = begin + lane; q < end; q += 32) {
    const int32_t j = A.col[q];
    double xj;
    while (pending(xj = load_relaxed(x + j))) {
    }
    s += A.val[q] * xj;
  }
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(kFullMask, s, off);
  if (lane == 0) store_solved(x + i, (b[i] - s) / A.val[diag]);
}

// CapelliniSpTRSV: one thread per row, consecutive rows in a block. Each round of the loop a
// thread tries its next entry and, once its row is complete, publishes it inside the loop body:
// a row is never held back until the rest of its warp leaves the loop, so a row waiting on a row
// of its own warp cannot starve it, with or without independent thread scheduling.
template <Triangle T>
__global__ void __launch_bounds__(kBlock)
    syncfree_thread_kernel(DevTri A, const double* __restrict__ b, double* x, unsigned long long* tickets,
                           unsigned long long blocks) {
  const int32_t k = take_place(tickets, blocks) * kBlock + static_cast<int32_t>(threadIdx.x);
  if (k >= A.n) return;
  const int32_t i = row_at<T>(A.n, k);
  int32_t diag, q, end;
  row_parts<T>(A, i, diag, q, end);
  double s = 0;
  for (;;) {
    if (q < end) {
      const double xj = load_relaxed(x + A.col[q]);
      if (!pending(xj)) {
        s += A.val[q] * xj;
        ++q;
      }
    }
    if (q == end) {
      store_solved(x + i, (b[i] - s) / A.val[diag]);
      return;
    }
  }
}

// One level (rows listed in `rows`) or one block of contiguous rows: all independent, each
// thread solves one; the rows they need were solved by earlier launches.
template <Triangle T, bool kListed>
__global__ void __launch_bounds__(kBlock)
    independent_rows_kernel(DevTri A, const double* __restrict__ b, double* x, const int32_t* __restrict__ rows,
                            int32_t first, int32_t count) {
  const int32_t t = blockIdx.x * kBlock + threadIdx.x;
  if (t >= count) return;
  const int32_t i = kListed ? rows[first + t] : first + t;
  int32_t diag, begin, end;
  row_parts<T>(A, i, diag, begin, end);
  double s = 0;
  for (int32_t q = begin; q < end; ++q) s += A.val[q] * x[A.col[q]];
  x[i] = (b[i] - s) / A.val[diag];
}

unsigned blocks_for(int64_t threads) { return static_cast<unsigned>((threads + kBlock - 1) / kBlock); }

class CusparseHandle {
 public:
  CusparseHandle() { PGSIM_CUSPARSE(cusparse().Create(&h_)); }
  ~CusparseHandle() { cusparse().Destroy(h_); }
  CusparseHandle(const CusparseHandle&) = delete;
  CusparseHandle& operator=(const CusparseHandle&) = delete;
  cusparseHandle_t get() const { return h_; }

 private:
  cusparseHandle_t h_ = nullptr;
};

}  // namespace

std::vector<std::string> trsv_method_names() { return {"auto", "syncfree", "thread", "colored", "levelset", "cusparse"}; }

TrsvMethod parse_trsv_method(const std::string& name) {
  if (name == "syncfree") return TrsvMethod::syncfree;
  if (name == "thread") return TrsvMethod::thread;
  if (name == "colored") return TrsvMethod::colored;
  if (name == "levelset") return TrsvMethod::levelset;
  if (name == "cusparse") return TrsvMethod::cusparse;
  if (name == "auto") return TrsvMethod::automatic;
  throw InputError("unknown triangular-solve method '" + name + "' (auto, syncfree, thread, colored, levelset, cusparse)");
}

std::string to_string(TrsvMethod method) {
  switch (method) {
    case TrsvMethod::syncfree: return "syncfree";
    case TrsvMethod::thread: return "thread";
    case TrsvMethod::colored: return "colored";
    case TrsvMethod::levelset: return "levelset";
    case TrsvMethod::cusparse: return "cusparse";
    case TrsvMethod::automatic: return "auto";
  }
  return "?";
}

struct SpTrsv::Impl {
  Triangle tri;
  TrsvMethod method;
  DeviceCsr T;
  double analysis_seconds = 0;
  int32_t launches = 1;
  // sync-free
  DeviceBuffer<unsigned long long> tickets;
  unsigned long long blocks_per_solve = 0;
  // level-set: rows by level; colored: blocks of rows
  std::vector<int32_t> level_ptr;
  DeviceBuffer<int32_t> level_rows;
  RowBlocks blocks;
  // cuSPARSE
  std::optional<CusparseHandle> handle;
  std::optional<CusparseSpsv> vendor;

  Impl(const CsrMatrix& host, Triangle t, TrsvMethod m) : tri(t), method(m), T(host) {
    if (method == TrsvMethod::cusparse) handle.emplace();  // library start-up, not analysis
    PGSIM_CUDA(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    analyse(host);
    PGSIM_CUDA(cudaDeviceSynchronize());
    analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void analyse(const CsrMatrix& host) {
    if (host.rows == 0) return;  // nothing to solve; cuSPARSE would refuse the empty matrix
    if (method == TrsvMethod::automatic) {
      const LevelSets levels = level_sets(host, tri);
      method = parallel_granularity(host.rows, levels.count(), host.nnz()) > kThreadGranularity ? TrsvMethod::thread
                                                                                                : TrsvMethod::syncfree;
    }
    switch (method) {
      case TrsvMethod::syncfree:
      case TrsvMethod::thread: {
        tickets = DeviceBuffer<unsigned long long>(1);
        PGSIM_CUDA(cudaMemset(tickets.data(), 0, sizeof(unsigned long long)));
        blocks_per_solve = blocks_for(int64_t(host.rows) * (method == TrsvMethod::syncfree ? 32 : 1));
        break;
      }
      case TrsvMethod::levelset: {
        LevelSets levels = level_sets(host, tri);
        launches = levels.count();
        level_ptr = std::move(levels.ptr);
        level_rows = DeviceBuffer<int32_t>(levels.rows);
        break;
      }
      case TrsvMethod::colored:
        blocks = independent_blocks(host, tri);
        launches = blocks.count();
        break;
      case TrsvMethod::cusparse:
        vendor.emplace(handle->get(), T, tri);
        break;
      case TrsvMethod::automatic:
        break;
    }
  }

  template <Triangle kTri>
  void solve(const double* b, double* x, cudaStream_t stream) {
    const DevTri A{T.rows, T.ptr.data(), T.col.data(), T.val.data()};
    if (A.n == 0) return;
    switch (method) {
      case TrsvMethod::syncfree:
      case TrsvMethod::thread: {
        // Every entry of x pending, then the kernel publishes each as it is solved.
        PGSIM_CUDA(cudaMemsetAsync(x, 0xff, size_t(A.n) * sizeof(double), stream));
        const auto kernel = method == TrsvMethod::syncfree ? syncfree_warp_kernel<kTri> : syncfree_thread_kernel<kTri>;
        kernel<<<static_cast<unsigned>(blocks_per_solve), kBlock, 0, stream>>>(A, b, x, tickets.data(), blocks_per_solve);
        PGSIM_CUDA_LAUNCH();
        break;
      }
      case TrsvMethod::levelset:
        for (size_t l = 0; l + 1 < level_ptr.size(); ++l) {
          const int32_t count = level_ptr[l + 1] - level_ptr[l];
          independent_rows_kernel<kTri, true>
              <<<blocks_for(count), kBlock, 0, stream>>>(A, b, x, level_rows.data(), level_ptr[l], count);
          PGSIM_CUDA_LAUNCH();
        }
        break;
      case TrsvMethod::colored:
        for (int32_t k = 0; k < blocks.count(); ++k) {
          independent_rows_kernel<kTri, false>
              <<<blocks_for(blocks.size[k]), kBlock, 0, stream>>>(A, b, x, nullptr, blocks.first[k], blocks.size[k]);
          PGSIM_CUDA_LAUNCH();
        }
        break;
      case TrsvMethod::cusparse:
        vendor->solve(b, x, stream);
        break;
      case TrsvMethod::automatic:
        break;
    }
  }
};

SpTrsv::SpTrsv(const CsrMatrix& T, Triangle tri, TrsvMethod method) {
  check_triangle(T, tri);
  impl_ = std::make_unique<Impl>(T, tri, method);
}
SpTrsv::~SpTrsv() = default;
SpTrsv::SpTrsv(SpTrsv&&) noexcept = default;
SpTrsv& SpTrsv::operator=(SpTrsv&&) noexcept = default;

void SpTrsv::solve(const double* b, double* x, cudaStream_t stream) {
  if (impl_->tri == Triangle::lower)
    impl_->solve<Triangle::lower>(b, x, stream);
  else
    impl_->solve<Triangle::upper>(b, x, stream);
}

TrsvMethod SpTrsv::method() const { return impl_->method; }
int32_t SpTrsv::launches() const { return impl_->launches; }
double SpTrsv::analysis_seconds() const { return impl_->analysis_seconds; }

}  // namespace pgsim::gpu
