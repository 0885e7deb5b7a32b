#include "dist/byte_exchange.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

#include "dist/direct_reads.hpp"

namespace pgsim::dist {
namespace {

constexpr int kTag = 1717;
// The most bytes one direct read (or one thread's piece of a copy or of zeroing) moves: small
// enough that a few hundred MB keep every thread busy.
constexpr uint64_t kReadPiece = uint64_t(1) << 20;

// f(at, length) over [0, bytes) in pieces of at most `piece` bytes, on all threads.
template <class F>
void on_all_threads(uint64_t bytes, uint64_t piece, F f) {
  const auto pieces = std::ptrdiff_t((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::ptrdiff_t k = 0; k < pieces; ++k) {
    const uint64_t at = uint64_t(k) * piece;
    f(at, size_t(std::min(piece, bytes - at)));
  }
}

// dst[0, bytes) = src[0, bytes) on all threads, in pieces of at most `piece` bytes.
void copy_on_all_threads(char* dst, const char* src, uint64_t bytes, uint64_t piece) {
  on_all_threads(bytes, piece, [&](uint64_t at, size_t length) { std::memcpy(dst + at, src + at, length); });
}

// Writes zeros over [data, data + count) on all threads (exchange_bytes' header says why).
void touch_on_all_threads(char* data, uint64_t count) {
  on_all_threads(count, kReadPiece, [&](uint64_t at, size_t length) { std::memset(data + at, 0, length); });
}

}  // namespace

std::vector<uint64_t> exchange_counts(const std::vector<uint64_t>& send_counts, MPI_Comm comm) {
  std::vector<uint64_t> recv_counts(send_counts.size());
  MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm);
  return recv_counts;
}

void exchange_bytes(const char* send, const std::vector<uint64_t>& send_counts, char* recv,
                    const std::vector<uint64_t>& recv_counts, MPI_Comm comm, OwnShare own_share, uint64_t max_message,
                    SameHost same_host) {
  if (max_message == 0 || max_message > uint64_t(INT_MAX)) throw std::invalid_argument("exchange_bytes: bad max_message");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (send_counts[rank] != recv_counts[rank]) throw std::logic_error("exchange_bytes: this rank's own counts differ");
  // The same on every rank: host_peers' answer is, and so is same_host.
  const HostPeers* peers = same_host == SameHost::kDirectReads && size > 1 ? &host_peers(comm) : nullptr;
  const bool direct = peers != nullptr && peers->readable;
  std::vector<uint64_t> send_at(size_t(size), 0), recv_at(size_t(size), 0);  // each share's offset in send, recv
  for (int q = 1; q < size; ++q) {
    send_at[q] = send_at[q - 1] + send_counts[q - 1];
    recv_at[q] = recv_at[q - 1] + recv_counts[q - 1];
  }
  // A reader learns where its share lies in each sender's memory.
  std::vector<uint64_t> remote(size_t(size), 0);
  if (direct) {
    std::vector<uint64_t> share(send_at.size());
    for (int q = 0; q < size; ++q) share[q] = reinterpret_cast<uint64_t>(send) + send_at[q];
    MPI_Alltoall(share.data(), 1, MPI_UINT64_T, remote.data(), 1, MPI_UINT64_T, comm);
  }
  const auto reads = [&](int q) { return direct && peers->reads(q, rank); };
  std::vector<MPI_Request> requests;
  // Posts one request per message of at most max_message bytes of [data, data + count).
  const auto post = [&](auto&& start, char* data, uint64_t count, int peer) {
    for (uint64_t done = 0; done < count; done += max_message) {
      requests.emplace_back();
      start(data + done, static_cast<int>(std::min(max_message, count - done)), peer, &requests.back());
    }
  };
  for (int q = 0; q < size; ++q)
    if (q != rank && !reads(q)) {
      touch_on_all_threads(recv + recv_at[q], recv_counts[q]);
      post([&](char* p, int n, int peer, MPI_Request* r) { MPI_Irecv(p, n, MPI_BYTE, peer, kTag, comm, r); },
           recv + recv_at[q], recv_counts[q], q);
    }
  for (int q = 0; q < size; ++q)
    if (q != rank && !reads(q))
      post([&](char* p, int n, int peer, MPI_Request* r) { MPI_Isend(p, n, MPI_BYTE, peer, kTag, comm, r); },
           const_cast<char*>(send) + send_at[q], send_counts[q], q);
  // This rank's own share is copied, and the shares of its host's ranks read, while the messages travel.
  const uint64_t piece = std::min(max_message, kReadPiece);
  if (own_share == OwnShare::kCopied && send_counts[rank] > 0)
    copy_on_all_threads(recv + recv_at[rank], send + send_at[rank], send_counts[rank], piece);
  std::vector<DirectRead> direct_reads;
  for (int q = 0; q < size; ++q)
    if (reads(q) && recv_counts[q] > 0) direct_reads.push_back({peers->pid[q], remote[q], recv + recv_at[q], recv_counts[q]});
  const bool read = read_directly(direct_reads, piece);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (!direct) return;
  // Every reader done: only then may a sender reuse its buffer.
  int failed = read ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (failed == 0) return;
  if (rank == 0) spdlog::debug("a direct read between ranks of one host failed: the exchange went again through MPI messages");
  exchange_bytes(send, send_counts, recv, recv_counts, comm, own_share, max_message, SameHost::kMessages);
}

}  // namespace pgsim::dist
