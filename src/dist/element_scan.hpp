#pragma once
// The super-nodes' first pass over a rank's elements (dist/super_nodes.hpp), made on the rank's
// CPU threads by SuperNodes itself or on its GPU (gpu/device_stamp.hpp DeviceElements::scan),
// where the elements are for the stamp anyway (and where they may be only there:
// dist/elements_on_device.hpp). Plain C++, no MPI.
#include <cstdint>
#include <vector>

#include "parser/default_init.hpp"
#include "parser/netlist.hpp"

namespace pgsim::dist {

struct ElementScan {
  FillVector<uint32_t> merging;  // the rank's voltage sources and shorts (is_short() in DC), ascending
  FillVector<Element> merging_elements;  // those elements themselves, in the same order (what merge_edge() reads)
  // A bitmap over the node ids [0, total_nodes), 64 a word (NodeSubset's words): the other ranks'
  // nodes that the rank's stamping elements (stamps() in DC, not merging) touch; ground is none.
  std::vector<uint64_t> foreign;
  bool has_source = false;  // a voltage or current source among the rank's elements
  double seconds[2] = {0, 0};  // -v, where made on the GPU: the pass itself, and its results brought down
};

}  // namespace pgsim::dist
