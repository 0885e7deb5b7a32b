#pragma once
// Compressed sparse row matrix, the one matrix layout shared by mna, cmg, pcg and gpu.
#include <cstdint>
#include <vector>

namespace pgsim {

struct CsrMatrix {
  int32_t rows = 0;
  std::vector<int32_t> ptr{0};  // rows + 1 offsets into col/val
  std::vector<int32_t> col;     // sorted within each row
  std::vector<double> val;

  int64_t nnz() const { return static_cast<int64_t>(col.size()); }
  // y = A x, rows in parallel.
  void multiply(const double* x, double* y) const;
  // The diagonal (zero where a row stores none).
  std::vector<double> diagonal() const;
};

}  // namespace pgsim
