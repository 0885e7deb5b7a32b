// The node ids numbered on the ranks' GPUs (gpu_node_ids.hpp; dist/node_names_on_device.hpp says
// why). The steps are the host's (dist/distributed_parse.cpp: number_nodes, balance_owned), each a
// few kernels over a rank's names on the default stream, the exchanges between them through host
// memory (RankExchange):
// 1. Owners: each local name's owner is its hash (device_name_table.cuh) mod the ranks; the names
//    sorted stably by owner give the send order (local order within each owner's run).
// 2. The names to their owners (lengths and text). An owner enters what it received, in rank order,
//    into a hash table, whose slots keep their smallest index: a name's first appearance in file
//    order, since the ranks hold the file in order and each sends a name once.
// 3. A flag back (a byte a name): first seen there or not. Each rank numbers its first appearances
//    in local order after the lower ranks' (RankExchange::scan).
// 4. The ids of the first appearances to the owners, and every name's id back.
// 5. Ownership balanced: each rank's first appearances, in id order, to the ranks owning their ids
//    once balanced (dist::balanced_first), which take them in rank order: their ids' order.
#include "gpu/gpu_node_ids.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <stdexcept>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/device_algorithms.cuh"
#include "gpu/device_name_table.cuh"
#include "gpu/device_stamp.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"
#include "mna/stopwatch.hpp"
#include "parser/input_error.hpp"

