#pragma once
// A rank's node names left on its GPU by the reader of its byte range (dist/distributed_parse.hpp
// PartReader; gpu/gpu_node_ids.hpp), and the node ids numbered there (issue 17).
//
// Where every rank's range was read on its GPU, its local names are already there, interned: the
// distributed parse's node ids (steps 5 and 6 of distributed_parse.hpp: names to their hash
// owners, first appearances found there, numbered, ids back; the owned names balanced) are then
// computed on the GPUs, and only what the host keeps comes down: each local name's global id and
// the rank's balanced names. The bytes between ranks go through pinned host memory (RankExchange: MPI,
// or direct reads between the ranks of one host), not NCCL, whose communicator is made beside the
// parse and is not ready by then. Where any rank's range was read on the CPU, the names come down
// (download()) and the host numbers them as before: the same ids either way.
//
// Plain C++ without MPI: the GPU library implements the interface, the distributed parse gives
// it the ranks.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dist/elements_on_device.hpp"
#include "parser/default_init.hpp"
#include "parser/name_table.hpp"

namespace pgsim::dist {

// Rank q's first owned node id once ownership is balanced (step 6 of distributed_parse.hpp):
// equal runs of the ids 1 .. total_nodes - 1; q = ranks: total_nodes.
inline uint32_t balanced_first(int q, int ranks, uint32_t total_nodes) {
  return static_cast<uint32_t>(1 + uint64_t(total_nodes - 1) * uint64_t(q) / uint64_t(ranks));
}

// What the numbering asks of the job's ranks: collectives, each called by every rank alike.
struct RankExchange {
  int rank = 0, ranks = 1;
  // counts[q]: what this rank has for rank q; returns what each rank has for this one.
  std::function<std::vector<uint64_t>(const std::vector<uint64_t>& counts)> counts;
  // send_bytes[q] bytes of `send` (the parts in rank order) to rank q, received from each rank in
  // rank order into `recv` (recv_bytes[q] from rank q). This rank's own counts are 0.
  std::function<void(const char* send, const std::vector<uint64_t>& send_bytes, char* recv,
                     const std::vector<uint64_t>& recv_bytes)>
      bytes;
  // The sum of `value` over the lower ranks; `total`: over every rank.
  std::function<uint64_t(uint64_t value, uint64_t& total)> scan;
  // The largest `value` of every rank's.
  std::function<uint64_t(uint64_t value)> max;
  // Runs a step of this rank's alone; where it throws on any rank, throws on every rank
  // (dist/collective_error.hpp agree_on_failure), so no rank waits in the next collective.
  std::function<void(const std::function<void()>& step)> agree;
};

// A rank's node ids (steps 5 and 6 of distributed_parse.hpp).
struct NodeNumbering {
  FillVector<uint32_t> global;  // by local id: global[0] = 0 (ground); empty where number() renumbered the elements
  uint32_t total_nodes = 1;     // ground included
  uint32_t first_seen = 0;      // the local names this rank saw first
  NameTable owned;              // the rank's names once balanced (ids balanced_first(rank) on), no hash index
  std::string detail;           // -v: where the time went
};

class NodeNamesOnDevice {
 public:
  virtual ~NodeNamesOnDevice() = default;
  // The part's local names, ids 1 .. count() (0 is ground, not held).
  virtual uint32_t count() const = 0;
  // Appends them, in local id order, to `names` (the part's table, holding ground).
  virtual void download(NameTable& names) = 0;
  // Collective over every rank of `ranks`, each holding its names on its device: their node ids
  // as the host's numbering gives them. Throws on every rank alike: InputError beyond the ids'
  // width; another exception where a rank's device failed (RankExchange::agree), after which the
  // distributed parse brings the names down (download()) and numbers them on the host.
  // `elements`, where given: the part's elements, left on the same device by the same reader
  // (dist/elements_on_device.hpp), whose ends name the local ids. They are renumbered there, last,
  // their ends given the global ids and the lines of file 0 moved on by `line_offset`, and
  // `global` comes back empty; after a failure (on any rank) every rank's are as they were.
  virtual NodeNumbering number(const RankExchange& ranks, ElementsOnDevice* elements, uint32_t line_offset) = 0;
};

}  // namespace pgsim::dist
