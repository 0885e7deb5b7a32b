#pragma once
// MatrixMarket text for the reduced system (issue 9), so other solvers can be run on exactly
// the problem pgsim solves. Values are written in the shortest form that reads back to the
// same double, so a round trip is bit for bit.
#include <string>
#include <vector>

#include "mna/csr.hpp"
#include "mna/parallel_text.hpp"

namespace pgsim {

// Both write on all threads (mna/parallel_text.hpp), the same bytes for any thread count.
// "coordinate real symmetric": the lower triangle of a symmetric matrix, 1-based, row by row.
void write_matrix_market(const CsrMatrix& symmetric, const TextSink& sink);
// "array real general": one column.
void write_matrix_market(const std::vector<double>& column, const TextSink& sink);

// The readers accept what the writers produce (and other files of the same two kinds), and
// throw InputError naming the file and line otherwise. The matrix comes back with both
// triangles, sorted columns and duplicates summed, as reduce() stores it.
CsrMatrix read_matrix_market_symmetric(const std::string& path);
std::vector<double> read_matrix_market_column(const std::string& path);

}  // namespace pgsim
