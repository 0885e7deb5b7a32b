#include "gpu/device_stamp.hpp"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.hpp"
#include "gpu/device_algorithms.cuh"
#include "gpu/device_buffer.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"
#include "gpu/row_kernels.cuh"
#include "mna/reduce.hpp"
#include "mna/stopwatch.hpp"
#include "parser/input_error.hpp"

namespace pgsim::gpu {
namespace {

using dist::Contribution;
using dist::kCurrent;
using dist::kFixed;

// NodeSubset::contains() and count_below() (dist/node_subset.hpp) over its arrays.
__device__ bool subset_contains(const dist::SubsetArrays& s, uint32_t node) {
  const uint32_t k = node - s.base;
  return (k >> 6) < s.word_count && (s.words[k >> 6] >> (k & 63) & 1);
}
__device__ uint32_t subset_count_below(const dist::SubsetArrays& s, uint32_t node) {
  const uint32_t k = node - s.base;
  return s.ranks[k >> 6] + uint32_t(__popcll(s.words[k >> 6] & ((uint64_t(1) << (k & 63)) - 1)));
}

// SuperNodes::unknown_of() and offset_of() over its arrays on the device. A node that is neither
// the rank's nor one its elements stamp (SuperNodes throws std::logic_error) sets *missing.
struct DeviceNodes {
  dist::NodeLookup t;  // its pointers: device copies
  unsigned* missing;

  __device__ bool own(uint32_t node) const { return node - t.range_first < t.range_count; }
  __device__ int64_t foreign_index(uint32_t node) const {
    if (subset_contains(t.foreign, node)) return subset_count_below(t.foreign, node);
    atomicOr(missing, 1u);
    return -1;
  }
  __device__ int32_t unknown_of(uint32_t node) const {
    if (own(node)) return t.range_unknown[node - t.range_first];
    if (node == 0) return -1;
    const int64_t i = foreign_index(node);
    return i < 0 ? -1 : t.foreign_unknown[i];
  }
  __device__ double offset_of(uint32_t node) const {
    if (own(node)) return subset_contains(t.has_offset, node) ? t.range_offset[subset_count_below(t.has_offset, node)] : 0.0;
    if (node == 0) return 0.0;
    const int64_t i = foreign_index(node);
    return i < 0 ? 0.0 : t.foreign_offset[i];
  }
};

// This rank's rows among every rank's (unknown_begin: ranks + 1 entries).
struct RankRows {
  int32_t first = 0, count = 0;
  const int32_t* unknown_begin = nullptr;
  int ranks = 1;

