#include "dist/distributed_parse.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "dist/byte_exchange.hpp"
#include "dist/collective_error.hpp"
#include "dist/step_log.hpp"
#include "mna/host_memory.hpp"
#include "mna/stopwatch.hpp"
#include "parser/chunk_parser.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist_input.hpp"
#include "parser/netlist_part.hpp"

namespace pgsim::dist {
namespace {

constexpr size_t kCutWindow = 1 << 16;   // bytes read first when looking for a range's start

// The first legal cut at or after `target` of the file (of `size` bytes): 0, a line start whose
// line is not a '+' continuation, or `size`. Reads from target - 1 (whether it ends a line),
// as much as it takes: a window, doubled while continuation lines fill it.
uint64_t first_cut_at_or_after(const std::string& path, uint64_t target, uint64_t size) {
  if (target == 0) return 0;
  if (target >= size) return size;
  FileRangeInput input(path, target - 1, size);
  std::vector<char> window;
  for (size_t want = kCutWindow;; want = window.size()) {
    const size_t had = window.size();
    window.resize(had + want);
    const size_t got = input.read(window.data() + had, want);
    window.resize(had + got);
    // A start whose line is judged within the window, or none in it.
    const size_t cut = next_cut(window.data(), 0, window.size());
    if (cut < window.size() || got < want) return target - 1 + cut;
  }
}

// Counts of a per-thread counting sort by destination rank: [thread][rank], and of each thread's
// names for each rank by the owner's shard (first_appearances): [thread][rank * shards + shard].
// The small [thread][rank] vectors' heap blocks share cache lines between threads, so a thread
// counts in vectors of its own and stores them here once (mna/per_thread.hpp says why).
struct Buckets {
  std::vector<std::vector<uint64_t>> names, bytes, shards;
  Buckets(int threads, int ranks, size_t shard_count)
      : names(threads, std::vector<uint64_t>(ranks, 0)), bytes(threads, std::vector<uint64_t>(ranks, 0)),
        shards(threads, std::vector<uint64_t>(ranks * shard_count, 0)) {}
};

// The shards an owner matches its received names in (first_appearances): about 4096 names a
// shard, from the names of all ranks over the ranks (what an owner receives where the names
// are spread evenly). The same on every rank: senders count their names by the owner's shard.
int shard_bits_for(uint64_t names_per_owner) {
  int bits = 8;
  while (bits < 20 && (names_per_owner >> bits) > 4096) ++bits;
  return bits;
}

// A name's shard at its owner: the high bits of its hash (the owner is its hash % P).
size_t shard_of(uint64_t h, int shard_bits) { return size_t(h >> (64 - shard_bits)); }

// The node ids of a rank's local names (5. of the header comment).
struct Numbering {
  FillVector<uint32_t> global;  // by local id; global[0] = 0 (ground)
  uint32_t first_node = 1, total_nodes = 1;
  NameTable owned;
  // -v: seconds of the step's parts, in order: names grouped by owner, names exchanged, first
  // appearances found (by the owners), flags back, ids numbered, ids exchanged (to the owners and
  // back), owned names kept.
  std::array<double, 7> seconds{};
  uint64_t bytes_out = 0, bytes_in = 0;  // -v: the names' bytes sent to and received from other ranks
};

// Names this rank sends to their owners: [uint32 size][bytes] records, grouped by owner, in local
// order within each group. order[i] is local name i's place in that order (i >= 1). Each owner's
// group is `threads` pieces, one per thread's block of local names: pieces[stride (q threads + t)
// + k], stride = 2 + shards, is for k = 0 and 1 the names and bytes of thread t's piece for owner
// q, so that the owner can find the records' starts on all threads (a record's start is known
// only from the one before it), and for k = 2 + s its names in the owner's shard s, so that the
// owner places them by shard without hashing them first (it hashes each name once, not twice).
// The records for this rank itself do not travel (OwnShare::kLeft): they are in `own`, and their
// place in `records` is never written (nor paged in), so that `records` can be freed as soon as
// the others' shares are sent while `own` is read.
struct Outgoing {
  FillVector<char> records, own;
  FillVector<uint32_t> order;
  std::vector<uint64_t> names, bytes;  // per owner
  std::vector<uint64_t> pieces;
  int threads = 1, shard_bits = 8;
};

Outgoing group_by_owner(const NameTable& local, int rank, int ranks, int shard_bits) {
  const uint32_t n = local.size();
  const int threads = std::max(1, omp_get_max_threads());
  const size_t shards = size_t(1) << shard_bits, stride = 2 + shards;
  Outgoing out;
  out.threads = threads;
  out.shard_bits = shard_bits;
  out.order.resize(n);
  Buckets counts(threads, ranks, shards);
  const auto block = [&](int t) { return std::pair<uint32_t, uint32_t>(uint32_t(1 + uint64_t(n - 1) * t / threads), uint32_t(1 + uint64_t(n - 1) * (t + 1) / threads)); };
  if (n > 0) {
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = block(t);
      uint64_t* by_shard = counts.shards[t].data();
      std::vector<uint64_t> names(size_t(ranks), 0), bytes(size_t(ranks), 0);
      for (uint32_t i = b; i < e; ++i) {
        const uint64_t h = NameTable::hash(local[i]);
        const auto q = static_cast<uint32_t>(h % uint64_t(ranks));
        out.order[i] = q;  // the owner, for now
        ++names[q];
        bytes[q] += 4 + local[i].size();
        ++by_shard[q * shards + shard_of(h, shard_bits)];
      }
      counts.names[t] = std::move(names);
      counts.bytes[t] = std::move(bytes);
    }
  }
  // Where each thread's names for each owner go: owners in order, threads in order within each.
  out.names.assign(ranks, 0);
  out.bytes.assign(ranks, 0);
  out.pieces.assign(stride * ranks * threads, 0);
  uint64_t name_at = 0, byte_at = 0;
  for (int q = 0; q < ranks; ++q)
    for (int t = 0; t < threads; ++t) {
      const uint64_t names = counts.names[t][q], bytes = counts.bytes[t][q];
      uint64_t* piece = &out.pieces[stride * (size_t(q) * threads + t)];
      piece[0] = names;
      piece[1] = bytes;
      std::copy_n(&counts.shards[t][q * shards], shards, piece + 2);
      counts.names[t][q] = name_at, counts.bytes[t][q] = byte_at;
      name_at += names, byte_at += bytes;
      out.names[q] += names, out.bytes[q] += bytes;
    }
  out.records.resize(byte_at);
  out.own.resize(out.bytes[rank]);
  const uint64_t own_at = counts.bytes[0][rank];  // where the own share's place begins
  if (n > 0) {
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = block(t);
      std::vector<uint64_t> names = counts.names[t], bytes = counts.bytes[t];  // the thread's own cursors (Buckets)
      for (uint32_t i = b; i < e; ++i) {
        const uint32_t q = out.order[i];
        const std::string_view name = local[i];
        const auto size = static_cast<uint32_t>(name.size());
        char* p = q == uint32_t(rank) ? out.own.data() + (bytes[q] - own_at) : out.records.data() + bytes[q];
        std::memcpy(p, &size, 4);
        std::memcpy(p + 4, name.data(), size);
        bytes[q] += 4 + size;
        out.order[i] = static_cast<uint32_t>(names[q]++);
      }
    }
  }
  return out;
}

