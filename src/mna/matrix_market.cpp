#include "mna/matrix_market.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "parser/input_error.hpp"

namespace pgsim {
namespace {

void append(std::string& out, int64_t i) {
  char text[24];
  out.append(text, std::to_chars(text, text + sizeof text, i).ptr);
}

// The shortest decimal that reads back as the same double (17 significant digits at most).
void append(std::string& out, double x) {
  char text[32];
  out.append(text, std::to_chars(text, text + sizeof text, x).ptr);
}

// Reads the banner, skips comments, and returns the size line's fields; `line` counts lines.
std::istringstream open_body(std::ifstream& in, const std::string& path, const std::string& want_banner,
                             unsigned& line) {
  if (!in) throw InputError("cannot open MatrixMarket file '" + path + "'");
  std::string text;
  std::getline(in, text);
  line = 1;
  std::string lowered = text;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lowered.rfind(want_banner, 0) != 0)
    throw ParseError(path, line, "expected the banner '" + want_banner + "', got '" + text.substr(0, 80) + "'");
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text[0] != '%') return std::istringstream(text);
  }
  throw ParseError(path, line, "no size line");
}

double read_double(std::istream& fields, const std::string& path, unsigned line) {
  std::string token;
  double x = 0;
  if (!(fields >> token)) throw ParseError(path, line, "missing value");
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), x);
  if (ec != std::errc() || end != token.data() + token.size() || !std::isfinite(x))
    throw ParseError(path, line, "'" + token + "' is not a finite number");
  return x;
}

}  // namespace

void write_matrix_market(const CsrMatrix& A, const TextSink& sink) {
  int64_t lower = 0;
#pragma omp parallel for reduction(+ : lower) schedule(static)
  for (int32_t i = 0; i < A.rows; ++i)
    for (int32_t k = A.ptr[i]; k < A.ptr[i + 1] && A.col[k] <= i; ++k) ++lower;
  std::string header = "%%MatrixMarket matrix coordinate real symmetric\n";
  for (int64_t field : {int64_t(A.rows), int64_t(A.rows), lower}) append(header, field), header += ' ';
  header.back() = '\n';
  sink(header);
  // Rows of a power grid hold about 3 lower entries of about 30 characters each.
  write_in_parallel(static_cast<size_t>(A.rows), chunk_items_for(100), [&](size_t begin, size_t end, std::string& out) {
    for (int32_t i = int32_t(begin); i < int32_t(end); ++i)
      for (int32_t k = A.ptr[i]; k < A.ptr[i + 1] && A.col[k] <= i; ++k) {
        append(out, int64_t(i) + 1);
        out += ' ';
        append(out, int64_t(A.col[k]) + 1);
        out += ' ';
        append(out, A.val[k]);
        out += '\n';
      }
  }, sink);
}

void write_matrix_market(const std::vector<double>& column, const TextSink& sink) {
  std::string header = "%%MatrixMarket matrix array real general\n";
  append(header, int64_t(column.size()));
  sink(header += " 1\n");
  write_in_parallel(column.size(), chunk_items_for(24), [&](size_t begin, size_t end, std::string& out) {
    for (size_t i = begin; i < end; ++i) append(out, column[i]), out += '\n';
  }, sink);
}

CsrMatrix read_matrix_market_symmetric(const std::string& path) {
  std::ifstream in(path);
  unsigned line = 0;
  std::istringstream size = open_body(in, path, "%%matrixmarket matrix coordinate real symmetric", line);
  int64_t rows = 0, cols = 0, entries = 0;
  if (!(size >> rows >> cols >> entries) || rows != cols || rows < 0 || rows > INT32_MAX || entries < 0)
    throw ParseError(path, line, "expected 'rows rows entries' for a square matrix");
  std::vector<std::pair<int32_t, std::pair<int32_t, double>>> triplets;  // (row, (col, value))
  triplets.reserve(static_cast<size_t>(2 * entries));
  std::string text;
  for (int64_t e = 0; e < entries; ++e) {
    if (!std::getline(in, text)) throw ParseError(path, line, "ends after " + std::to_string(e) + " entries");
    ++line;
    std::istringstream fields(text);
    int64_t i = 0, j = 0;
    if (!(fields >> i >> j) || i < 1 || j < 1 || i > rows || j > rows)
      throw ParseError(path, line, "expected 'row column value' within the size, got '" + text.substr(0, 80) + "'");
    const double x = read_double(fields, path, line);
    triplets.push_back({int32_t(i - 1), {int32_t(j - 1), x}});
    if (i != j) triplets.push_back({int32_t(j - 1), {int32_t(i - 1), x}});
  }
  std::sort(triplets.begin(), triplets.end(),
            [](auto& a, auto& b) { return a.first != b.first ? a.first < b.first : a.second.first < b.second.first; });
  CsrMatrix A;
  A.rows = int32_t(rows);
  A.ptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (size_t k = 0; k < triplets.size(); ++k) {
    const auto& [i, entry] = triplets[k];
    if (k > 0 && triplets[k - 1].first == i && triplets[k - 1].second.first == entry.first) {
      A.val.back() += entry.second;  // a repeated entry: MatrixMarket sums them
      continue;
    }
    A.col.push_back(entry.first);
    A.val.push_back(entry.second);
    ++A.ptr[i + 1];
  }
  for (int64_t i = 0; i < rows; ++i) A.ptr[i + 1] += A.ptr[i];
  return A;
}

std::vector<double> read_matrix_market_column(const std::string& path) {
  std::ifstream in(path);
  unsigned line = 0;
  std::istringstream size = open_body(in, path, "%%matrixmarket matrix array real general", line);
  int64_t rows = 0, cols = 0;
  if (!(size >> rows >> cols) || rows < 0 || cols != 1) throw ParseError(path, line, "expected 'rows 1'");
  std::vector<double> column;
  column.reserve(static_cast<size_t>(rows));
  std::string text;
  for (int64_t i = 0; i < rows; ++i) {
    if (!std::getline(in, text)) throw ParseError(path, line, "ends after " + std::to_string(i) + " values");
    ++line;
    std::istringstream fields(text);
    column.push_back(read_double(fields, path, line));
  }
  return column;
}

}  // namespace pgsim