namespace pgsim::gpu {
namespace {

// Names k in [0, count) of an arena: chars[offsets[k], offsets[k + 1]).
struct ArenaNames {
  const char* chars;
  const uint64_t* offsets;
  __device__ bool ground(uint32_t) const { return false; }
  __device__ const char* name(uint32_t k, uint32_t& length) const {
    length = uint32_t(offsets[k + 1] - offsets[k]);
    return chars + offsets[k];
  }
};

__device__ inline uint32_t thread_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Step 1: name k's owner, and k (the values the sort by owner carries).
__global__ void owners_of(ArenaNames names, uint32_t count, uint32_t ranks, uint32_t* owner, uint32_t* index) {
  const uint32_t k = thread_index();
  if (k >= count) return;
  uint32_t length;
  const char* name = names.name(k, length);
  owner[k] = uint32_t(name_hash(name, length) % ranks);
  index[k] = k;
}

// starts[q]: where owner q's run begins in `sorted` (ascending), q = 0 .. ranks.
__global__ void run_starts(const uint32_t* sorted, uint32_t count, uint32_t ranks, uint64_t* starts) {
  const uint32_t q = thread_index();
  if (q > ranks) return;
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (sorted[mid] < q) lo = mid + 1;
    else hi = mid;
  }
  starts[q] = lo;
}

// lengths[j]: the length of name which[j]; lengths[count] = 0, for the scan that places them.
__global__ void name_lengths(ArenaNames names, const uint32_t* which, uint32_t count, uint32_t* lengths) {
  const uint32_t j = thread_index();
  if (j > count) return;
  uint32_t length = 0;
  if (j < count) names.name(which[j], length);
  lengths[j] = length;
}

// Step 2: 1 where received name i is its slot's first.
__global__ void first_flags(const uint32_t* slot_of, const uint32_t* first, uint32_t count, uint8_t* flags) {
  const uint32_t i = thread_index();
  if (i < count) flags[i] = first[slot_of[i]] == i;
}

// Step 3: the flags, received in the send order, in local order as 0 or 1 (is_first[count] = 0,
// for the scan that numbers them).
__global__ void flags_in_local_order(const uint8_t* flags, const uint32_t* order, uint32_t count, uint32_t* is_first) {
  const uint32_t j = thread_index();
  if (j < count) is_first[order[j]] = flags[j];
  if (j == count) is_first[count] = 0;
}

// Each sent name's id where this rank saw it first (0 else), in the send order.
__global__ void ids_to_send(const uint32_t* order, const uint32_t* is_first, const uint32_t* place, uint32_t count,
                            uint32_t first_id, uint32_t* ids) {
  const uint32_t j = thread_index();
  if (j >= count) return;
  const uint32_t k = order[j];
  ids[j] = is_first[k] ? first_id + place[k] : 0;
}

// Step 4, at the owner: each slot's id, from its first appearance ...
__global__ void slot_ids(const uint32_t* slot_of, const uint8_t* flags, const uint32_t* ids, uint32_t count,
                         uint32_t* slot_id) {
  const uint32_t i = thread_index();
  if (i < count && flags[i]) slot_id[slot_of[i]] = ids[i];
}

// ... then every received name's.
__global__ void ids_of_slots(const uint32_t* slot_of, const uint32_t* slot_id, uint32_t count, uint32_t* ids) {
  const uint32_t i = thread_index();
  if (i < count) ids[i] = slot_id[slot_of[i]];
}

// At the sender: the answers, received in the send order, in local order.
__global__ void ids_in_local_order(const uint32_t* ids, const uint32_t* order, uint32_t count, uint32_t* global) {
  const uint32_t j = thread_index();
  if (j < count) global[order[j]] = ids[j];
}

// Step 5: which[place[k]] = k for the first appearances, in local order (their ids' order).
__global__ void list_first(const uint32_t* is_first, const uint32_t* place, uint32_t count, uint32_t* which) {
  const uint32_t k = thread_index();
  if (k < count && is_first[k]) which[place[k]] = k;
}

// out[k] = in[k] + base.
__global__ void shifted(const uint64_t* in, uint32_t count, uint64_t base, uint64_t* out) {
  const uint32_t k = thread_index();
  if (k < count) out[k] = in[k] + base;
}

// `count` values of 32 bits or 8 bits, all kNone (0xff bytes).
template <class T>
DeviceBuffer<T> filled_none(size_t count) {
  DeviceBuffer<T> b(count);
  if (count) PGSIM_CUDA(cudaMemsetAsync(b.data(), 0xff, count * sizeof(T)));
  return b;
}

// Names which[j], j < count, of `names` gathered in that order: their lengths (and a 0 after them,
// so that a receiver's scan places them), their places in `text` (count + 1), their text.
struct Gathered {
  DeviceBuffer<uint32_t> lengths;
  DeviceBuffer<uint64_t> at;
  DeviceBuffer<char> text;
};
Gathered gathered(ArenaNames names, const uint32_t* which, uint32_t count) {
  Gathered g;
  g.lengths = DeviceBuffer<uint32_t>(size_t(count) + 1);
  launch(name_lengths, int64_t(count) + 1, names, which, count, g.lengths.data());
  g.at = DeviceBuffer<uint64_t>(size_t(count) + 1);
  exclusive_sum(g.lengths.data(), g.at.data(), int64_t(count) + 1, nullptr);
  g.text = DeviceBuffer<char>(read_back(g.at.data() + count));
  launch(copy_names<ArenaNames>, count, names, which, count, g.at.data(), uint64_t(0), g.text.data(),
         static_cast<uint64_t*>(nullptr));
  return g;
}

// Sums of counts (uint64) from offset 0: at[q] for q = 0 .. counts.size().
std::vector<uint64_t> offsets_of(const std::vector<uint64_t>& counts) {
  std::vector<uint64_t> at(counts.size() + 1, 0);
  for (size_t q = 0; q < counts.size(); ++q) at[q + 1] = at[q] + counts[q];
  return at;
}

// The exchanges of one numbering: parts of device buffers between the ranks, through two pinned
// host buffers reused round after round. A pageable buffer as large as a part (the names: about
// 250 MB a rank at 50M nodes, P = 2) was faulted in three times over (the download's copy, the
// exchange, the upload's copy); pinned memory is not, and the DMA engines fill and drain it.
// Rounds of 32 MB on huge pages (the pgsim executable advises large blocks onto them,
// app/huge_pages.cpp), pinned by cudaHostRegister, so that the other rank's direct reads walk 2 MB
// pages. The names' exchange at 50M nodes, P = 2 (benchmarks/dist/README.md): 0.186 s through
// pageable buffers, 0.10-0.12 s in rounds of 8 MB of cudaHostAlloc's memory, 0.06-0.12 s so.
class Exchanger {
 public:
  explicit Exchanger(const dist::RankExchange& ranks) : ranks_(ranks) {}
  ~Exchanger() {
    if (stream_) cudaStreamDestroy(stream_);
    if (pinned_) cudaHostUnregister(buffers_.data());
  }
  Exchanger(const Exchanger&) = delete;
  Exchanger& operator=(const Exchanger&) = delete;

