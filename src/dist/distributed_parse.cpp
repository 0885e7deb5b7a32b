#include "dist/distributed_parse.hpp"

#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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
constexpr size_t kNameShards = 256;      // an owner's names are matched in this many independent tables

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

// Counts of a per-thread counting sort by destination rank: [thread][rank].
struct Buckets {
  std::vector<std::vector<uint64_t>> names, bytes;
  Buckets(int threads, int ranks)
      : names(threads, std::vector<uint64_t>(ranks, 0)), bytes(threads, std::vector<uint64_t>(ranks, 0)) {}
};

// The node ids of a rank's local names (5. of the header comment).
struct Numbering {
  std::vector<uint32_t> global;  // by local id; global[0] = 0 (ground)
  uint32_t first_node = 1, total_nodes = 1;
  NameTable owned;
};

// Names this rank sends to their owners: [uint32 size][bytes] records, grouped by owner, in local
// order within each group. order[i] is local name i's place in that order (i >= 1).
struct Outgoing {
  FillVector<char> records;
  FillVector<uint32_t> order;
  std::vector<uint64_t> names, bytes;  // per owner
};

Outgoing group_by_owner(const NameTable& local, int ranks) {
  const uint32_t n = local.size();
  const int threads = std::max(1, omp_get_max_threads());
  Outgoing out;
  out.order.resize(n);
  Buckets counts(threads, ranks);
  const auto block = [&](int t) { return std::pair<uint32_t, uint32_t>(uint32_t(1 + uint64_t(n - 1) * t / threads), uint32_t(1 + uint64_t(n - 1) * (t + 1) / threads)); };
  if (n > 0) {
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = block(t);
      for (uint32_t i = b; i < e; ++i) {
        const auto q = static_cast<uint32_t>(NameTable::hash(local[i]) % uint64_t(ranks));
        out.order[i] = q;  // the owner, for now
        ++counts.names[t][q];
        counts.bytes[t][q] += 4 + local[i].size();
      }
    }
  }
  // Where each thread's names for each owner go: owners in order, threads in order within each.
  out.names.assign(ranks, 0);
  out.bytes.assign(ranks, 0);
  uint64_t name_at = 0, byte_at = 0;
  for (int q = 0; q < ranks; ++q)
    for (int t = 0; t < threads; ++t) {
      const uint64_t names = counts.names[t][q], bytes = counts.bytes[t][q];
      counts.names[t][q] = name_at, counts.bytes[t][q] = byte_at;
      name_at += names, byte_at += bytes;
      out.names[q] += names, out.bytes[q] += bytes;
    }
  out.records.resize(byte_at);
  if (n > 0) {
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = block(t);
      for (uint32_t i = b; i < e; ++i) {
        const uint32_t q = out.order[i];
        const std::string_view name = local[i];
        const auto size = static_cast<uint32_t>(name.size());
        char* p = out.records.data() + counts.bytes[t][q];
        std::memcpy(p, &size, 4);
        std::memcpy(p + 4, name.data(), size);
        counts.bytes[t][q] += 4 + size;
        out.order[i] = static_cast<uint32_t>(counts.names[t][q]++);
      }
    }
  }
  return out;
}

// An owner's view of the names it received (from rank 0, then rank 1, ...): for each, the index
// of the first received name equal to it (ASCII case ignored): itself when it is the first
// appearance in file order, since ranks hold the file in order and send each name once.
FillVector<uint32_t> first_appearances(const FillVector<char>& records, uint64_t count) {
  FillVector<uint64_t> at(count), hash(count);
  for (uint64_t k = 0, p = 0; k < count; ++k) {
    uint32_t size;
    std::memcpy(&size, records.data() + p, 4);
    at[k] = p;
    p += 4 + size;
  }
  const auto name = [&](uint64_t k) {
    uint32_t size;
    std::memcpy(&size, records.data() + at[k], 4);
    return std::string_view(records.data() + at[k] + 4, size);
  };
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < int64_t(count); ++k) hash[k] = NameTable::hash(name(uint64_t(k)));
  // Names grouped by shard (high hash bits), in received order within each: a counting sort, each
  // thread counting then placing one contiguous range of the names, after the threads before it.
  const int threads = std::max(1, omp_get_max_threads());
  std::vector<uint64_t> shard_begin(kNameShards + 1, 0);
  std::vector<uint64_t> next(size_t(threads) * kNameShards, 0);  // [thread][shard]: a count, then where it writes
  FillVector<uint32_t> by_shard(count);
  const auto range = [&](int t) {
    return std::pair<uint64_t, uint64_t>(count * uint64_t(t) / uint64_t(threads), count * uint64_t(t + 1) / uint64_t(threads));
  };
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const auto [b, e] = range(t);
    uint64_t* mine = &next[size_t(t) * kNameShards];
    for (uint64_t k = b; k < e; ++k) ++mine[hash[k] >> 56];
