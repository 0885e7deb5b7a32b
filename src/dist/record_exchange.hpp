#pragma once
// Moving arrays of plain records (trivially copyable structs) between the ranks: with MPI's
// collectives, and all_to_all through exchange_bytes (dist/byte_exchange.hpp). Counts are in
// records (through a contiguous MPI type of the record's size for the collectives), so an int
// count reaches 2^31 records rather than 2^31 bytes (a 50M-node input sends hundreds of MB in one
// exchange); a count beyond that is a std::length_error, never a wrapped int.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dist/byte_exchange.hpp"

namespace pgsim::dist {

// The MPI type of one T, freed with the object.
template <class T>
class RecordType {
  static_assert(std::is_trivially_copyable_v<T>, "records travel as bytes");

 public:
  RecordType() {
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~RecordType() { MPI_Type_free(&type_); }
  RecordType(const RecordType&) = delete;
  RecordType& operator=(const RecordType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

inline int record_count(size_t n) {
  if (n > size_t(std::numeric_limits<int>::max()))
    throw std::length_error("an MPI exchange of more than 2^31 records");
  return static_cast<int>(n);
}

// Offsets of consecutive groups of the given sizes (one per rank), checked against int.
inline std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size(), 0);
  size_t at = 0;
  for (size_t q = 0; q < counts.size(); ++q) {
    displs[q] = record_count(at);
    at += size_t(counts[q]);
  }
  record_count(at);
  return displs;
}

// For a send buffer filled on several threads, each thread taking one contiguous range of the
// records in order: count[t * ranks + q] holds thread t's records for rank q, and becomes where
// thread t writes its first one (the buffer grouped by rank, threads in order within each, so
// each rank's records keep their order). Returns the records per rank (all_to_all's counts).
inline std::vector<int> send_places(std::vector<size_t>& count, size_t ranks) {
  const size_t threads = count.size() / ranks;
  std::vector<int> per_rank(ranks, 0);
  size_t at = 0;
  for (size_t q = 0; q < ranks; ++q) {
    const size_t begin = at;
    for (size_t t = 0; t < threads; ++t) {
      const size_t c = count[t * ranks + q];
      count[t * ranks + q] = at;
      at += c;
    }
    per_rank[q] = record_count(at - begin);
  }
  return per_rank;
}

// Every rank's records, in rank order, on every rank.
template <class T>
std::vector<T> all_gather(const std::vector<T>& mine, MPI_Comm comm, std::vector<int>* counts_out = nullptr) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const RecordType<T> type;
  const int n = record_count(mine.size());
  std::vector<int> counts(size_t(ranks), 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  const std::vector<int> displs = displacements(counts);
  std::vector<T> all(size_t(displs.back()) + size_t(counts.back()));
  MPI_Allgatherv(mine.data(), n, type.get(), all.data(), counts.data(), displs.data(), type.get(), comm);
  if (counts_out != nullptr) *counts_out = std::move(counts);
  return all;
}

// Every rank's records on `root` (rank order); other ranks get an empty vector.
template <class T>
std::vector<T> gather_to(int root, const std::vector<T>& mine, MPI_Comm comm) {
  int ranks = 1, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  const RecordType<T> type;
  const int n = record_count(mine.size());
  std::vector<int> counts(size_t(ranks), 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm);
  std::vector<T> all;
  std::vector<int> displs;
  if (rank == root) {
    displs = displacements(counts);
    all.resize(size_t(displs.back()) + size_t(counts.back()));
  }
  MPI_Gatherv(mine.data(), n, type.get(), all.data(), counts.data(), displs.data(), type.get(), root, comm);
  return all;
}

// All-to-all: `send` holds the records for rank 0, then rank 1, ... (send_counts[q] for q).
// `received` becomes the records received, grouped by source rank in rank order, each group in
// the order it was sent; recv_counts[q]: how many came from q. Either vector may be a FillVector
// (parser/default_init.hpp): one received into a FillVector is not zeroed first, so it can become
// an array of its own (a CsrMatrix's) without a copy.
//
// The records travel as exchange_bytes' bytes (dist/byte_exchange.hpp): this rank's own records
// (most of them where the ranks hold neighbouring parts) are copied on all threads, and those of
// a rank on the same host are read on all threads where the ranks may read each other, not
// copied by MPI on one thread.
template <class T, class SendAlloc, class RecvAlloc>
void all_to_all(const std::vector<T, SendAlloc>& send, const std::vector<int>& send_counts, MPI_Comm comm,
                std::vector<int>& recv_counts, std::vector<T, RecvAlloc>& received) {
  static_assert(std::is_trivially_copyable_v<T>, "records travel as bytes");
  recv_counts.assign(send_counts.size(), 0);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  const std::vector<int> rdispls = displacements(recv_counts);
  std::vector<T, RecvAlloc>().swap(received);
  received.resize(size_t(rdispls.back()) + size_t(recv_counts.back()));
  exchange_bytes(reinterpret_cast<const char*>(send.data()), byte_counts<T>(send_counts),
                 reinterpret_cast<char*>(received.data()), byte_counts<T>(recv_counts), comm);
}

// The same, the records received returned as a std::vector.
template <class T, class SendAlloc>
std::vector<T> all_to_all(const std::vector<T, SendAlloc>& send, const std::vector<int>& send_counts, MPI_Comm comm,
                          std::vector<int>& recv_counts) {
  std::vector<T> received;
  all_to_all(send, send_counts, comm, recv_counts, received);
  return received;
}

// Questions answered by the ranks that know the answers: `asked` grouped by that rank (counts[q]
// for rank q), each answered there by answer(question) on all threads (it must not throw), the
// answers back in `asked`'s order. Collective: one all-to-all there, one back.
template <class Q, class Answer>
auto ask_owners(const std::vector<Q>& asked, const std::vector<int>& counts, Answer answer, MPI_Comm comm) {
  using A = decltype(answer(std::declval<const Q&>()));
  std::vector<int> recv_counts, back_counts;
  const std::vector<Q> questions = all_to_all(asked, counts, comm, recv_counts);
  std::vector<A> replies(questions.size());
#pragma omp parallel for schedule(static, 4096)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(questions.size()); ++i) replies[size_t(i)] = answer(questions[size_t(i)]);
  return all_to_all(replies, recv_counts, comm, back_counts);
}

// strings[i], for every i, from the rank that knows it: each rank passes the same number of
// strings, empty where it does not know one (for the names in an error message).
inline std::vector<std::string> merge_known_strings(const std::vector<std::string>& strings, MPI_Comm comm) {
  std::vector<char> mine;  // each string as its length (8 bytes) and its bytes
  for (const std::string& s : strings) {
    const uint64_t n = s.size();
    mine.insert(mine.end(), reinterpret_cast<const char*>(&n), reinterpret_cast<const char*>(&n) + sizeof n);
    mine.insert(mine.end(), s.begin(), s.end());
  }
  std::vector<int> counts;
  const std::vector<char> all = all_gather(mine, comm, &counts);
  std::vector<std::string> out(strings.size());
  size_t at = 0;
  for (size_t q = 0; q < counts.size(); ++q)
    for (size_t i = 0; i < strings.size(); ++i) {
      uint64_t n = 0;
      std::copy(all.begin() + std::ptrdiff_t(at), all.begin() + std::ptrdiff_t(at + sizeof n), reinterpret_cast<char*>(&n));
      at += sizeof n;
      if (out[i].empty()) out[i].assign(all.begin() + std::ptrdiff_t(at), all.begin() + std::ptrdiff_t(at + n));
      at += n;
    }
  return out;
}

}  // namespace pgsim::dist