  // Parts of `send` (send_counts[q] values for rank q, in rank order) to the ranks, received on
  // this device in rank order (recv_counts[q] from rank q), with `spare` zeros after them. This
  // rank's own part is copied on the device; the others go in rounds of at most kRound bytes a
  // pair, down into the pinned buffer, through RankExchange::bytes into the other's, and up.
  template <class T>
  DeviceBuffer<T> parts(const T* send, const std::vector<uint64_t>& send_counts, const std::vector<uint64_t>& recv_counts,
                        size_t spare = 0) {
    const auto P = send_counts.size(), me = size_t(ranks_.rank);
    const std::vector<uint64_t> send_at = offsets_of(send_counts), recv_at = offsets_of(recv_counts);
    const uint64_t share = kRound / std::max<uint64_t>(P - 1, 1);  // bytes a pair per round
    uint64_t largest = 0;  // of this rank's pairs' parts, in bytes
    for (size_t q = 0; q < P; ++q)
      if (q != me) largest = std::max({largest, send_counts[q] * sizeof(T), recv_counts[q] * sizeof(T)});
    const uint64_t rounds = (ranks_.max(largest) + share - 1) / share;  // the same on every rank
    DeviceBuffer<T> recv;
    ranks_.agree([&] {
      if (!pinned_) {
        Stopwatch made;
        PGSIM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        buffers_.resize(2 * kRound);  // faulted in (on huge pages) by the pinning
        PGSIM_CUDA(cudaHostRegister(buffers_.data(), buffers_.size(), cudaHostRegisterDefault));
        pinned_ = true;
        out_ = buffers_.data(), in_ = buffers_.data() + kRound;
        setup_seconds_ = made.lap();
      }
      recv = DeviceBuffer<T>(recv_at.back() + spare);
      if (spare) PGSIM_CUDA(cudaMemsetAsync(recv.data() + recv_at.back(), 0, spare * sizeof(T)));
      PGSIM_CUDA(cudaStreamSynchronize(nullptr));  // the kernels that wrote `send`, and the memset
      if (send_counts[me] > 0)
        PGSIM_CUDA(cudaMemcpyAsync(recv.data() + recv_at[me], send + send_at[me], send_counts[me] * sizeof(T),
                                   cudaMemcpyDeviceToDevice, stream_));
    });
    const auto* from = reinterpret_cast<const char*>(send);
    auto* to = reinterpret_cast<char*>(recv.data());
    std::vector<uint64_t> out_bytes(P), in_bytes(P);
    for (uint64_t r = 0; r < rounds; ++r) {
      // Each pair's bytes of this round: the same count on both sides.
      const auto take = [&](uint64_t count) { return std::min(share, count * sizeof(T) - std::min(count * sizeof(T), r * share)); };
      ranks_.agree([&] {
        uint64_t at = 0;
        for (size_t q = 0; q < P; ++q) {
          out_bytes[q] = q == me ? 0 : take(send_counts[q]);
          if (out_bytes[q] > 0)
            PGSIM_CUDA(cudaMemcpyAsync(out_ + at, from + send_at[q] * sizeof(T) + r * share, out_bytes[q],
                                       cudaMemcpyDeviceToHost, stream_));
          at += out_bytes[q];
          in_bytes[q] = q == me ? 0 : take(recv_counts[q]);
        }
        PGSIM_CUDA(cudaStreamSynchronize(stream_));  // this round down, and the last round's upload out of in_
      });
      ranks_.bytes(out_, out_bytes, in_, in_bytes);
      uint64_t at = 0;
      for (size_t q = 0; q < P; ++q) {
        if (in_bytes[q] > 0)
          PGSIM_CUDA(cudaMemcpyAsync(to + recv_at[q] * sizeof(T) + r * share, in_ + at, in_bytes[q], cudaMemcpyHostToDevice,
                                     stream_));
        at += in_bytes[q];
        sent_ += out_bytes[q], received_ += in_bytes[q];
      }
    }
    ranks_.agree([&] { PGSIM_CUDA(cudaStreamSynchronize(stream_)); });
    return recv;
  }

  HostStaging& staging() {
    if (!staging_) staging_ = std::make_unique<HostStaging>();
    return *staging_;
  }
  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }
  double setup_seconds() const { return setup_seconds_; }

 private:
  // Bytes a round, each way (a round costs a few collectives and waits).
  static constexpr uint64_t kRound = uint64_t(32) << 20;
  const dist::RankExchange& ranks_;
  FillVector<char> buffers_;  // pinned once made: out_, then in_, kRound bytes each
  bool pinned_ = false;
  char* out_ = nullptr;
  char* in_ = nullptr;
  double setup_seconds_ = 0;  // -v
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<HostStaging> staging_;  // the downloads into the host's tables
  uint64_t sent_ = 0, received_ = 0;      // -v: bytes that went to and came from other ranks
};