#pragma omp barrier
#pragma omp single
    {
      uint64_t place = 0;
      for (size_t s = 0; s < kNameShards; ++s) {
        shard_begin[s] = place;
        for (int u = 0; u < threads; ++u) {
          const uint64_t c = next[size_t(u) * kNameShards + s];
          next[size_t(u) * kNameShards + s] = place;
          place += c;
        }
      }
      shard_begin[kNameShards] = place;
    }
    for (uint64_t k = b; k < e; ++k) by_shard[mine[hash[k] >> 56]++] = static_cast<uint32_t>(k);
  }
  FillVector<uint32_t> first(count);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t s = 0; s < int64_t(kNameShards); ++s) {
    const uint64_t b = shard_begin[s], e = shard_begin[s + 1];
    size_t slots = 16;
    while (slots < 2 * (e - b)) slots *= 2;
    std::vector<uint32_t> table(slots, 0);  // received index + 1; 0: empty
    const size_t mask = slots - 1;
    for (uint64_t j = b; j < e; ++j) {
      const uint32_t k = by_shard[j];
      for (size_t slot = (hash[k] >> 16) & mask;; slot = (slot + 1) & mask) {
        if (table[slot] == 0) {
          table[slot] = k + 1;
          first[k] = k;
          break;
        }
        const uint32_t f = table[slot] - 1;
        if (hash[f] == hash[k] && NameTable::same(name(f), name(k))) {
          first[k] = f;
          break;
        }
      }
    }
  }
  return first;
}

Numbering number_nodes(const NameTable& local, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const uint32_t n = local.size();
  Numbering result;
  // Round 1: the names to their owners; each learns which of its names this rank saw first.
  Outgoing out;
  agree_on_failure(comm, [&] { out = group_by_owner(local, ranks); });
  const std::vector<uint64_t> in_names = exchange_counts(out.names, comm), in_bytes = exchange_counts(out.bytes, comm);
  uint64_t received = 0;
  for (uint64_t c : in_names) received += c;
  FillVector<char> records;
  agree_on_failure(comm, [&] {
    if (received >= UINT32_MAX) throw InputError("more than 2^32 node names for one rank to match: use more ranks");
    uint64_t bytes = 0;
    for (uint64_t c : in_bytes) bytes += c;
    records.resize(bytes);
  });
  exchange_bytes(out.records.data(), out.bytes, records.data(), in_bytes, comm);
  decltype(out.records)().swap(out.records);
  FillVector<uint32_t> first;
  FillVector<uint8_t> is_first;
  agree_on_failure(comm, [&] {
    first = first_appearances(records, received);
    decltype(records)().swap(records);
    is_first.resize(received);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < int64_t(received); ++k) is_first[k] = first[k] == uint64_t(k);
  });
  const std::vector<uint8_t> mine = exchange<uint8_t>(is_first, in_names, out.names, comm);
  decltype(is_first)().swap(is_first);

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

  // Round 2: owned ids to the owners, every name's id back.
  FillVector<uint32_t> ids;
  agree_on_failure(comm, [&] {
    result.global.assign(n, 0);
    ids.resize(n > 0 ? n - 1 : 0);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      auto next = static_cast<uint32_t>(result.first_node + owned_before[size_t(t)]);
      for (uint32_t i = b; i < e; ++i) {
        if (mine[out.order[i]]) result.global[i] = next++;
        ids[out.order[i]] = result.global[i];
      }
    }
  });
  std::vector<uint32_t> at_owner = exchange<uint32_t>(ids, out.names, in_names, comm);
  decltype(ids)().swap(ids);
  // first[k] <= k, and entries that are first appearances keep the id their sender gave.
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < int64_t(received); ++k) at_owner[k] = at_owner[first[k]];
  decltype(first)().swap(first);
  const std::vector<uint32_t> back = exchange<uint32_t>(at_owner, in_names, out.names, comm);
  std::vector<uint32_t>().swap(at_owner);
  agree_on_failure(comm, [&] {
    // Owned names, in local order (their id order), without a hash index: each thread's range's
    // bytes, then the names placed from where the ranges before it end.
    std::vector<uint64_t> bytes_before(size_t(threads) + 1, 0);
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      uint64_t bytes = 0;
      for (uint32_t i = b; i < e; ++i) {
        result.global[i] = back[out.order[i]];
        if (mine[out.order[i]]) bytes += local[i].size();
      }
      bytes_before[size_t(t) + 1] = bytes;
    }
    for (int t = 0; t < threads; ++t) bytes_before[size_t(t) + 1] += bytes_before[size_t(t)];
    result.owned.extend(static_cast<uint32_t>(owned), bytes_before.back());
    result.owned.drop_index();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      const auto [b, e] = range(t);
      uint64_t offset = bytes_before[size_t(t)];
      for (uint32_t i = b; i < e; ++i)
        if (mine[out.order[i]]) {
          result.owned.place(result.global[i] - result.first_node, offset, local[i]);
          offset += local[i].size();
        }
    }
  });
  return result;
}