// A run of received records (a sender thread's piece): `names` of them from `data` on, the first
// the `first`-th name received (senders in rank order); shard_counts[s]: how many of them are in
// shard s (the sender's counts, Outgoing).
struct Piece {
  const char* data;
  uint64_t names, first;
  const uint64_t* shard_counts;
};

// A received name as its owner matches it: bits 16 to 47 of its hash (its tag: the table's slot,
// and a first test of equality), its index among the names received, and its record ([uint32
// size][bytes]). 16 bytes: the entries are the largest array of the step.
struct Entry {
  uint32_t tag, index;
  const char* record;
};

std::string_view name_of(const char* record) {
  uint32_t size;
  std::memcpy(&size, record, 4);
  return {record + 4, size};
}

// An owner's view of the names it received (from rank 0, then rank 1, ...): for each, the index
// of the first received name equal to it (ASCII case ignored): itself when it is the first
// appearance in file order, since ranks hold the file in order and send each name once.
//
// How: the names are sorted by shard (high hash bits, shard_bits of them; a stable counting sort,
// each piece placed on all threads after the pieces before it, from the counts its sender made
// while it hashed the name to find its owner), each as an Entry (tag and record), so that
// matching a shard's names reads its own entries in order and a table small enough for the
// cache (about 4096 names a shard); a name is hashed once here. Apart from the text of names
// that match (a name seen on several ranks), only first[] is written out of order.
FillVector<uint32_t> first_appearances(const std::vector<Piece>& pieces, uint64_t count, int shard_bits) {
  const size_t shards = size_t(1) << shard_bits;
  // Calls f(index, record, hash) for each of piece j's names, in order.
  const auto walk = [&](size_t j, auto&& f) {
    const char* record = pieces[j].data;
    for (uint64_t k = pieces[j].first, e = k + pieces[j].names; k < e; ++k) {
      const std::string_view name = name_of(record);
      f(k, record, NameTable::hash(name));
      record = name.data() + name.size();
    }
  };
  const auto piece_count = static_cast<int64_t>(pieces.size());
  std::vector<uint64_t> next(pieces.size() * shards, 0);  // [piece][shard]: where it writes
  std::vector<uint64_t> shard_begin(shards + 1, 0);
  uint64_t place = 0;
  for (size_t s = 0; s < shards; ++s) {
    shard_begin[s] = place;
    for (size_t j = 0; j < pieces.size(); ++j) {
      next[j * shards + s] = place;
      place += pieces[j].shard_counts[s];
    }
  }
  shard_begin[shards] = place;
  if (place != count) throw std::logic_error("first_appearances: shard counts and names disagree");
  FillVector<Entry> entries(count);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = 0; j < piece_count; ++j) {
    uint64_t* mine = &next[size_t(j) * shards];
    walk(size_t(j), [&](uint64_t k, const char* record, uint64_t h) { entries[mine[shard_of(h, shard_bits)]++] = {uint32_t(h >> 16), uint32_t(k), record};
    });
  }
  FillVector<uint32_t> first(count);
