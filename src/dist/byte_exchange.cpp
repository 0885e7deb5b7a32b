#include "dist/byte_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace pgsim::dist {
namespace {

constexpr int kTag = 1717;
constexpr uint64_t kCopyPiece = uint64_t(1) << 20;  // bytes of the own share one thread copies at a time

}  // namespace

std::vector<uint64_t> exchange_counts(const std::vector<uint64_t>& send_counts, MPI_Comm comm) {
  std::vector<uint64_t> recv_counts(send_counts.size());
  MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm);
  return recv_counts;
}

void exchange_bytes(const char* send, const std::vector<uint64_t>& send_counts, char* recv,
                    const std::vector<uint64_t>& recv_counts, MPI_Comm comm, uint64_t max_message) {
  if (max_message == 0 || max_message > uint64_t(INT_MAX)) throw std::invalid_argument("exchange_bytes: bad max_message");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (send_counts[rank] != recv_counts[rank]) throw std::logic_error("exchange_bytes: this rank's own counts differ");
  std::vector<MPI_Request> requests;
  // Posts one request per message of at most max_message bytes of [data, data + count).
  const auto post = [&](auto&& start, char* data, uint64_t count, int peer) {
    for (uint64_t done = 0; done < count; done += max_message) {
      requests.emplace_back();
      start(data + done, static_cast<int>(std::min(max_message, count - done)), peer, &requests.back());
    }
  };
  uint64_t offset = 0;
  for (int q = 0; q < size; ++q) {
    if (q != rank)
      post([&](char* p, int n, int peer, MPI_Request* r) { MPI_Irecv(p, n, MPI_BYTE, peer, kTag, comm, r); },
           recv + offset, recv_counts[q], q);
    offset += recv_counts[q];
  }
  uint64_t mine = 0;
  offset = 0;
  for (int q = 0; q < size; ++q) {
    if (q == rank) mine = offset;
    else
      post([&](char* p, int n, int peer, MPI_Request* r) { MPI_Isend(p, n, MPI_BYTE, peer, kTag, comm, r); },
           const_cast<char*>(send) + offset, send_counts[q], q);
    offset += send_counts[q];
  }
  // This rank's own share is copied while the messages travel, on all threads (about half of the
  // bytes where names or ids go to their owners by hash: 250 MB of one rank's names at 50M nodes,
  // whose pages the copy also faults in).
  uint64_t own = 0;
  for (int q = 0; q < rank; ++q) own += recv_counts[q];
  const uint64_t bytes = send_counts[rank];
  const auto pieces = std::ptrdiff_t((bytes + kCopyPiece - 1) / kCopyPiece);
#pragma omp parallel for schedule(static) if (pieces > 1)
  for (std::ptrdiff_t k = 0; k < pieces; ++k) {
    const uint64_t at = uint64_t(k) * kCopyPiece;
    std::memcpy(recv + own + at, send + mine + at, std::min(kCopyPiece, bytes - at));
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

}  // namespace pgsim::dist
