#include "dist/byte_exchange.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace pgsim::dist {
namespace {

constexpr int kTag = 1717;

}  // namespace

std::vector<uint64_t> exchange_counts(const std::vector<uint64_t>& send_counts, MPI_Comm comm) {
  std::vector<uint64_t> recv_counts(send_counts.size());
  MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, comm);
  return recv_counts;
}

void touch_on_all_threads(char* data, uint64_t count) {
  const auto n = static_cast<int64_t>(count);
  constexpr int64_t kPiece = int64_t(1) << 20;
#pragma omp parallel for schedule(static) if (n > kPiece)
  for (int64_t b = 0; b < n; b += kPiece) std::memset(data + b, 0, size_t(std::min(kPiece, n - b)));
}

void exchange_bytes(const char* send, const std::vector<uint64_t>& send_counts, char* recv,
                    const std::vector<uint64_t>& recv_counts, MPI_Comm comm, OwnShare own_share, uint64_t max_message) {
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
  // This rank's own share is copied while the messages travel.
  uint64_t own = 0;
  for (int q = 0; q < rank; ++q) own += recv_counts[q];
  if (own_share == OwnShare::kCopied && send_counts[rank]) std::memcpy(recv + own, send + mine, send_counts[rank]);
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

}  // namespace pgsim::dist