#pragma omp parallel
  {
    std::vector<uint32_t> table;  // an entry's place in its shard + 1; 0: empty
#pragma omp for schedule(dynamic, 16)
    for (int64_t s = 0; s < int64_t(shards); ++s) {
      const Entry* shard = entries.data() + shard_begin[s];
      const uint64_t size = shard_begin[s + 1] - shard_begin[s];
      size_t slots = 16;
      while (slots < 2 * size) slots *= 2;
      table.assign(slots, 0);
      const size_t mask = slots - 1;
      for (uint64_t j = 0; j < size; ++j) {
        const Entry& x = shard[j];
        for (size_t slot = x.tag & mask;; slot = (slot + 1) & mask) {
          if (table[slot] == 0) {
            table[slot] = static_cast<uint32_t>(j + 1);
            first[x.index] = x.index;
            break;
          }
          const Entry& y = shard[table[slot] - 1];
          if (y.tag == x.tag && NameTable::same(name_of(y.record), name_of(x.record))) {
            first[x.index] = y.index;
            break;
          }
        }
      }
    }
  }
  return first;
}

// Round 1 of number_nodes: every rank's names to their owners, each name's first appearance found
// there. The names' bytes travel without this rank's own share, which the owner reads in `out`.
FillVector<uint32_t> names_to_owners(Outgoing& out, const std::vector<uint64_t>& in_names, uint64_t received,
                                     MPI_Comm comm, Numbering& numbering, Stopwatch& watch) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const std::vector<uint64_t> in_bytes = exchange_counts(out.bytes, comm);
  const uint64_t stride = 2 + (uint64_t(1) << out.shard_bits);
  const std::vector<uint64_t> piece_counts(ranks, stride * uint64_t(out.threads));
  const std::vector<uint64_t> in_piece_counts = exchange_counts(piece_counts, comm);  // senders' threads may differ
  const FillVector<uint64_t> in_pieces = exchange<uint64_t>(out.pieces, piece_counts, in_piece_counts, comm);
  FillVector<char> records;
  agree_on_failure(comm, [&] {
    uint64_t bytes = 0;
    for (uint64_t c : in_bytes) bytes += c;
    records.resize(bytes);
  });
  exchange_bytes(out.records.data(), out.bytes, records.data(), in_bytes, comm, OwnShare::kLeft);
  decltype(out.records)().swap(out.records);
  numbering.seconds[1] = watch.lap();
  for (int q = 0; q < ranks; ++q)
    if (q != rank) numbering.bytes_out += out.bytes[q], numbering.bytes_in += in_bytes[q];
  // The pieces in rank order: senders' threads in order within each rank.
  std::vector<Piece> pieces;
  uint64_t name_at = 0, byte_at = 0, piece = 0;
  for (int q = 0; q < ranks; ++q) {
    const char* data = q == rank ? out.own.data() : records.data() + byte_at;
    uint64_t in_rank = 0;
    for (const uint64_t end = piece + in_piece_counts[q] / stride; piece < end; ++piece) {
      const uint64_t* p = &in_pieces[stride * piece];
      pieces.push_back({data, p[0], name_at, p + 2});
      data += p[1], name_at += p[0], in_rank += p[0];
    }
    if (in_rank != in_names[q]) throw std::logic_error("names_to_owners: pieces and counts disagree");
    byte_at += in_bytes[q];
  }
  if (name_at != received) throw std::logic_error("names_to_owners: pieces and counts disagree");
  FillVector<uint32_t> first;
  agree_on_failure(comm, [&] { first = first_appearances(pieces, received, out.shard_bits); });
  return first;
}