class DeviceNodeNames final : public dist::NodeNamesOnDevice {
 public:
  DeviceNodeNames(DeviceBuffer<char> chars, DeviceBuffer<uint64_t> offsets, uint32_t count, int device)
      : chars_(std::move(chars)), offsets_(std::move(offsets)), count_(count), device_(device) {}

  uint32_t count() const override { return count_; }

  void download(NameTable& names) override {
    PGSIM_CUDA(cudaSetDevice(device_));
    const uint64_t bytes = read_back(offsets_.data() + count_);
    DeviceBuffer<uint64_t> ends(count_);  // counted from the start of the table's arena
    launch(shifted, count_, offsets_.data() + 1, count_, names.arena_bytes(), ends.data());
    const NameTable::Appended to = names.append_whole(count_, bytes);
    PGSIM_CUDA(cudaStreamSynchronize(nullptr));
    HostStaging staging;
    staging.download(to.text, chars_.data(), bytes);
    staging.download(to.ends, ends.data(), size_t(count_) * sizeof(uint64_t));
  }

  dist::NodeNumbering number(const dist::RankExchange& ranks, dist::ElementsOnDevice* elements,
                             uint32_t line_offset) override;

 private:
  ArenaNames names() const { return {chars_.data(), offsets_.data()}; }

  DeviceBuffer<char> chars_;
  DeviceBuffer<uint64_t> offsets_;
  uint32_t count_;
  int device_;
};

