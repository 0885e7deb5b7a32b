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

// Either array type: the entries of offsets other than +0.0, then offsets freed.
template <class Vector>
ParkedOffsets park(Vector& offsets) {
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
  Vector().swap(offsets);
  return p;
}

template <class Vector>
void restore(ParkedOffsets& parked, Vector& offsets) {
  assign_touched(offsets, parked.size, 0.0);  // +0.0 written by all threads
  const auto kept = int64_t(parked.index.size());
#pragma omp parallel for schedule(static, 4096) if (kept > kBlock)
  for (int64_t k = 0; k < kept; ++k) offsets[parked.index[size_t(k)]] = parked.value[size_t(k)];
  parked = ParkedOffsets();
}

}  // namespace

ParkedOffsets park_offsets(FillVector<double>& offsets) { return park(offsets); }
ParkedOffsets park_offsets(std::vector<double>& offsets) { return park(offsets); }
void restore_offsets(ParkedOffsets& parked, FillVector<double>& offsets) { restore(parked, offsets); }
void restore_offsets(ParkedOffsets& parked, std::vector<double>& offsets) { restore(parked, offsets); }

}  // namespace pgsim