Numbering number_nodes(const NameTable& local, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint32_t n = local.size();
  Numbering result;
  Stopwatch watch;
  // Round 1: the names to their owners; each learns which of its names this rank saw first.
  Outgoing out;
  uint64_t all_names = n;
  MPI_Allreduce(MPI_IN_PLACE, &all_names, 1, MPI_UINT64_T, MPI_SUM, comm);
  agree_on_failure(comm, [&] { out = group_by_owner(local, rank, ranks, shard_bits_for(all_names / uint64_t(ranks))); });
  const std::vector<uint64_t> in_names = exchange_counts(out.names, comm);
  uint64_t received = 0;
  for (uint64_t c : in_names) received += c;
  agree_on_failure(comm, [&] {
    if (received >= UINT32_MAX) throw InputError("more than 2^32 node names for one rank to match: use more ranks");
  });
  result.seconds[0] = watch.lap();
  FillVector<uint32_t> first = names_to_owners(out, in_names, received, comm, result, watch);
  decltype(out.own)().swap(out.own);
  result.seconds[2] = watch.lap();
  FillVector<uint8_t> is_first;
  agree_on_failure(comm, [&] {
    is_first.resize(received);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < int64_t(received); ++k) is_first[k] = first[k] == uint64_t(k);
  });
  const FillVector<uint8_t> flags = exchange<uint8_t>(is_first, in_names, out.names, comm, OwnShare::kLeft);
  const ReceivedView<uint8_t> mine(is_first.data(), in_names, flags.data(), out.names, rank);
  result.seconds[3] = watch.lap();

  // This rank's first appearances, numbered after the earlier ranks'. Local names 1 .. n - 1 in
  // `threads` contiguous ranges, in order: each thread counts, numbers and places its range's.
  const int threads = std::max(1, omp_get_max_threads());
  const auto range = [&](int t) {
    return std::pair<uint32_t, uint32_t>(uint32_t(1 + uint64_t(n > 0 ? n - 1 : 0) * uint64_t(t) / uint64_t(threads)),
                                         uint32_t(1 + uint64_t(n > 0 ? n - 1 : 0) * uint64_t(t + 1) / uint64_t(threads)));
  };
  std::vector<uint64_t> owned_before(size_t(threads) + 1, 0);  // [t + 1]: thread t's owned names, then offsets
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const auto [b, e] = range(t);
    uint64_t count = 0;
    for (uint32_t i = b; i < e; ++i) count += mine[out.order[i]];
    owned_before[size_t(t) + 1] = count;
  }
  for (int t = 0; t < threads; ++t) owned_before[size_t(t) + 1] += owned_before[size_t(t)];
  uint64_t owned = owned_before.back(), before = 0, all = 0;
  MPI_Exscan(&owned, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
  MPI_Allreduce(&owned, &all, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  if (all + 1 >= NameTable::kProvisional) throw InputError("more than 2^31 node names");  // the same on every rank
  result.first_node = static_cast<uint32_t>(1 + before);
  result.total_nodes = static_cast<uint32_t>(1 + all);

  // Round 2: owned ids to the owners, every name's id back. result.global[i]: the id for now
  // where this rank saw name i first, else 0; bytes_before[t + 1]: the bytes of thread t's range's
  // owned names, then offsets.
  FillVector<uint32_t> ids;
  std::vector<uint64_t> bytes_before(size_t(threads) + 1, 0);
  agree_on_failure(comm, [&] {
    result.global.resize(n);
    ids.resize(n > 0 ? n - 1 : 0);
    if (n > 0) result.global[0] = 0;
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      auto next = static_cast<uint32_t>(result.first_node + owned_before[size_t(t)]);
      uint64_t bytes = 0;
      for (uint32_t i = b; i < e; ++i) {
        const bool owned_here = mine[out.order[i]];
        if (owned_here) bytes += local[i].size();
        result.global[i] = owned_here ? next++ : 0;
        ids[out.order[i]] = result.global[i];
      }
      bytes_before[size_t(t) + 1] = bytes;
    }
  });
  result.seconds[4] = watch.lap();
  const FillVector<uint32_t> at_owner = exchange<uint32_t>(ids, out.names, in_names, comm, OwnShare::kLeft);
  FillVector<uint32_t> answers;
  agree_on_failure(comm, [&] {
    // first[k] <= k, and entries that are first appearances hold the id their sender gave.
    const ReceivedView<uint32_t> given(ids.data(), out.names, at_owner.data(), in_names, rank);
    answers.resize(received);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < int64_t(received); ++k) answers[k] = given[first[k]];
  });
  decltype(first)().swap(first);
  const FillVector<uint32_t> back = exchange<uint32_t>(answers, in_names, out.names, comm, OwnShare::kLeft);
  const ReceivedView<uint32_t> id_of(answers.data(), in_names, back.data(), out.names, rank);
  result.seconds[5] = watch.lap();
  agree_on_failure(comm, [&] {
    // Owned names, in local order (their id order), without a hash index, placed from where the
    // ranges before each thread's end, in the pass that gives the other names their ids (one pass
    // over the local names: a global id of 0 here is a name this rank did not see first).
    for (int t = 0; t < threads; ++t) bytes_before[size_t(t) + 1] += bytes_before[size_t(t)];
    result.owned.extend(static_cast<uint32_t>(owned), bytes_before.back());
    result.owned.drop_index();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      uint64_t offset = bytes_before[size_t(t)];
      for (uint32_t i = b; i < e; ++i) {
        if (result.global[i] == 0) {
          result.global[i] = id_of[out.order[i]];
          continue;
        }
        const std::string_view name = local[i];
        result.owned.place(result.global[i] - result.first_node, offset, name);
        offset += name.size();
      }
    }
  });
  result.seconds[6] = watch.lap();
  return result;
}

