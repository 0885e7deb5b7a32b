#pragma once
// Sparse triangular solves T x = b on the device, one interface over five methods:
//   syncfree  warp per row, no barriers: a row waits on the x entries it needs, which start as
//             a "pending" NaN (Liu et al., Euro-Par 2016, CSR variant);
//   thread    thread per row, no preprocessing, deadlock-free within a warp (CapelliniSpTRSV,
//             Su et al., ICPP 2020), waiting on x entries the same way;
//   colored   one launch per block of contiguous independent rows (one block per colour once
//             the matrix is colour-ordered; see pcg/triangular.hpp color_order);
//   levelset  one launch per level of the dependency graph;
//   cusparse  cuSPARSE SpSV, the vendor baseline;
//   auto      syncfree or thread by CapelliniSpTRSV's parallel-granularity indicator.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "mna/csr.hpp"
#include "pcg/triangular.hpp"

namespace pgsim::gpu {

enum class TrsvMethod { syncfree, thread, colored, levelset, cusparse, automatic };

// "syncfree", ..., "auto"; parse throws InputError for any other name.
std::vector<std::string> trsv_method_names();
TrsvMethod parse_trsv_method(const std::string& name);
std::string to_string(TrsvMethod method);

class SpTrsv {
 public:
  // Uploads T (a triangle as check_triangle() demands; throws std::invalid_argument otherwise)
  // and prepares `method`.
  SpTrsv(const CsrMatrix& T, Triangle tri, TrsvMethod method);
  ~SpTrsv();
  SpTrsv(SpTrsv&&) noexcept;
  SpTrsv& operator=(SpTrsv&&) noexcept;

  // x = T^{-1} b; b and x are device arrays of T.rows entries that must not overlap (the
  // sync-free methods first fill x with a "pending" mark). Work is
  // queued on `stream` with no host synchronization; calls on one object must share a stream.
  void solve(const double* b, double* x, cudaStream_t stream);

  TrsvMethod method() const;       // the method in use (auto resolved)
  int32_t launches() const;        // kernel launches per solve (levels, blocks; 1 for sync-free)
  double analysis_seconds() const; // the method's preprocessing: everything but the CSR upload

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pgsim::gpu