dist::NodeNumbering DeviceNodeNames::number(const dist::RankExchange& ranks, dist::ElementsOnDevice* elements,
                                            uint32_t line_offset) {
  DeviceElements* const on_device = dynamic_cast<DeviceElements*>(elements);
  const uint32_t n = count_;
  const auto P = size_t(ranks.ranks);
  dist::NodeNumbering result;
  Exchanger exchange(ranks);
  Stopwatch watch;
  double seconds[6] = {};

  // 1. Owners, and the names in the send order.
  DeviceBuffer<uint32_t> order;
  Gathered sent;
  std::vector<uint64_t> names_to(P, 0), bytes_to(P, 0);
  ranks.agree([&] {
    if (elements && (!on_device || on_device->device() != device_))
      throw std::logic_error("DeviceNodeNames::number: the elements are not on the names' device");
    PGSIM_CUDA(cudaSetDevice(device_));
    DeviceBuffer<uint32_t> owner(n), index(n), sorted(n);
    order = DeviceBuffer<uint32_t>(n);
    launch(owners_of, n, names(), n, uint32_t(P), owner.data(), index.data());
    int key_bits = 1;
    while ((size_t(1) << key_bits) < P) ++key_bits;
    if (n > 0) stable_sort_pairs(owner.data(), sorted.data(), index.data(), order.data(), n, key_bits, nullptr);
    DeviceBuffer<uint64_t> starts(P + 1);
    launch(run_starts, int64_t(P) + 1, sorted.data(), n, uint32_t(P), starts.data());
    sent = gathered(names(), order.data(), n);
    std::vector<uint64_t> start(P + 1);
    PGSIM_CUDA(cudaMemcpy(start.data(), starts.data(), (P + 1) * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    for (size_t q = 0; q < P; ++q) {
      names_to[q] = start[q + 1] - start[q];
      bytes_to[q] = names_to[q] ? read_back(sent.at.data() + start[q + 1]) - read_back(sent.at.data() + start[q]) : 0;
    }
  });
  const std::vector<uint64_t> names_in = ranks.counts(names_to), bytes_in = ranks.counts(bytes_to);
  uint64_t received = 0;
  for (uint64_t c : names_in) received += c;
  ranks.agree([&] {
    if (received >= UINT32_MAX) throw InputError("more than 2^32 node names for one rank to match: use more ranks");
  });
  const auto m = uint32_t(received);
  seconds[0] = watch.lap();

  // 2. The names to their owners, and the first appearances found there.
  DeviceBuffer<char> in_text = exchange.parts(sent.text.data(), bytes_to, bytes_in);
  DeviceBuffer<uint32_t> in_lengths = exchange.parts(sent.lengths.data(), names_to, names_in, 1);
  sent = Gathered();
  seconds[1] = watch.lap();
  DeviceBuffer<uint32_t> slot_of;
  DeviceBuffer<uint8_t> flags;
  uint64_t capacity = 1024;  // at most half full
  while (capacity < 2 * uint64_t(m)) capacity *= 2;
  ranks.agree([&] {
    DeviceBuffer<uint64_t> in_at(size_t(m) + 1);
    exclusive_sum(in_lengths.data(), in_at.data(), int64_t(m) + 1, nullptr);
    const ArenaNames in_names{in_text.data(), in_at.data()};
    slot_of = DeviceBuffer<uint32_t>(m);
    {
      DeviceBuffer<uint32_t> slots = filled_none<uint32_t>(capacity);
      launch(enter_names<ArenaNames>, m, in_names, m, slots.data(), capacity - 1, slot_of.data());
    }
    DeviceBuffer<uint32_t> first = filled_none<uint32_t>(capacity);
    launch(first_of_names, m, slot_of.data(), m, first.data());
    flags = DeviceBuffer<uint8_t>(m);
    launch(first_flags, m, slot_of.data(), first.data(), m, flags.data());
    PGSIM_CUDA(cudaStreamSynchronize(nullptr));  // before the names it read are freed
  });
  in_text = DeviceBuffer<char>();
  in_lengths = DeviceBuffer<uint32_t>();
  seconds[2] = watch.lap();

  // 3. The flags back; this rank's first appearances numbered.
  DeviceBuffer<uint32_t> is_first, place, ids;
  uint64_t first_seen = 0;
  {
    const DeviceBuffer<uint8_t> back = exchange.parts(flags.data(), names_in, names_to);
    ranks.agree([&] {
      is_first = DeviceBuffer<uint32_t>(size_t(n) + 1);
      launch(flags_in_local_order, int64_t(n) + 1, back.data(), order.data(), n, is_first.data());
      place = DeviceBuffer<uint32_t>(size_t(n) + 1);
      exclusive_sum(is_first.data(), place.data(), int64_t(n) + 1, nullptr);
      first_seen = read_back(place.data() + n);
    });
  }
  uint64_t all = 0;
  const uint64_t before = ranks.scan(first_seen, all);
  if (all + 1 >= NameTable::kProvisional) throw InputError("more than 2^31 node names");  // the same on every rank
  const auto first_id = uint32_t(1 + before);
  result.total_nodes = uint32_t(1 + all);
  result.first_seen = uint32_t(first_seen);

  // 4. The ids to the owners, every name's back.
  ranks.agree([&] {
    ids = DeviceBuffer<uint32_t>(n);
    launch(ids_to_send, n, order.data(), is_first.data(), place.data(), n, first_id, ids.data());
  });
  DeviceBuffer<uint32_t> answers;
  {
    const DeviceBuffer<uint32_t> at_owner = exchange.parts(ids.data(), names_to, names_in);
    ranks.agree([&] {
      DeviceBuffer<uint32_t> slot_id(capacity);  // every slot in use is written by its first appearance
      launch(slot_ids, m, slot_of.data(), flags.data(), at_owner.data(), m, slot_id.data());
      answers = DeviceBuffer<uint32_t>(m);
      launch(ids_of_slots, m, slot_of.data(), slot_id.data(), m, answers.data());
      PGSIM_CUDA(cudaStreamSynchronize(nullptr));
    });
  }
  slot_of = DeviceBuffer<uint32_t>();
  flags = DeviceBuffer<uint8_t>();
  {
    const DeviceBuffer<uint32_t> back = exchange.parts(answers.data(), names_in, names_to);
    answers = DeviceBuffer<uint32_t>();
    seconds[3] = watch.lap();
    ranks.agree([&] {
      launch(ids_in_local_order, n, back.data(), order.data(), n, ids.data());
      PGSIM_CUDA(cudaStreamSynchronize(nullptr));
      if (on_device) return;  // the ids stay for the elements' renumbering
      result.global.resize(size_t(n) + 1);
      result.global[0] = 0;
      exchange.staging().download(result.global.data() + 1, ids.data(), size_t(n) * sizeof(uint32_t));
    });
  }
  if (!on_device) ids = DeviceBuffer<uint32_t>();
  order = DeviceBuffer<uint32_t>();
  seconds[4] = watch.lap();

  // 5. The first appearances, in id order, to the ranks owning their ids once balanced.
  std::vector<uint64_t> own_names(P, 0), own_bytes(P, 0);
  Gathered firsts;
  const auto c = uint32_t(first_seen);
  ranks.agree([&] {
    DeviceBuffer<uint32_t> which(c);
    launch(list_first, n, is_first.data(), place.data(), n, which.data());
    firsts = gathered(names(), which.data(), c);
    for (size_t q = 0; q < P; ++q) {
      const uint32_t from = std::max(first_id, dist::balanced_first(int(q), int(P), result.total_nodes));
      const uint32_t to = std::min(first_id + c, dist::balanced_first(int(q) + 1, int(P), result.total_nodes));
      if (from >= to) continue;
      own_names[q] = to - from;
      own_bytes[q] = read_back(firsts.at.data() + (to - first_id)) - read_back(firsts.at.data() + (from - first_id));
    }
  });
  is_first = DeviceBuffer<uint32_t>();
  place = DeviceBuffer<uint32_t>();
  const std::vector<uint64_t> owned_in = ranks.counts(own_names), owned_bytes_in = ranks.counts(own_bytes);
  uint64_t owned = 0;
  for (uint64_t k : owned_in) owned += k;
  const DeviceBuffer<char> owned_text = exchange.parts(firsts.text.data(), own_bytes, owned_bytes_in);
  const DeviceBuffer<uint32_t> owned_lengths = exchange.parts(firsts.lengths.data(), own_names, owned_in, 1);
  firsts = Gathered();
  ranks.agree([&] {
    DeviceBuffer<uint64_t> at(owned + 1);
    exclusive_sum(owned_lengths.data(), at.data(), int64_t(owned) + 1, nullptr);
    const uint64_t bytes = read_back(at.data() + owned);
    const NameTable::Appended to = result.owned.append_whole(uint32_t(owned), bytes);
    exchange.staging().download(to.text, owned_text.data(), bytes);
    exchange.staging().download(to.ends, at.data() + 1, owned * sizeof(uint64_t));
    result.owned.drop_index();
  });
  seconds[5] = watch.lap();
  // 6. The elements renumbered where they are, last, into copies that replace them only once every
  // rank has made its own: where any rank fails, every rank's are as they were, for the host's
  // numbering. A collective step on every rank, those whose elements are on the host too.
  DeviceBuffer<Element> renumbered;
  ranks.agree([&] {
    if (on_device) renumbered = on_device->renumbered(ids.data(), line_offset);
  });
  if (on_device) on_device->replace(std::move(renumbered));
  ids = DeviceBuffer<uint32_t>();
  const double renumbered_seconds = watch.lap();
  result.detail = fmt::format(
      "on the GPUs: owners {:.3f} s, names to their owners {:.3f} s, first appearances {:.3f} s, flags back and ids "
      "through the owners {:.3f} s, {} {:.3f} s, owned names balanced and down {:.3f} s ({:.0f} MB out, {:.0f} MB in "
      "through pinned host memory, pinned in {:.3f} s){}",
      seconds[0], seconds[1], seconds[2], seconds[3], on_device ? "ids in local order" : "ids down", seconds[4], seconds[5],
      double(exchange.sent()) / 1e6, double(exchange.received()) / 1e6, exchange.setup_seconds(),
      on_device ? fmt::format(", its elements renumbered there {:.3f} s", renumbered_seconds) : std::string());
  return result;
}

}  // namespace

void load_node_ids_kernels() {
  load_kernels(owners_of, run_starts, name_lengths, copy_names<ArenaNames>, first_flags, flags_in_local_order, ids_to_send,
               slot_ids, ids_of_slots, ids_in_local_order, list_first, shifted, enter_names<ArenaNames>, first_of_names);
  // CUB's sort and scans of the types above load on their first call: one of each, on two values.
  DeviceBuffer<uint32_t> keys(2), values(2), sorted_keys(2), sorted_values(2), counts(2);
  DeviceBuffer<uint64_t> sums(2);
  PGSIM_CUDA(cudaMemset(keys.data(), 0, 2 * sizeof(uint32_t)));
  stable_sort_pairs(keys.data(), sorted_keys.data(), keys.data(), sorted_values.data(), 2, 1, nullptr);
  exclusive_sum(keys.data(), sums.data(), 2, nullptr);
  exclusive_sum(keys.data(), counts.data(), 2, nullptr);
  PGSIM_CUDA(cudaStreamSynchronize(nullptr));
}

std::unique_ptr<dist::NodeNamesOnDevice> keep_node_names(DeviceBuffer<char> chars, DeviceBuffer<uint64_t> offsets,
                                                         uint32_t count, int device) {
  return std::make_unique<DeviceNodeNames>(std::move(chars), std::move(offsets), count, device);
}

}  // namespace pgsim::gpu