// 6. of the header comment: the names of ids [seen_first, seen_first + seen.size()) (this rank's
// first appearances) go to the ranks owning them once balanced, and this rank's balanced names,
// received from their first ranks (in rank order, so in id order), are returned. Each rank's
// first appearances and its balanced range are contiguous runs of ids, so what goes to a rank is
// a contiguous slice of the table, its bytes one contiguous run of the arena: the arena is the
// send buffer as it stands, and the received bytes are the new arena.
NameTable balance_owned(const NameTable& seen, uint32_t seen_first, uint32_t total_nodes, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint32_t n = seen.size(), seen_end = seen_first + n;
  std::vector<uint64_t> names(size_t(ranks), 0), bytes(size_t(ranks), 0);
  const auto offset = [&](uint32_t i) {  // of seen name i in the arena; i = n: its end
    return i == n ? seen.arena_bytes() : uint64_t(seen[i].data() - seen[0].data());
  };
  for (int q = 0; q < ranks; ++q) {
    const uint32_t from = std::max(seen_first, balanced_first(q, ranks, total_nodes));
    const uint32_t to = std::min(seen_end, balanced_first(q + 1, ranks, total_nodes));
    if (from >= to) continue;
    names[size_t(q)] = to - from;
    bytes[size_t(q)] = offset(to - seen_first) - offset(from - seen_first);
  }
  FillVector<uint32_t> sizes;
  agree_on_failure(comm, [&] {
    sizes.resize(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < int64_t(n); ++i) sizes[i] = static_cast<uint32_t>(seen[uint32_t(i)].size());
  });
  const std::vector<uint64_t> in_names = exchange_counts(names, comm), in_bytes = exchange_counts(bytes, comm);
  // This rank's own share (most of its balanced names, where its first appearances were many)
  // stays in `sizes` and `seen` (OwnShare::kLeft), read there when placed.
  const FillVector<uint32_t> sizes_in = exchange<uint32_t>(sizes, names, in_names, comm, OwnShare::kLeft);
  const ReceivedView<uint32_t> in_sizes(sizes.data(), names, sizes_in.data(), in_names, rank);
  uint64_t total = 0, count = 0;
  for (uint64_t c : in_bytes) total += c;
  for (uint64_t c : in_names) count += c;
  const char* const sent = n > 0 ? seen[0].data() : nullptr;
  FillVector<char> arena;
  agree_on_failure(comm, [&] { arena.resize(total); });
  exchange_bytes(sent, bytes, arena.data(), in_bytes, comm, OwnShare::kLeft);
  const ReceivedView<char> text(sent, bytes, arena.data(), in_bytes, rank);

  // The received names placed in id order: each thread its range's, after the bytes of those before.
  NameTable owned;
  agree_on_failure(comm, [&] {
    const int threads = std::max(1, omp_get_max_threads());
    std::vector<uint64_t> before(size_t(threads) + 1, 0);
    const auto range = [&](int t) {
      return std::pair<uint32_t, uint32_t>(uint32_t(uint64_t(count) * uint64_t(t) / uint64_t(threads)),
                                           uint32_t(uint64_t(count) * uint64_t(t + 1) / uint64_t(threads)));
    };
    owned.extend(static_cast<uint32_t>(count), total);
    owned.drop_index();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      uint64_t mine = 0;
      for (uint32_t i = b; i < e; ++i) mine += in_sizes[i];
      before[size_t(t) + 1] = mine;
#pragma omp barrier
#pragma omp single
      for (int u = 0; u < threads; ++u) before[size_t(u) + 1] += before[size_t(u)];
      uint64_t at = before[size_t(t)];
      for (uint32_t i = b; i < e; ++i) {
        owned.place(i, at, std::string_view(text.data(at), in_sizes[i]));
        at += in_sizes[i];
      }
    }
  });
  return owned;
}

