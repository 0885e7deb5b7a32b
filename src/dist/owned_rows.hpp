#pragma once
// The first half of the distributed reduction (distributed_reduce.hpp): each rank's own rows of
// G x = b, stamped from every rank's elements, equal to the rows reduce() (mna/reduce.hpp)
// would give bit for bit; and the check that no part of the circuit floats.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "dist/rank_netlist.hpp"
#include "dist/super_nodes.hpp"
#include "mna/csr.hpp"

namespace pgsim::gpu {
class DeviceElements;
}

namespace pgsim::dist {

struct OwnedRows {
  // unknown_begin[q]: rank q's first unknown; rank q owns [unknown_begin[q], unknown_begin[q + 1])
  // (super_nodes.hpp: contiguous, in serial order). ranks + 1 entries.
  std::vector<int32_t> unknown_begin;
  int32_t first_unknown = 0;  // this rank's: unknown_begin[rank]
  // This rank's rows of reduce()'s G, local row i being unknown first_unknown + i; columns are
  // GLOBAL unknowns (sorted, diagonal stored). b: the rows' right-hand side.
  CsrMatrix G;
  std::vector<double> b;

  int32_t rows() const { return G.rows; }
};

// The rank owning row u when rank q owns rows [begin[q], begin[q + 1]).
template <class Index>
int owner_of_row(const std::vector<Index>& begin, int64_t u) {
  return int(std::upper_bound(begin.begin(), begin.end(), Index(u)) - begin.begin()) - 1;
}

// Collective over comm. Element k of rank r stamps the rows of its ends' unknowns wherever they
// are owned: contributions to other ranks' rows travel in one MPI_Alltoallv (24 bytes per
// element end), and each row sums its contributions in element order (ranks' elements in
// rank order, then file order), conductances first then current sources, as reduce() does.
// Throws InputError with reduce()'s text, on every rank, for a floating part of the circuit
// (the first node of its lowest unknown, and its netlist node count), and for more than
// `max_entries` (at most 2^31 - 1, this build's index width; tests set it small on one rank)
// element ends or entries in one rank's rows. A failure of one rank's own work (those, memory,
// on_device its GPU) is thrown on every rank alike (dist/collective_error.hpp FailureAgreement:
// agreed on before the exchange and before the floating check), so no rank is left in a
// collective call.
// on_device: nl's elements on the rank's GPU (gpu/device_stamp.hpp; a build with CUDA, MPI and
// NCCL, else std::logic_error): the records made and the rows summed and written there, the same
// rows bit for bit, and the elements' device copy released.
OwnedRows stamp_owned_rows(const RankNetlist& nl, const SuperNodes& super_nodes, MPI_Comm comm,
                           gpu::DeviceElements* on_device = nullptr, int64_t max_entries = INT32_MAX);

}  // namespace pgsim::dist
