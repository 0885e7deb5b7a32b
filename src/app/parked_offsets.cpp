#include "app/parked_offsets.hpp"

#include <algorithm>
#include <cstring>

#include "mna/touched_vector.hpp"

namespace pgsim {
namespace {

constexpr int64_t kBlock = 65536;  // entries per block of the parallel passes

bool is_plus_zero(double v) {
  const double zero = 0.0;
  return std::memcmp(&v, &zero, sizeof v) == 0;
}

}  // namespace

ParkedOffsets park_offsets(FillVector<double>& offsets) {
  ParkedOffsets p;
  p.size = offsets.size();
  const int64_t n = int64_t(p.size), blocks = (n + kBlock - 1) / kBlock;
  // at[b + 1]: block b's entries to keep, then (summed) where they go.
  std::vector<int64_t> at(size_t(blocks) + 1, 0);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) at[size_t(b) + 1] += !is_plus_zero(offsets[size_t(i)]);
  for (size_t b = 1; b < at.size(); ++b) at[b] += at[b - 1];
  p.index.resize(size_t(at.back()));
  p.value.resize(size_t(at.back()));
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    size_t k = size_t(at[size_t(b)]);
    for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i)
      if (!is_plus_zero(offsets[size_t(i)])) {
        p.index[k] = uint32_t(i);
        p.value[k++] = offsets[size_t(i)];
      }
  }
  FillVector<double>().swap(offsets);
  return p;
}

void restore_offsets(ParkedOffsets& parked, FillVector<double>& offsets) {
  size_for_overwrite(offsets, parked.size);
  const auto n = int64_t(parked.size);
#pragma omp parallel for schedule(static, 4096)
  for (int64_t i = 0; i < n; ++i) offsets[size_t(i)] = 0.0;
  for (size_t k = 0; k < parked.index.size(); ++k) offsets[parked.index[k]] = parked.value[k];
  parked = ParkedOffsets();
}

}  // namespace pgsim