// The exception of a part's first error, its line in the whole file.
std::exception_ptr part_error(const NetlistPart& part, uint32_t line_offset) {
  const ParseFailure& f = *part.error;
  if (!f.located) return std::make_exception_ptr(InputError(f.message));
  const uint32_t line = f.where.file == 0 ? f.where.line + line_offset : f.where.line;
  return std::make_exception_ptr(ParseError(part.netlist.files[f.where.file], line, f.message));
}

// Warnings to rank 0 (3. of the header comment), logged there; returns rank 0's log. `finished`:
// the netlist ended without an error, so a duplicate-name summary belongs at the end.
std::vector<std::string> log_warnings(const NetlistPart& part, bool counts, bool finished, const std::string& name,
                                      MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  // [uint64 duplicates] then per warning [uint8 kind][uint32 size][key][uint32 size][message].
  std::string packed;
  const auto put = [&](const void* p, size_t n) { packed.append(static_cast<const char*>(p), n); };
  const auto put_text = [&](const std::string& s) {
    const auto size = static_cast<uint32_t>(s.size());
    put(&size, 4);
    packed += s;
  };
  if (counts) {
    put(&part.duplicates, 8);
    for (const ParseWarning& w : part.warnings) {
      const auto kind = static_cast<uint8_t>(w.kind);
      put(&kind, 1);
      put_text(w.kind == ParseWarning::Kind::UnknownControl ? w.text : std::string());
      put_text(warning_text(w, part.netlist.files));
    }
  }
  std::vector<uint64_t> sizes(ranks, 0);
  sizes[0] = packed.size();
  const std::vector<uint64_t> in = exchange_counts(sizes, comm);
  uint64_t total = 0;
  for (uint64_t c : in) total += c;
  std::string all(total, '\0');
  exchange_bytes(packed.data(), sizes, all.data(), in, comm);
  std::vector<std::string> logged;
  if (rank != 0) return logged;
  const auto log = [&](std::string message) {
    spdlog::warn("{}", message);
    logged.push_back(std::move(message));
  };
  WarningRules rules;
  size_t p = 0;
  const auto get = [&](void* dst, size_t n) {
    std::memcpy(dst, all.data() + p, n);
    p += n;
  };
  const auto get_text = [&] {
    uint32_t size;
    get(&size, 4);
    p += size;
    return std::string(all.data() + p - size, size);
  };
  for (int q = 0; q < ranks; ++q) {
    const size_t end = p + in[q];
    if (p == end) continue;
    uint64_t duplicates, listed = 0;
    get(&duplicates, 8);
    while (p < end) {
      uint8_t kind;
      get(&kind, 1);
      const std::string key = get_text();
      std::string message = get_text();
      if (static_cast<ParseWarning::Kind>(kind) == ParseWarning::Kind::UnknownControl) {
        if (rules.first_control(key)) log(std::move(message));
      } else {
        ++listed;
        if (rules.count_duplicate()) log(std::move(message));
      }
    }
    rules.add_duplicates(duplicates - listed);
  }
  if (finished)
    if (std::optional<std::string> summary = rules.summary(name)) log(std::move(*summary));
  return logged;
}

// Where the part's first transient input is (a file 0 place, its line in the whole file, when
// there is one), or nothing.
std::optional<std::string> transient_place(const NetlistPart& part, uint32_t line_offset) {
  const TransientInputs& t = part.netlist.transient;
  std::vector<SourceLocation> places;
  for (const SourceWaveform& w : t.waveforms) places.push_back(part.netlist.elements[w.element].where());
  if (t.tran) places.push_back({t.tran->file, t.tran->line});
  for (const PrintedNode& p : t.printed) places.push_back({p.file, p.line});
  if (places.empty()) return std::nullopt;
  // Places of the top file first, by line (its includes' places cannot be ordered against them here).
  const SourceLocation where = *std::min_element(places.begin(), places.end(), [](const SourceLocation& a, const SourceLocation& b) {
    return std::pair(a.file != 0, a.line) < std::pair(b.file != 0, b.line);
  });
  return part.netlist.files[where.file] + ":" + std::to_string(where.file == 0 ? where.line + line_offset : where.line);
}