  __device__ bool own(int32_t row) const { return uint32_t(row - first) < uint32_t(count); }
  __device__ int owner(int32_t row) const {  // owner_of_row(): the last q with unknown_begin[q] <= row
    int lo = 0, hi = ranks - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (unknown_begin[mid] <= row) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
};

// An element that stamps, its ends' unknowns (owned_rows.cpp's Ends).
struct Ends {
  int32_t up = -1, um = -1;
  double g = 0;  // its conductance; 0 for a current source
  bool current = false;
};

// owned_rows.cpp's stamped_ends(): whether e stamps; if so, x becomes its ends.
__device__ bool stamped_ends(const Element& e, const DeviceNodes& nodes, Ends& x) {
  x.current = e.kind == ElementKind::CurrentSource;
  x.g = x.current || e.kind != ElementKind::Resistor ? 0.0 : resistor_conductance(e.value);
  if (!x.current && !(x.g > 0)) return false;
  x.up = nodes.unknown_of(e.plus), x.um = nodes.unknown_of(e.minus);
  return true;
}

// e's records through emit(c), each row's in the order owned_rows.cpp's rows_of() and
// contributions_to() give them: the same values, the products unfused (__dmul_rn).
template <class Emit>
__device__ void element_records(const Element& e, const Ends& x, const DeviceNodes& nodes, Emit emit) {
  if (x.current) {  // a row holding both ends gets both terms, plus's first
    if (x.up >= 0) emit(Contribution{x.up, kCurrent, 0.0, -e.value});
    if (x.um >= 0) emit(Contribution{x.um, kCurrent, 0.0, e.value});
    return;
  }
  if (x.up == x.um) return;  // across a super-node: no current flows
  for (int side = 0; side < 2; ++side) {
    const bool plus = side == 0;
    const int32_t u = plus ? x.up : x.um, other = plus ? x.um : x.up;
    if (u < 0) continue;
    if (other >= 0 && nodes.t.offsets_zero) {
      emit(Contribution{u, other, x.g, -__dmul_rn(x.g, 0.0)});
      continue;
    }
    const double o_self = nodes.offset_of(plus ? e.plus : e.minus), o_other = nodes.offset_of(plus ? e.minus : e.plus);
    if (other >= 0) emit(Contribution{u, other, x.g, -__dmul_rn(x.g, __dsub_rn(o_self, o_other))});
    else emit(Contribution{u, kFixed, x.g, __dmul_rn(x.g, __dsub_rn(o_other, o_self))});
  }
}

// The super-nodes' first pass (dist/element_scan.hpp; super_nodes.cpp's host pass): merges[k]
// whether element k is a voltage source or a short (is_short() in DC: a 0-ohm resistor, an
// inductor), the other ranks' nodes of the stamping ones marked, has_source set by any source.
__global__ void scan_elements(const Element* elements, int64_t n, uint32_t range_first, uint32_t range_count,
                              uint32_t* merges, unsigned long long* foreign, unsigned* has_source) {
  const int64_t k = thread_index();
  if (k >= n) return;
  const Element& e = elements[k];
  if ((e.kind == ElementKind::VoltageSource || e.kind == ElementKind::CurrentSource) && !*has_source) atomicOr(has_source, 1u);
  const bool merging = merges_at_dc(e.kind, e.value) || e.kind == ElementKind::Inductor;
  merges[k] = merging;
  const bool stamping = e.kind == ElementKind::CurrentSource ||
                        (e.kind == ElementKind::Resistor && resistor_conductance(e.value) > 0);
  if (merging || !stamping) return;
  for (const uint32_t v : {e.plus, e.minus}) {
    const unsigned long long bit = 1ull << (v & 63);
    if (v != 0 && v - range_first >= range_count && !(foreign[v >> 6] & bit)) atomicOr(&foreign[v >> 6], bit);
  }
}

// The merging elements' numbers, ascending, and the elements themselves: at[k] (merges summed
// before k) is element k's place.
__global__ void list_merging(const Element* elements, const uint32_t* merges, const uint32_t* at, int64_t n,
                             uint32_t* merging, Element* merging_elements) {
  const int64_t k = thread_index();
  if (k >= n || !merges[k]) return;
  merging[at[k]] = uint32_t(k);
  merging_elements[at[k]] = elements[k];
}

// Element k's ends as global node ids (global[j - 1]: local node j's, 0 ground) and its line in
// the whole file (line_offset more in the top file, 0).
__global__ void renumber_elements(const Element* in, int64_t n, const uint32_t* global, uint32_t line_offset,
                                  Element* out) {
  const int64_t k = thread_index();
  if (k >= n) return;
  Element e = in[k];
  e.plus = e.plus == 0 ? 0 : global[e.plus - 1];
  e.minus = e.minus == 0 ? 0 : global[e.minus - 1];
  if (e.file == 0) e.line += line_offset;
  out[k] = e;
}

constexpr int kOtherShift = 32;  // an element's count of records for other ranks' rows, above its own rows'

__global__ void count_records(const Element* elements, int64_t n, DeviceNodes nodes, RankRows rows, uint64_t* counts) {
  const int64_t k = thread_index();
  if (k >= n) return;
  uint64_t c = 0;
  Ends x;
  if (stamped_ends(elements[k], nodes, x))
    element_records(elements[k], x, nodes, [&](const Contribution& r) { c += rows.own(r.row) ? 1 : uint64_t(1) << kOtherShift; });
  counts[k] = c;
}

// Element k's records at at[k] (count_records' counts summed before k): this rank's rows' into
// `own`, other ranks' into `other` with their rank in other_rank; either may be null (not written).
__global__ void write_records(const Element* elements, int64_t n, DeviceNodes nodes, RankRows rows, const uint64_t* at,
                              Contribution* own, Contribution* other, int32_t* other_rank) {
  const int64_t k = thread_index();
  if (k >= n) return;
  Ends x;
  if (!stamped_ends(elements[k], nodes, x)) return;
  uint64_t o = at[k] & 0xffffffffu, r = at[k] >> kOtherShift;
  element_records(elements[k], x, nodes, [&](const Contribution& c) {
    if (rows.own(c.row)) {
      if (own) own[o] = c;
      ++o;
    } else {
      if (other) other[r] = c, other_rank[r] = rows.owner(c.row);
      ++r;
    }
  });
}

__global__ void count_by_rank(const int32_t* rank, int64_t n, int* counts) {
  const int64_t i = thread_index();
  if (i < n) atomicAdd(&counts[rank[i]], 1);
}

__global__ void gather_records(const Contribution* in, const int32_t* order, int64_t n, Contribution* out) {
  const int64_t i = thread_index();
  if (i < n) out[i] = in[order[i]];
}

// Each record's local row as its key; the rows' record counts.
__global__ void row_keys(const Contribution* records, int64_t n, int32_t first_row, uint32_t* keys, int32_t* row_count) {
  const int64_t i = thread_index();
  if (i >= n) return;
  const auto u = uint32_t(records[i].row - first_row);
  keys[i] = u;
  atomicAdd(&row_count[u], 1);
}

// assemble()'s sums, row u's records (records[order[row_start[u] ..]]) in element order:
// conductances summed as they come (the diagonal, b), current sources after them.
__global__ void row_sums(const Contribution* records, const int32_t* order, const int32_t* row_start, int32_t rows,
                         double* diagonal, double* b, uint8_t* anchored, int32_t* couplings) {
  const auto u = int32_t(thread_index());
  if (u >= rows) return;
  double d = 0, sum = 0;
  bool fixed = false;
  int32_t coupled = 0;
  for (int32_t i = row_start[u]; i < row_start[u + 1]; ++i) {
    const Contribution& c = records[order[i]];
    if (c.neighbour == kCurrent) continue;
    d = __dadd_rn(d, c.g);
    sum = __dadd_rn(sum, c.delta);
    if (c.neighbour == kFixed) fixed = true;
    else ++coupled;
  }
  for (int32_t i = row_start[u]; i < row_start[u + 1]; ++i) {
    const Contribution& c = records[order[i]];
    if (c.neighbour == kCurrent) sum = __dadd_rn(sum, c.delta);
  }
  diagonal[u] = d, b[u] = sum, anchored[u] = fixed, couplings[u] = coupled;
}

// Row u's couplings (conductances to unknowns) at coupling_start[u], in element order.
__global__ void gather_couplings(const Contribution* records, const int32_t* order, const int32_t* row_start,
                                 const int32_t* coupling_start, int32_t rows, int32_t* column, double* g) {
  const auto u = int32_t(thread_index());
  if (u >= rows) return;
  int32_t at = coupling_start[u];
  for (int32_t i = row_start[u]; i < row_start[u + 1]; ++i) {
    const Contribution& c = records[order[i]];
    if (c.neighbour >= 0) column[at] = c.neighbour, g[at++] = c.g;
  }
}

// Row u's stored entries: its distinct columns (sorted), and the diagonal.
__global__ void row_lengths(const int32_t* column, const int32_t* coupling_start, int32_t rows, int32_t* length) {
  const auto u = int32_t(thread_index());
  if (u >= rows) return;
  int32_t distinct = 1;
  for (int32_t i = coupling_start[u]; i < coupling_start[u + 1]; ++i) distinct += i == coupling_start[u] || column[i] != column[i - 1];
  length[u] = distinct;
}

// assemble()'s row u at ptr[u]: its couplings by column (element order among equals), parallel
// ones merged (-g1 - g2 ..., in that order), the diagonal placed before the first higher column.
__global__ void write_rows(const int32_t* column, const double* g, const int32_t* coupling_start, const double* diagonal,
                           const int32_t* ptr, int32_t rows, int32_t first_row, int32_t* col, double* val) {
  const auto u = int32_t(thread_index());
  if (u >= rows) return;
  const int32_t global = first_row + u, first = ptr[u];
  int32_t at = first;
  bool diagonal_placed = false;
  for (int32_t i = coupling_start[u]; i < coupling_start[u + 1]; ++i) {
    const int32_t j = column[i];
    if (!diagonal_placed && j > global) {
      col[at] = global, val[at++] = diagonal[u];
      diagonal_placed = true;
    }
    if (at > first && col[at - 1] == j) val[at - 1] = __dsub_rn(val[at - 1], g[i]);
    else col[at] = j, val[at++] = -g[i];
  }
  if (!diagonal_placed) col[at] = global, val[at] = diagonal[u];
}

// A host array's copy on the device.
template <class T>
DeviceBuffer<T> copy_up(const T* host, size_t n, HostStaging& staging) {
  DeviceBuffer<T> d(n);
  staging.copy(d.data(), host, n * sizeof(T));
  return d;
}

// The host stamp's texts (dist/owned_rows.cpp): its records, then its stored entries.
[[noreturn]] void too_many_element_ends() { throw InputError(dist::kTooManyElementEnds); }
[[noreturn]] void too_many_nonzeros() { throw InputError(too_many_nonzeros_message()); }

}  // namespace

std::string DeviceStampTimes::text() const {
  return fmt::format("on its GPU: elements up and records made {:.3f} s ({} element ends of its rows, {} contributions sent), exchange {:.3f} s, "
                     "rows {:.3f} s, rows down {:.3f} s",
                     records, kept, sent, exchange, rows, download);
}

DeviceElements::DeviceElements(int device, const FillVector<Element>& elements) : device_(device) {
  PGSIM_CUDA(cudaSetDevice(device));
  HostStaging staging;
  elements_ = copy_up(elements.data(), elements.size(), staging);
  staging.finish();
}

Element DeviceElements::at(uint64_t k) const {
  if (k >= count()) throw std::logic_error("DeviceElements::at: no element " + std::to_string(k));
  PGSIM_CUDA(cudaSetDevice(device_));
  return read_back(elements_.data() + k);
}

void DeviceElements::download(FillVector<Element>& out) const {
  PGSIM_CUDA(cudaSetDevice(device_));
  FillVector<Element>().swap(out);
  out.resize(elements_.size());  // first touched by the staging's threads
  HostStaging staging;
  staging.download(out.data(), elements_.data(), elements_.size() * sizeof(Element));
}

DeviceBuffer<Element> DeviceElements::renumbered(const uint32_t* global, uint32_t line_offset) const {
  PGSIM_CUDA(cudaSetDevice(device_));
  const auto n = int64_t(count());
  DeviceBuffer<Element> out(elements_.size());
  launch(renumber_elements, n, elements_.data(), n, global, line_offset, out.data());
  PGSIM_CUDA(cudaStreamSynchronize(nullptr));
  return out;
}

dist::ElementScan DeviceElements::scan(uint32_t range_first, uint32_t range_count, uint32_t total_nodes) const {
  PGSIM_CUDA(cudaSetDevice(device_));
  Stopwatch watch;
  const auto n = int64_t(count());
  dist::ElementScan out;
  DeviceBuffer<uint32_t> merges(static_cast<size_t>(n) + 1), at(static_cast<size_t>(n) + 1);
  DeviceBuffer<uint64_t> foreign((uint64_t(total_nodes) + 63) / 64);
  DeviceBuffer<unsigned> has_source(1);
  PGSIM_CUDA(cudaMemset(foreign.data(), 0, foreign.size() * sizeof(uint64_t)));
  PGSIM_CUDA(cudaMemset(has_source.data(), 0, sizeof(unsigned)));
  PGSIM_CUDA(cudaMemset(merges.data() + n, 0, sizeof(uint32_t)));
  launch(scan_elements, n, data(), n, range_first, range_count, merges.data(),
         reinterpret_cast<unsigned long long*>(foreign.data()), has_source.data());
  exclusive_sum(merges.data(), at.data(), n + 1, nullptr);
  out.merging.resize(read_back(at.data() + n));  // FillVectors: first touched by the downloads
  out.merging_elements.resize(out.merging.size());
  DeviceBuffer<uint32_t> merging(out.merging.size());
  DeviceBuffer<Element> merging_elements(out.merging.size());
  launch(list_merging, n, data(), merges.data(), at.data(), n, merging.data(), merging_elements.data());
  out.has_source = read_back(has_source.data()) != 0;
  out.seconds[0] = watch.lap();
  out.foreign.resize(foreign.size());
  HostStaging staging;
  staging.download(out.merging.data(), merging.data(), merging.size() * sizeof(uint32_t));
  staging.download(out.merging_elements.data(), merging_elements.data(), merging_elements.size() * sizeof(Element));
  staging.download(out.foreign.data(), foreign.data(), foreign.size() * sizeof(uint64_t));
  out.seconds[1] = watch.lap();
  return out;
}

void stamp_rows_on_device(DeviceElements& elements, const dist::NodeLookup& nodes,
                          const std::vector<int32_t>& unknown_begin, int rank, const StampExchange& exchange,
                          CsrMatrix& G, double* b, uint8_t* anchored, int64_t max_entries, DeviceStampTimes& times) {
  PGSIM_CUDA(cudaSetDevice(elements.device()));
  Stopwatch watch;
  const auto n_elements = int64_t(elements.count());
  // An element's counts share 64 bits (count_records): two records each stay below 2^32.
  if (n_elements > INT32_MAX) throw InputError("a rank holds more than 2^31 elements, beyond the GPU stamp's index width");
  RankRows rows;
  rows.first = unknown_begin[size_t(rank)];
  rows.count = unknown_begin[size_t(rank) + 1] - rows.first;
  rows.ranks = int(unknown_begin.size()) - 1;
  G.rows = rows.count;

  HostStaging staging;
  const DeviceBuffer<int32_t> begin_d = copy_up(unknown_begin.data(), unknown_begin.size(), staging);
  rows.unknown_begin = begin_d.data();
  const auto subset_up = [&](const dist::SubsetArrays& s, DeviceBuffer<uint64_t>& words, DeviceBuffer<uint32_t>& ranks) {
    words = copy_up(s.words, s.word_count, staging);
    ranks = copy_up(s.ranks, s.word_count + 1, staging);
    return dist::SubsetArrays{s.base, words.data(), ranks.data(), s.word_count};
  };
  DeviceBuffer<uint64_t> offset_words, foreign_words;
  DeviceBuffer<uint32_t> offset_ranks, foreign_ranks;
  const DeviceBuffer<int32_t> range_unknown = copy_up(nodes.range_unknown, nodes.range_count, staging);
  const DeviceBuffer<double> range_offset = copy_up(nodes.range_offset, nodes.range_offsets, staging);
  const DeviceBuffer<int32_t> foreign_unknown = copy_up(nodes.foreign_unknown, nodes.foreign_count, staging);
  const DeviceBuffer<double> foreign_offset = copy_up(nodes.foreign_offset, nodes.foreign_count, staging);
  DeviceBuffer<unsigned> missing(1);
  PGSIM_CUDA(cudaMemset(missing.data(), 0, sizeof(unsigned)));
  DeviceNodes dn{nodes, missing.data()};
  dn.t.range_unknown = range_unknown.data();
  dn.t.has_offset = subset_up(nodes.has_offset, offset_words, offset_ranks);
  dn.t.range_offset = range_offset.data();
  dn.t.foreign = subset_up(nodes.foreign, foreign_words, foreign_ranks);
  dn.t.foreign_unknown = foreign_unknown.data(), dn.t.foreign_offset = foreign_offset.data();
  staging.finish();

  // Each element's records: where they go, counted, then the other ranks' written and grouped by rank.
  DeviceBuffer<uint64_t> at(static_cast<size_t>(n_elements) + 1);
  {
    DeviceBuffer<uint64_t> counts(static_cast<size_t>(n_elements) + 1);
    PGSIM_CUDA(cudaMemset(counts.data() + n_elements, 0, sizeof(uint64_t)));
    launch(count_records, n_elements, elements.data(), n_elements, dn, rows, counts.data());
    exclusive_sum(counts.data(), at.data(), n_elements + 1, nullptr);
  }
  const uint64_t totals = read_back(at.data() + n_elements);
  if (read_back(missing.data()) != 0) throw std::logic_error("SuperNodes: an element's node is neither this rank's nor one it stamps");
  const auto own_records = int64_t(totals & 0xffffffffu), other_records = int64_t(totals >> kOtherShift);
  if (own_records > max_entries || other_records > max_entries) too_many_element_ends();
  times.kept = uint64_t(own_records), times.sent = uint64_t(other_records);
  FillVector<Contribution> send;
  std::vector<int> send_counts(size_t(rows.ranks), 0);
  {
    DeviceBuffer<Contribution> other(static_cast<size_t>(other_records)), grouped(static_cast<size_t>(other_records));
    DeviceBuffer<int32_t> other_rank(static_cast<size_t>(other_records)), sorted_rank(static_cast<size_t>(other_records));
    DeviceBuffer<int32_t> place(static_cast<size_t>(other_records)), order(static_cast<size_t>(other_records));
    launch(write_records, n_elements, elements.data(), n_elements, dn, rows, at.data(), nullptr, other.data(), other_rank.data());
    launch(iota_kernel, other_records, int32_t(other_records), place.data());
    stable_sort_pairs(other_rank.data(), sorted_rank.data(), place.data(), order.data(), other_records,
                      bits_for(rows.ranks), nullptr);
    launch(gather_records, other_records, other.data(), order.data(), other_records, grouped.data());
    DeviceBuffer<int> counts(send_counts.size());
    PGSIM_CUDA(cudaMemset(counts.data(), 0, counts.size() * sizeof(int)));
    launch(count_by_rank, other_records, other_rank.data(), other_records, counts.data());
    counts.download(send_counts.data());
    send.resize(size_t(other_records));  // a FillVector: first touched by the download
    staging.download(send.data(), grouped.data(), size_t(other_records) * sizeof(Contribution));
  }
  times.records = watch.lap();
  FillVector<Contribution> received;
  const size_t lower = exchange(send, send_counts, received);
  FillVector<Contribution>().swap(send);
  times.exchange = watch.lap();

  // All records for this rank's rows in the host's order: lower ranks', its own, higher ranks'.
  const int64_t total = int64_t(received.size()) + own_records;
  if (total > max_entries) too_many_element_ends();
  DeviceBuffer<Contribution> records(static_cast<size_t>(total));
  staging.copy(records.data(), received.data(), lower * sizeof(Contribution));
  staging.copy(records.data() + lower + own_records, received.data() + lower, (received.size() - lower) * sizeof(Contribution));
  launch(write_records, n_elements, elements.data(), n_elements, dn, rows, at.data(), records.data() + lower,
         static_cast<Contribution*>(nullptr), static_cast<int32_t*>(nullptr));
  staging.finish();
  elements.release(), at = DeviceBuffer<uint64_t>();  // every record made
  const auto n = int64_t(rows.count);
  DeviceBuffer<int32_t> order(static_cast<size_t>(total));
  DeviceBuffer<int32_t> row_start(static_cast<size_t>(n) + 1);
  {
    DeviceBuffer<uint32_t> keys(static_cast<size_t>(total)), sorted_keys(static_cast<size_t>(total));
    DeviceBuffer<int32_t> place(static_cast<size_t>(total));
    DeviceBuffer<int32_t> row_count(static_cast<size_t>(n) + 1);
    PGSIM_CUDA(cudaMemset(row_count.data(), 0, row_count.size() * sizeof(int32_t)));
    launch(row_keys, total, records.data(), total, rows.first, keys.data(), row_count.data());
    launch(iota_kernel, total, int32_t(total), place.data());
    stable_sort_pairs(keys.data(), sorted_keys.data(), place.data(), order.data(), total, bits_for(int32_t(n)), nullptr);
    exclusive_sum(row_count.data(), row_start.data(), n + 1, nullptr);
  }
  DeviceBuffer<double> diagonal(static_cast<size_t>(n)), b_d(static_cast<size_t>(n));
  DeviceBuffer<uint8_t> anchored_d(static_cast<size_t>(n));
  DeviceBuffer<int32_t> coupling_start(static_cast<size_t>(n) + 1);
  {
    DeviceBuffer<int32_t> couplings(static_cast<size_t>(n) + 1);
    PGSIM_CUDA(cudaMemset(couplings.data() + n, 0, sizeof(int32_t)));
    launch(row_sums, n, records.data(), order.data(), row_start.data(), int32_t(n), diagonal.data(), b_d.data(),
           anchored_d.data(), couplings.data());
    exclusive_sum(couplings.data(), coupling_start.data(), n + 1, nullptr);
  }
  const int64_t coupled = read_back(coupling_start.data() + n);
  if (coupled + n > max_entries) too_many_nonzeros();
  DeviceBuffer<int32_t> column(static_cast<size_t>(coupled));
  DeviceBuffer<double> g(static_cast<size_t>(coupled));
  {
    DeviceBuffer<int32_t> column_in(static_cast<size_t>(coupled));
    DeviceBuffer<double> g_in(static_cast<size_t>(coupled));
    launch(gather_couplings, n, records.data(), order.data(), row_start.data(), coupling_start.data(), int32_t(n),
           column_in.data(), g_in.data());
    records = DeviceBuffer<Contribution>(), order = DeviceBuffer<int32_t>();
    stable_sort_segments(column_in.data(), column.data(), g_in.data(), g.data(), coupled, n, coupling_start.data(), nullptr);
  }
  DeviceBuffer<int32_t> ptr(static_cast<size_t>(n) + 1);
  {
    DeviceBuffer<int32_t> length(static_cast<size_t>(n) + 1);
    PGSIM_CUDA(cudaMemset(length.data() + n, 0, sizeof(int32_t)));
    launch(row_lengths, n, column.data(), coupling_start.data(), int32_t(n), length.data());
    exclusive_sum(length.data(), ptr.data(), n + 1, nullptr);
  }
  const int64_t nnz = read_back(ptr.data() + n);
  DeviceBuffer<int32_t> col(static_cast<size_t>(nnz));
  DeviceBuffer<double> val(static_cast<size_t>(nnz));
  launch(write_rows, n, column.data(), g.data(), coupling_start.data(), diagonal.data(), ptr.data(), int32_t(n), rows.first,
         col.data(), val.data());
  PGSIM_CUDA(cudaDeviceSynchronize());
  times.rows = watch.lap();

  // FillVectors: their pages are first touched by the download's threads.
  G.ptr.resize(size_t(n) + 1);
  G.col.resize(size_t(nnz));
  G.val.resize(size_t(nnz));
  staging.download(G.ptr.data(), ptr.data(), G.ptr.size() * sizeof(int32_t));
  staging.download(G.col.data(), col.data(), G.col.size() * sizeof(int32_t));
  staging.download(G.val.data(), val.data(), G.val.size() * sizeof(double));
  staging.download(b, b_d.data(), size_t(n) * sizeof(double));
  staging.download(anchored, anchored_d.data(), size_t(n));
  times.download = watch.lap();
}

}  // namespace pgsim::gpu
