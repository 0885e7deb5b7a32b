#pragma once
// A rank's elements held on its GPU instead of in RankNetlist::elements (dist/rank_netlist.hpp):
// where the reader of its byte range parsed them there (gpu/gpu_parse.hpp) and the run reduces
// them there too (the super-nodes' first pass and the stamp, gpu/device_stamp.hpp), they neither
// come down to the host nor go back up. (Issue 17, session 23's 50M-node grid on two ranks: 41M
// elements of 24 bytes a rank came down with the range's other arrays in 0.09 s, were renumbered
// on the host in 0.04 s and went up again with the first pass in 0.07 s.) The node ids'
// numbering renumbers them there (dist/node_names_on_device.hpp). They hold 24 bytes of device
// memory an element until the stamp frees them, before the solve's larger peak.
//
// Plain C++ without CUDA: the GPU library implements it (gpu::DeviceElements).
#include <cstdint>

#include "parser/default_init.hpp"
#include "parser/netlist.hpp"

namespace pgsim::dist {

class ElementsOnDevice {
 public:
  virtual ~ElementsOnDevice() = default;
  virtual uint64_t count() const = 0;
  // Element k < count(), as the host's array would hold it (an error's file:line). Throws GpuError.
  virtual Element at(uint64_t k) const = 0;
  // All of them, in order, into `out` (replaced). Throws GpuError.
  virtual void download(FillVector<Element>& out) const = 0;
};

}  // namespace pgsim::dist
