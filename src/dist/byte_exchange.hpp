#pragma once
// All-to-all exchanges of any size. MPI's counts and displacements are int: 50M node names of one
// rank, or a voltages file's worth of text, overflow them. Here counts and offsets are 64-bit and
// the data travels as point-to-point messages of at most `max_message` bytes each (a pair with
// more sends several, in order), posted at once and waited for together; except between two
// ranks of one host that may read each other's memory (dist/direct_reads.hpp), where the receiver
// reads its share from the sender's buffer on all its threads (6.3-7.6x MPI's one-thread copy on
// the 2-GPU machine: benchmarks/bench_exchange).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "dist/collective_error.hpp"
#include "parser/default_init.hpp"

namespace pgsim::dist {

constexpr uint64_t kMaxMessageBytes = uint64_t(1) << 30;

// What every rank sends to this one: send_counts[q] is this rank's count for rank q; the result's
// [q] is rank q's count for this rank (MPI_Alltoall of 64-bit counts).
std::vector<uint64_t> exchange_counts(const std::vector<uint64_t>& send_counts, MPI_Comm comm);

// What becomes of this rank's own share (send_counts[rank] bytes, which do not travel). kCopied:
// copied into its place in recv. kLeft: its place in recv is not written (nor, for a fresh buffer,
// paged in), and the caller reads the share where it is in `send` (ReceivedView): at 50M nodes on
// 2 ranks, half of every exchange of the node ids step is a rank's own, hundreds of MB that a
// copy would move on one thread.
enum class OwnShare { kCopied, kLeft };

// How the bytes between two ranks of one host travel: kDirectReads, read by the receiver where the
// ranks may read each other (as MPI messages where they may not); kMessages, MPI messages always.
enum class SameHost { kDirectReads, kMessages };

// `send` holds the bytes for rank 0, then those for rank 1, ... (send_counts[q] each); `recv`
// receives those from rank 0, then from rank 1, ... (recv_counts[q] each, as exchange_counts
// gives). Collective; `same_host` must be the same on every rank. `max_message` (at most
// INT_MAX; also the most bytes one direct read moves) exists for tests, which set it tiny. A
// direct read that fails (the kernel refusing what host_peers found allowed) is not an error:
// every rank then exchanges again through messages.
// The places of `recv` that messages fill are paged in (zeroed) on all threads first: in a fresh
// buffer MPI's one thread would fault them in (what std::vector's resize does, serially); direct
// reads fault theirs in on all threads as they go.
void exchange_bytes(const char* send, const std::vector<uint64_t>& send_counts, char* recv,
                    const std::vector<uint64_t>& recv_counts, MPI_Comm comm, OwnShare own = OwnShare::kCopied,
                    uint64_t max_message = kMaxMessageBytes, SameHost same_host = SameHost::kDirectReads);

// Counts of T elements (any integer type) as exchange_bytes' byte counts.
template <class T, class Count>
std::vector<uint64_t> byte_counts(const std::vector<Count>& counts) {
  std::vector<uint64_t> bytes(counts.size());
  for (size_t q = 0; q < counts.size(); ++q) bytes[q] = uint64_t(counts[q]) * sizeof(T);
  return bytes;
}

// The same for arrays of a trivially copyable T; counts in elements. With OwnShare::kLeft, this
// rank's own share's place in the result is left unwritten (read it through ReceivedView). A rank
// that cannot allocate the result fails every rank (collective_error.hpp).
template <class T, class SendVector>
FillVector<T> exchange(const SendVector& send, const std::vector<uint64_t>& send_counts,
                       const std::vector<uint64_t>& recv_counts, MPI_Comm comm, OwnShare own = OwnShare::kCopied) {
  uint64_t total = 0;
  for (uint64_t c : recv_counts) total += c;
  FillVector<T> recv;
  agree_on_failure(comm, [&] { recv.resize(total); });
  exchange_bytes(reinterpret_cast<const char*>(send.data()), byte_counts<T>(send_counts),
                 reinterpret_cast<char*>(recv.data()), byte_counts<T>(recv_counts), comm, own);
  return recv;
}

// An exchange's received elements in their layout (rank 0's share first, ...) where this rank's
// own share stayed in the send buffer (OwnShare::kLeft): element k is recv[k] outside the own
// share, send's element there inside it.
template <class T>
class ReceivedView {
 public:
  // `send_counts` and `recv_counts` as passed to the exchange, in elements.
  ReceivedView(const T* send, const std::vector<uint64_t>& send_counts, const T* recv,
               const std::vector<uint64_t>& recv_counts, int rank)
      : recv_(recv) {
    uint64_t sent_before = 0;
    for (int q = 0; q < rank; ++q) own_begin_ += recv_counts[size_t(q)], sent_before += send_counts[size_t(q)];
    own_size_ = recv_counts[size_t(rank)];
    own_ = send + sent_before;
  }
  const T* data(uint64_t k) const { return k - own_begin_ < own_size_ ? own_ + (k - own_begin_) : recv_ + k; }
  T operator[](uint64_t k) const { return *data(k); }

 private:
  const T* recv_;
  const T* own_ = nullptr;
  uint64_t own_begin_ = 0, own_size_ = 0;
};

}  // namespace pgsim::dist