// What the numbering on the ranks' devices asks of them (node_names_on_device.hpp), over MPI.
RankExchange rank_exchange(MPI_Comm comm) {
  RankExchange x;
  MPI_Comm_rank(comm, &x.rank);
  MPI_Comm_size(comm, &x.ranks);
  x.counts = [comm](const std::vector<uint64_t>& counts) { return exchange_counts(counts, comm); };
  x.bytes = [comm](const char* send, const std::vector<uint64_t>& send_bytes, char* recv,
                   const std::vector<uint64_t>& recv_bytes) {
    exchange_bytes(send, send_bytes, recv, recv_bytes, comm, OwnShare::kLeft);
  };
  x.scan = [comm, rank = x.rank](uint64_t value, uint64_t& total) {
    uint64_t before = 0;
    MPI_Exscan(&value, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    return rank == 0 ? 0 : before;  // MPI_Exscan leaves rank 0's result undefined
  };
  x.max = [comm](uint64_t value) {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_UINT64_T, MPI_MAX, comm);
    return value;
  };
  x.agree = [comm](const std::function<void()>& step) { agree_on_failure(comm, step); };
  return x;
}

}  // namespace

RankNetlist parse_distributed(const std::string& path, MPI_Comm comm, const ParseOptions& options,
                              const std::vector<uint64_t>& split_at, const PartReader& read_part) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (!split_at.empty() && (split_at.size() != size_t(ranks) || split_at[0] != 0 || !std::is_sorted(split_at.begin(), split_at.end())))
    throw std::invalid_argument("parse_distributed: split_at must hold one non-decreasing offset per rank, the first 0");

  // 1. Ranges: rank 0's idea of the file's size, each rank's start, gathered.
  uint64_t size = 0, begin = 0;
  agree_on_failure(comm, [&] { size = FileRangeInput(path, 0, 0).file_size(); });
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  agree_on_failure(comm, [&] {
    // r * size / P without overflow.
    const uint64_t r = uint64_t(rank), p = uint64_t(ranks);
    const uint64_t target = split_at.empty() ? size / p * r + size % p * r / p : std::min(split_at[rank], size);
    begin = first_cut_at_or_after(path, target, size);
  });
  std::vector<uint64_t> starts(ranks);
  MPI_Allgather(&begin, 1, MPI_UINT64_T, starts.data(), 1, MPI_UINT64_T, comm);
  const uint64_t end = rank + 1 < ranks ? starts[rank + 1] : size;

  Stopwatch watch;  // -v: the steps' times (dist/step_log.hpp)
  NetlistPart part;
  // The part's node names, and maybe its elements, where its reader left them on its GPU.
  std::unique_ptr<NodeNamesOnDevice> device_names;
  std::shared_ptr<ElementsOnDevice> device_elements;
  std::exception_ptr failure;
  try {
    if (!read_part || !read_part(path, begin, end, options, part, device_names, device_elements)) {
      device_names.reset();
      device_elements.reset();
      part = parse_netlist_part(path, begin, end, options);
    }
    if (device_elements && !device_names) throw std::logic_error("parse_distributed: a reader left elements without names on its device");
  } catch (...) {
    failure = std::current_exception();
  }
  const double range_parsed = watch.lap();  // -v: before the first collective, which waits for the slowest range

  // 2. The first error or .end in file order; the ranks after it count for nothing.
  int stops[2] = {failure || part.error ? rank : ranks, part.ended ? rank : ranks};
  MPI_Allreduce(MPI_IN_PLACE, stops, 2, MPI_INT, MPI_MIN, comm);
  const int error_rank = stops[0] < stops[1] ? stops[0] : ranks;
  const bool counts = rank <= std::min(stops[0], stops[1]);
  if (!counts) {
    part = NetlistPart();
    part.netlist.files = {path};
    device_names.reset();
    device_elements.reset();
  }
  // Lines before this range (uint32 wraps as the serial parse's count does).
  uint64_t lines = part.lines, before = 0;
  MPI_Exscan(&lines, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
  const uint32_t line_offset = rank == 0 ? 0 : static_cast<uint32_t>(before);
  for (ParseWarning& w : part.warnings)
    for (SourceLocation* loc : {&w.where, &w.first})
      if (loc->file == 0) loc->line += line_offset;

  RankNetlist out;
  out.rank = rank;
  out.ranks = ranks;
  out.warnings = log_warnings(part, counts, error_rank == ranks, path, comm);
  if (error_rank < ranks)
    throw_everywhere(comm, error_rank, failure ? failure : rank == error_rank ? part_error(part, line_offset) : nullptr);

  // 4. What a distributed run cannot take.
  uint64_t elements = part.netlist.elements.size() + (device_elements ? device_elements->count() : 0);
  MPI_Allreduce(MPI_IN_PLACE, &elements, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (elements == 0) throw InputError(path + ": the netlist has no elements");
  const std::optional<std::string> transient = transient_place(part, line_offset);
  if (const int q = lowest_rank_where(transient.has_value(), comm); q < ranks)
    throw_everywhere(comm, q, transient ? std::make_exception_ptr(InputError(
                                              *transient + ": transient input (.tran, PULSE or PWL sources, .print) runs in "
                                                           "one process only: run pgsim without mpirun"))
                                        : nullptr);

  // 5. Global node ids (on the ranks' GPUs where every rank's names are there); elements
  // renumbered (there too, where they are), their top-file lines the whole file's.
  const double parsed = watch.lap();
  int on_devices = device_names != nullptr;
  MPI_Allreduce(MPI_IN_PLACE, &on_devices, 1, MPI_INT, MPI_MIN, comm);
  const uint32_t local_names = device_names ? device_names->count() + 1 : part.netlist.node_names.size();
  NodeNumbering on_gpus;
  if (on_devices) try {
      on_gpus = device_names->number(rank_exchange(comm), device_elements.get(), line_offset);
    } catch (const InputError&) {
      throw;  // the netlist's (too many names), the same on every rank
    } catch (const std::exception& e) {
      // A device's failure, thrown on every rank alike (RankExchange::agree): the host numbers the
      // names instead, as where a rank read its range on the CPU.
      if (rank == 0) spdlog::warn("numbering the node ids on the GPUs failed ({}); numbering them on the host", e.what());
      on_devices = 0;
    }
  Numbering numbering;
  if (on_devices) {
    numbering.global = std::move(on_gpus.global);
    numbering.total_nodes = on_gpus.total_nodes;
  } else {
    agree_on_failure(comm, [&] {  // every rank's names, and elements, on the host
      if (device_names) device_names->download(part.netlist.node_names);
      if (device_elements) device_elements->download(part.netlist.elements);
    });
    device_elements.reset();
    numbering = number_nodes(part.netlist.node_names, comm);
  }
  device_names.reset();
  const double numbered = watch.lap();
  part.netlist.node_names = NameTable();
  FillVector<Element>& el = part.netlist.elements;
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < int64_t(el.size()); ++k) {
    Element& e = el[k];
    e.plus = numbering.global[e.plus];
    e.minus = numbering.global[e.minus];
    if (e.file == 0) e.line += line_offset;
  }
  decltype(numbering.global)().swap(numbering.global);
  const double renumbered = watch.lap();
  const uint32_t first_seen = on_devices ? on_gpus.first_seen : numbering.owned.size();
  out.first_node = balanced_first(rank, ranks, numbering.total_nodes);
  out.total_nodes = numbering.total_nodes;
  out.owned_names = on_devices ? std::move(on_gpus.owned)
                               : balance_owned(numbering.owned, numbering.first_node, numbering.total_nodes, comm);
  numbering.owned = NameTable();
  out.elements = std::move(el);
  out.device_elements = std::move(device_elements);
  out.element_names = std::move(part.netlist.element_names);
  out.named_elements = std::move(part.netlist.named_elements);
  out.names_thinned = part.netlist.names_thinned;
  out.files = std::move(part.netlist.files);
  out.bytes_read = part.netlist.bytes_read;
  const std::string how =
      on_devices ? on_gpus.detail
                 : fmt::format("grouped by owner {:.3f} s, names to their owners {:.3f} s ({:.0f} MB out, {:.0f} MB in), "
                               "first appearances {:.3f} s, flags back {:.3f} s, numbered {:.3f} s, ids through the owners "
                               "{:.3f} s, own names kept {:.3f} s",
                               numbering.seconds[0], numbering.seconds[1], double(numbering.bytes_out) / 1e6,
                               double(numbering.bytes_in) / 1e6, numbering.seconds[2], numbering.seconds[3],
                               numbering.seconds[4], numbering.seconds[5], numbering.seconds[6]);
  log_step(comm, fmt::format("distributed parse on rank {}: its range parsed {:.3f} s, checks and warnings {:.3f} s (with "
                             "the wait for the slowest range), node ids {:.3f} s ({} names seen, {} first seen here; {}), "
                             "elements renumbered {:.3f} s, ownership balanced {:.3f} s ({} nodes of its own); peak host "
                             "memory {:.0f} MB",
                             rank, range_parsed, parsed, numbered, local_names, first_seen, how, renumbered, watch.lap(),
                             out.owned(), double(host_memory().peak) / 1e6));
  return out;
}

}  // namespace pgsim::dist
