#pragma once
// Reads of another rank's memory on the same host, on all of this rank's threads (Linux
// cross-memory attach, process_vm_readv): the fast path of dist/byte_exchange.hpp's exchanges
// between the ranks of one host.
//
// Why: MPI's shared-memory transports copy a message on one thread. On the 2-GPU machine (32
// cores) 256 MB went from one rank to the other at 2.8-3.9 GB/s through OpenMPI's default
// transport, and at 20.6-24.4 GB/s read by the receiver on 15 threads (benchmarks/bench_exchange,
// three calls in session 19: benchmarks/dist/README.md); the distributed parse and reduction of
// a 50M-node grid exchange several hundred MB a step.
//
// When: the kernel must let each rank read the others (same user, and no Yama ptrace_scope,
// container seccomp profile or missing capability refusing it), and the ranks must see each
// other's process ids (one pid namespace). Both are checked once per communicator by reading a
// token each rank published; where any rank of comm cannot read a peer of its host, no rank of
// comm reads directly, and every exchange goes through MPI messages.
#include <mpi.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace pgsim::dist {

struct HostPeers {
  // Whether the ranks of comm read each other's memory on their host (the same on every rank).
  bool readable = false;
  std::vector<pid_t> pid;       // [q]: rank q's process id
  std::vector<uint8_t> local;   // [q]: 1 where rank q is on this rank's host (this rank included)
  // Whether this rank reads rank q's bytes directly (q on its host, not itself, readable).
  bool reads(int q, int self) const { return readable && q != self && local[size_t(q)] != 0; }
};

// Collective over comm on its first call for comm (the check above, a few collectives); cached
// as an attribute of comm after that, and local. The reference lives as long as comm.
// `may_read` false (tests) makes this rank count as one the kernel refuses, on that first call.
const HostPeers& host_peers(MPI_Comm comm, bool may_read = true);

// One read of `bytes` bytes at address `remote` of process `pid` into `local`.
struct DirectRead {
  pid_t pid;
  uint64_t remote;
  char* local;
  uint64_t bytes;
};

// Performs every read, cut into pieces of at most `piece` bytes (> 0) spread over all OpenMP
// threads. Returns false if any piece failed (the others are done; `local` is then partly written).
bool read_directly(const std::vector<DirectRead>& reads, uint64_t piece);

}  // namespace pgsim::dist
