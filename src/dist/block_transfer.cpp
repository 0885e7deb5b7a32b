#include "dist/block_transfer.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace pgsim::dist {
namespace {

constexpr int kBlockTag = 3;

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<int32_t>() { return MPI_INT32_T; }
template <>
MPI_Datatype mpi_type<int64_t>() { return MPI_INT64_T; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

template <class T>
void send_vector(const std::vector<T>& v, int dest, MPI_Comm comm) {
  if (v.size() > size_t(std::numeric_limits<int>::max()))
    throw std::length_error("a block array beyond 2^31 entries cannot be sent in one MPI message");
  const auto n = static_cast<int64_t>(v.size());
  MPI_Send(&n, 1, MPI_INT64_T, dest, kBlockTag, comm);
  MPI_Send(v.data(), static_cast<int>(n), mpi_type<T>(), dest, kBlockTag, comm);
}

template <class T>
std::vector<T> receive_vector(MPI_Comm comm) {
  int64_t n = 0;
  MPI_Recv(&n, 1, MPI_INT64_T, 0, kBlockTag, comm, MPI_STATUS_IGNORE);
  std::vector<T> v(static_cast<size_t>(n));
  MPI_Recv(v.data(), static_cast<int>(n), mpi_type<T>(), 0, kBlockTag, comm, MPI_STATUS_IGNORE);
  return v;
}

void send_csr(const CsrMatrix& A, int dest, MPI_Comm comm) {
  send_vector(A.ptr, dest, comm);
  send_vector(A.col, dest, comm);
  send_vector(A.val, dest, comm);
}

CsrMatrix receive_csr(MPI_Comm comm) {
  CsrMatrix A;
  A.ptr = receive_vector<int32_t>(comm);
  A.col = receive_vector<int32_t>(comm);
  A.val = receive_vector<double>(comm);
  A.rows = static_cast<int32_t>(A.ptr.size()) - 1;
  return A;
}

}  // namespace

void send_block(const RankBlock& blk, MPI_Comm comm) {
  const int dest = blk.rank;
  send_vector(std::vector<int64_t>{blk.rank, blk.first_row, blk.global_rows}, dest, comm);
  send_csr(blk.interior, dest, comm);
  send_vector(blk.boundary_rows, dest, comm);
  send_csr(blk.boundary, dest, comm);
  send_vector(blk.halo_global, dest, comm);
  std::vector<int32_t> ranges;  // rank, recv_first, recv_count per neighbour
  for (const Neighbor& nb : blk.neighbors) ranges.insert(ranges.end(), {nb.rank, nb.recv_first, nb.recv_count});
  send_vector(ranges, dest, comm);
  for (const Neighbor& nb : blk.neighbors) send_vector(nb.send, dest, comm);
  send_vector(blk.b, dest, comm);
}

RankBlock receive_block(MPI_Comm comm) {
  RankBlock blk;
  const auto head = receive_vector<int64_t>(comm);
  blk.rank = static_cast<int32_t>(head.at(0));
  blk.first_row = static_cast<int32_t>(head.at(1));
  blk.global_rows = head.at(2);
  blk.interior = receive_csr(comm);
  blk.boundary_rows = receive_vector<int32_t>(comm);
  blk.boundary = receive_csr(comm);
  blk.halo_global = receive_vector<int32_t>(comm);
  const auto ranges = receive_vector<int32_t>(comm);
  for (size_t k = 0; k + 2 < ranges.size(); k += 3) {
    blk.neighbors.push_back({ranges[k], ranges[k + 1], ranges[k + 2], {}});
    blk.neighbors.back().send = receive_vector<int32_t>(comm);
  }
  blk.b = receive_vector<double>(comm);
  return blk;
}

}  // namespace pgsim::dist
