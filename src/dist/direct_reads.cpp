#include "dist/direct_reads.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

namespace pgsim::dist {
namespace {

// What host_peers keeps on comm: the answer, and the token this rank published for the check.
struct Cached {
  HostPeers peers;
  uint64_t token = 0;
};

int delete_cached(MPI_Comm, int, void* value, void*) {
  delete static_cast<Cached*>(value);
  return MPI_SUCCESS;
}

int cached_key() {
  static const int key = [] {
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cached, &k, nullptr);
    return k;
  }();
  return key;
}

// [to, to + bytes) = process pid's [from, from + bytes); false when the kernel refuses or
// the range is not all there.
bool read_range(pid_t pid, uint64_t from, char* to, uint64_t bytes) {
  while (bytes > 0) {
    iovec local{to, bytes}, remote{reinterpret_cast<void*>(from), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return false;
    to += got, from += uint64_t(got), bytes -= uint64_t(got);
  }
  return true;
}

}  // namespace

const HostPeers& host_peers(MPI_Comm comm, bool may_read) {
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, cached_key(), &value, &found);
  if (found) return static_cast<Cached*>(value)->peers;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  auto cached = std::make_unique<Cached>();
  // A host is named by its lowest rank of comm.
  MPI_Comm host;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
  int leader = rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, host);
  MPI_Comm_free(&host);
  std::random_device random;
  cached->token = (uint64_t(random()) << 32 ^ uint64_t(random())) ^
                  uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  struct Card {
    int64_t pid, leader;
    uint64_t token, token_at;
  };
  const Card mine{int64_t(getpid()), leader, cached->token, reinterpret_cast<uint64_t>(&cached->token)};
  std::vector<Card> cards(static_cast<size_t>(ranks));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE, comm);
  HostPeers& peers = cached->peers;
  peers.pid.resize(size_t(ranks));
  peers.local.resize(size_t(ranks));
  // [0]: every peer of this host read back its token (the same process, and the kernel lets it);
  // [1]: this rank has a peer on its host.
  int checks[2] = {may_read ? 1 : 0, 0};
  for (int q = 0; q < ranks; ++q) {
    const Card& c = cards[size_t(q)];
    peers.pid[size_t(q)] = pid_t(c.pid);
    peers.local[size_t(q)] = c.leader == leader;
    if (q == rank || c.leader != leader) continue;
    checks[1] = 1;
    uint64_t seen = 0;
    if (may_read && (!read_range(pid_t(c.pid), c.token_at, reinterpret_cast<char*>(&seen), sizeof seen) || seen != c.token))
      checks[0] = 0;
  }
  int all[2] = {0, 0};
  MPI_Allreduce(&checks[0], &all[0], 1, MPI_INT, MPI_LAND, comm);
  MPI_Allreduce(&checks[1], &all[1], 1, MPI_INT, MPI_LOR, comm);
  peers.readable = all[0] && all[1];
  MPI_Comm_set_attr(comm, cached_key(), cached.get());
  return cached.release()->peers;
}

bool read_directly(const std::vector<DirectRead>& reads, uint64_t piece) {
  struct Piece {
    size_t read;
    uint64_t offset, bytes;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < reads.size(); ++i)
    for (uint64_t at = 0; at < reads[i].bytes; at += piece) pieces.push_back({i, at, std::min(piece, reads[i].bytes - at)});
  int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(max : failed)
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(pieces.size()); ++k) {
    const Piece& p = pieces[size_t(k)];
    const DirectRead& r = reads[p.read];
    if (!read_range(r.pid, r.remote + p.offset, r.local + p.offset, p.bytes)) failed = 1;
  }
  return failed == 0;
}

}  // namespace pgsim::dist
