#pragma once
// A symmetric matrix kept as its upper triangle, for a matrix that is needed again only much
// later: app/run.cpp holds the reduced system this way from chain elimination to the final
// residual check, about two thirds of the full CSR's bytes on a grid (at 5M netlist nodes 24
// against 37 B per node, through the CMG setup and the solve, the run's peak).
#include <cstdint>
#include <optional>
#include <vector>

#include "mna/csr.hpp"

namespace pgsim {

struct UpperTriangle {
  int32_t rows = 0;
  std::vector<int32_t> ptr{0};  // rows + 1 offsets
  std::vector<int32_t> col;     // row i's entries with column >= i, sorted
  std::vector<double> val;
};

// A: square, sorted columns. nullopt unless A is symmetric bit for bit (every entry (i, j) has an
// entry (j, i) of the same bits), the condition under which unpack_upper() gives A back exactly.
std::optional<UpperTriangle> pack_upper(const CsrMatrix& A);

// The full matrix pack_upper was given, array for array (rows sorted), for any thread count.
CsrMatrix unpack_upper(const UpperTriangle& U);

}  // namespace pgsim
