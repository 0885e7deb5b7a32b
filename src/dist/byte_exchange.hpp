#pragma once
// All-to-all exchanges of any size. MPI's counts and displacements are int: 50M node names of one
// rank, or a voltages file's worth of text, overflow them. Here counts and offsets are 64-bit and
// the data travels as point-to-point messages of at most `max_message` bytes each (a pair with
// more sends several, in order), posted at once and waited for together.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/collective_error.hpp"

namespace pgsim::dist {

constexpr uint64_t kMaxMessageBytes = uint64_t(1) << 30;

// What every rank sends to this one: send_counts[q] is this rank's count for rank q; the result's
// [q] is rank q's count for this rank (MPI_Alltoall of 64-bit counts).
std::vector<uint64_t> exchange_counts(const std::vector<uint64_t>& send_counts, MPI_Comm comm);

// `send` holds the bytes for rank 0, then those for rank 1, ... (send_counts[q] each); `recv`
// receives those from rank 0, then from rank 1, ... (recv_counts[q] each, as exchange_counts
// gives). Collective. `max_message` (at most INT_MAX) exists for tests, which set it tiny.
void exchange_bytes(const char* send, const std::vector<uint64_t>& send_counts, char* recv,
                    const std::vector<uint64_t>& recv_counts, MPI_Comm comm, uint64_t max_message = kMaxMessageBytes);

// The same for arrays of a trivially copyable T; counts in elements. A rank that cannot allocate
// the result fails every rank (collective_error.hpp).
template <class T, class SendVector>
std::vector<T> exchange(const SendVector& send, const std::vector<uint64_t>& send_counts,
                        const std::vector<uint64_t>& recv_counts, MPI_Comm comm) {
  std::vector<uint64_t> send_bytes(send_counts), recv_bytes(recv_counts);
  uint64_t total = 0;
  for (uint64_t& c : send_bytes) c *= sizeof(T);
  for (uint64_t& c : recv_bytes) total += c, c *= sizeof(T);
  std::vector<T> recv;
  agree_on_failure(comm, [&] { recv.resize(total); });
  exchange_bytes(reinterpret_cast<const char*>(send.data()), send_bytes, reinterpret_cast<char*>(recv.data()), recv_bytes, comm);
  return recv;
}

}  // namespace pgsim::dist
