#pragma once
// The stamp of a rank's rows of G x = b (dist/owned_rows.hpp) on the rank's GPU: the same records,
// sums and rows as the host's stamp, bit for bit (issue 17: two ranks on one host share its cores,
// so they gain on one process only from work that runs on the second GPU). The host keeps the
// exchange between ranks and the floating check. The elements go up once, before the super-nodes,
// whose first pass over them (dist/element_scan.hpp) runs here too.
//
// On the device: each element's ends looked up in the super-nodes' arrays (dist/node_lookup.hpp),
// its records made as owned_rows.cpp's contributions_to() makes them (products without fused
// multiply-adds); the records for other ranks' rows grouped by rank (a stable sort) and handed
// to the host's exchange; the rank's own records and those received put in the host's order
// (lower ranks' received, its own, higher ranks') and sorted stably by row, so each row's records
// keep element order; each row summed by one thread in that order, conductances first, then
// current sources; each row's couplings sorted stably by column (CUB's segmented sort), parallel
// conductances merged in element order and the diagonal placed, as owned_rows.cpp's assemble()
// writes the row. Sums and differences use the _rn intrinsics: nothing is fused.
//
// Plain C++ (the CUDA runtime's header only).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dist/element_scan.hpp"
#include "dist/elements_on_device.hpp"
#include "dist/node_lookup.hpp"
#include "dist/row_contribution.hpp"
#include "gpu/device_buffer.hpp"
#include "mna/csr.hpp"
#include "parser/default_init.hpp"
#include "parser/netlist.hpp"

namespace pgsim::gpu {

// The exchange between ranks: `send` holds the records for other ranks' rows grouped by rank
// (send_counts[q] for rank q), each group in element order; `received` becomes the records
// every other rank sent this one, in rank order. Returns how many came from lower ranks.
using StampExchange = std::function<size_t(const FillVector<dist::Contribution>& send, const std::vector<int>& send_counts,
                                           FillVector<dist::Contribution>& received)>;

// -v: where the time went (seconds), and the records.
struct DeviceStampTimes {
  double records = 0, exchange = 0, rows = 0, download = 0;
  uint64_t kept = 0, sent = 0;  // records for this rank's rows from its own elements; records sent to other ranks

  std::string text() const;
};

// A rank's elements (plus and minus: global node ids) on its GPU, for the super-nodes' first pass
// (scan()) and the stamp: copied up once from the host, or left there by the GPU reader of the
// rank's range (gpu/gpu_parse.hpp) and renumbered there by the node ids' numbering
// (dist/elements_on_device.hpp).
class DeviceElements final : public dist::ElementsOnDevice {
 public:
  // Copies them to device `device` (made current). Throws GpuError.
  DeviceElements(int device, const FillVector<Element>& elements);
  // Takes those already on device `device`.
  DeviceElements(int device, DeviceBuffer<Element> elements) : device_(device), elements_(std::move(elements)) {}

  uint64_t count() const override { return elements_.size(); }
  Element at(uint64_t k) const override;
  void download(FillVector<Element>& out) const override;

  // A copy of them, each element's ends through `global` (device memory: local node j's global id
  // at global[j - 1], ground 0 staying 0) and the lines of file 0 moved on by `line_offset`; they
  // are left as they are (the numbering swaps the copy in once every rank has made its own).
  // Throws GpuError.
  DeviceBuffer<Element> renumbered(const uint32_t* global, uint32_t line_offset) const;
  void replace(DeviceBuffer<Element> elements) { elements_ = std::move(elements); }

  // The super-nodes' first pass (dist/element_scan.hpp) over them, the rank's own nodes being
  // [range_first, range_first + range_count) of the node ids [0, total_nodes). Throws GpuError.
  dist::ElementScan scan(uint32_t range_first, uint32_t range_count, uint32_t total_nodes) const;

  int device() const { return device_; }
  const Element* data() const { return elements_.data(); }
  void release() { elements_ = DeviceBuffer<Element>(); }

 private:
  int device_;
  DeviceBuffer<Element> elements_;
};

// The rank's rows [unknown_begin[rank], unknown_begin[rank + 1]) of reduce()'s G and b, columns
// global (G.rows set), from its `elements` (released once their records are made) and every other
// rank's records, on their device (made current). b and anchored: one entry per row, sized by
// the caller; anchored[u]: whether row u has a conductance to a fixed node (the floating check's
// anchor). Throws InputError where the rank's records or its rows' entries pass `max_entries`
// (at most 2^31 - 1, this build's index width; tests set it small), std::logic_error for an
// element end that `nodes` does not hold (SuperNodes::unknown_of's contract), GpuError on a CUDA
// failure; `exchange` may throw too (every rank's failure, agreed there). Not collective itself:
// a failure before `exchange` leaves it uncalled, which the caller must make up for.
void stamp_rows_on_device(DeviceElements& elements, const dist::NodeLookup& nodes,
                          const std::vector<int32_t>& unknown_begin, int rank, const StampExchange& exchange,
                          CsrMatrix& G, double* b, uint8_t* anchored, int64_t max_entries, DeviceStampTimes& times);

}  // namespace pgsim::gpu