// Rank q's first owned node id once ownership is balanced (6. of the header comment); q = ranks:
// total_nodes.
uint32_t balanced_first(int q, int ranks, uint32_t total_nodes) {
  return static_cast<uint32_t>(1 + uint64_t(total_nodes - 1) * uint64_t(q) / uint64_t(ranks));
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
  const std::vector<uint32_t> in_sizes = exchange<uint32_t>(sizes, names, in_names, comm);
  decltype(sizes)().swap(sizes);
  uint64_t total = 0;
  for (uint64_t c : in_bytes) total += c;
  FillVector<char> arena;
  agree_on_failure(comm, [&] { arena.resize(total); });
  exchange_bytes(n > 0 ? seen[0].data() : nullptr, bytes, arena.data(), in_bytes, comm);

  // The received names placed in id order: each thread its range's, after the bytes of those before.
  NameTable owned;
  agree_on_failure(comm, [&] {
    const auto count = static_cast<uint32_t>(in_sizes.size());
    const int threads = std::max(1, omp_get_max_threads());
    std::vector<uint64_t> before(size_t(threads) + 1, 0);
    const auto range = [&](int t) {
      return std::pair<uint32_t, uint32_t>(uint32_t(uint64_t(count) * uint64_t(t) / uint64_t(threads)),
                                           uint32_t(uint64_t(count) * uint64_t(t + 1) / uint64_t(threads)));
    };
    owned.extend(count, total);
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
        owned.place(i, at, std::string_view(arena.data() + at, in_sizes[i]));
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

}  // namespace

RankNetlist parse_distributed(const std::string& path, MPI_Comm comm, const ParseOptions& options,
                              const std::vector<uint64_t>& split_at) {
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
  std::exception_ptr failure;
  try {
    part = parse_netlist_part(path, begin, end, options);
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
  uint64_t elements = part.netlist.elements.size();
  MPI_Allreduce(MPI_IN_PLACE, &elements, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (elements == 0) throw InputError(path + ": the netlist has no elements");
  const std::optional<std::string> transient = transient_place(part, line_offset);
  if (const int q = lowest_rank_where(transient.has_value(), comm); q < ranks)
    throw_everywhere(comm, q, transient ? std::make_exception_ptr(InputError(
                                              *transient + ": transient input (.tran, PULSE or PWL sources, .print) runs in "
                                                           "one process only: run pgsim without mpirun"))
                                        : nullptr);

  // 5. Global node ids; elements renumbered, their top-file lines the whole file's.
  const double parsed = watch.lap();
  const uint32_t local_names = part.netlist.node_names.size();
  Numbering numbering = number_nodes(part.netlist.node_names, comm);
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
  std::vector<uint32_t>().swap(numbering.global);
  const double renumbered = watch.lap();
  const uint32_t first_seen = numbering.owned.size();
  out.first_node = balanced_first(rank, ranks, numbering.total_nodes);
  out.total_nodes = numbering.total_nodes;
  out.owned_names = balance_owned(numbering.owned, numbering.first_node, numbering.total_nodes, comm);
  numbering.owned = NameTable();
  out.elements = std::move(el);
  out.element_names = std::move(part.netlist.element_names);
  out.files = std::move(part.netlist.files);
  out.bytes_read = part.netlist.bytes_read;
  log_step(comm, fmt::format("distributed parse on rank {}: its range parsed {:.3f} s, checks and warnings {:.3f} s (with "
                             "the wait for the slowest range), node ids {:.3f} s ({} names seen, {} first seen here), "
                             "elements renumbered {:.3f} s, ownership balanced {:.3f} s ({} nodes of its own); peak host "
                             "memory {:.0f} MB",
                             rank, range_parsed, parsed, numbered, local_names, first_seen, renumbered, watch.lap(),
                             out.owned(), double(host_memory().peak) / 1e6));
  return out;
}

}  // namespace pgsim::dist
