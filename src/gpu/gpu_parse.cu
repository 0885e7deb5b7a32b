// The GPU netlist reader (gpu_parse.hpp). Steps, each a kernel or a CUB scan on one stream:
// 1. Lines: the newlines of each 4 KiB tile counted, the counts scanned, the newlines' places
//    written in file order; line i runs from the newline before it to its own.
// 2. One thread a line: parse_plain_line() (parser/plain_line.hpp, the CPU tokenizer's rules) makes
//    the line blank or a comment (skipped), an element line (fields kept), .end, or declined. The first
//    .end and the first declining line are found by atomicMin; a declining line before the
//    first .end (or a '+' line just after it, which the CPU would read as part of it) declines.
// 3. Element lines before the first .end, numbered by a scan: element e, references 2e and
//    2e + 1 (its plus and minus node), so references in file order are numbered as the CPU
//    parser meets node names.
// 4. Names: each reference's name is found or entered in an open-addressing table (a slot holds
//    the reference that entered the name; a probe compares texts, ASCII case ignored), then
//    each slot keeps its smallest reference by atomicMin: that reference is the name's first
//    appearance and its spelling the name's. Ids follow by a scan over first appearances in
//    reference order, from 1 ("0" is id 0, and "gnd" is ground, as on the CPU).
// 5. The Netlist's arrays built on the device in their host layout (Element, the names'
//    arenas and end offsets) and copied into it.
#include "gpu/gpu_parse.hpp"

#include <cub/block/block_scan.cuh>
#include <fcntl.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu/cuda_check.hpp"
#include "gpu/device_algorithms.cuh"
#include "gpu/device_buffer.hpp"
#include "gpu/device_name_table.cuh"
#include "gpu/device_stamp.hpp"
#include "gpu/gpu_node_ids.hpp"
#include "gpu/host_staging.hpp"
#include "gpu/launch.cuh"
#include "parser/input_error.hpp"
#include "parser/netlist_input.hpp"
#include "parser/plain_line.hpp"

namespace pgsim::gpu {
namespace {

using namespace plain_line;  // the line's grammar and fields (parser/plain_line.hpp)
using KeptNames = std::unique_ptr<dist::NodeNamesOnDevice>;
using KeptElements = std::shared_ptr<dist::ElementsOnDevice>;

constexpr int kTileThreads = 256;
constexpr int kTileBytesPerThread = 16;
constexpr int64_t kTileBytes = int64_t(kTileThreads) * kTileBytesPerThread;

__device__ inline int64_t line_begin(const int64_t* newlines, int64_t i) { return i == 0 ? 0 : newlines[i - 1] + 1; }
__device__ inline int64_t line_end(const int64_t* newlines, int64_t newline_count, int64_t size, int64_t i) {
  return i < newline_count ? newlines[i] : size;
}

// The first byte of this thread's bytes of its block's tile.
__device__ int64_t thread_bytes_begin() {
  return int64_t(blockIdx.x) * kTileBytes + int64_t(threadIdx.x) * kTileBytesPerThread;
}

// The newlines of the block's tile before this thread's bytes, and in the whole tile (steps 1a and 1b).
struct TileNewlines {
  uint32_t before, total;
};
__device__ TileNewlines tile_newlines(const char* text, int64_t size, int64_t base) {
  uint32_t n = 0;
  for (int k = 0; k < kTileBytesPerThread; ++k) n += base + k < size && text[base + k] == '\n';
  using Scan = cub::BlockScan<uint32_t, kTileThreads>;
  __shared__ typename Scan::TempStorage scan;
  TileNewlines t;
  Scan(scan).ExclusiveSum(n, t.before, t.total);
  return t;
}

// Step 1a: newlines of each tile.
__global__ void count_newlines(const char* text, int64_t size, uint64_t* tile_counts) {
  const TileNewlines t = tile_newlines(text, size, thread_bytes_begin());
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = t.total;
}

// Step 1b: their places, in order (tile_base: the newlines before each tile).
__global__ void write_newlines(const char* text, int64_t size, const uint64_t* tile_base, int64_t* newlines) {
  const int64_t base = thread_bytes_begin();
  uint64_t at = tile_base[blockIdx.x] + tile_newlines(text, size, base).before;
  for (int k = 0; k < kTileBytesPerThread; ++k)
    if (base + k < size && text[base + k] == '\n') newlines[at++] = base + k;
}

// Step 2 on every line; `marks`: [0] the first .end line, [1] the first declining line.
__global__ void parse_lines(const char* text, int64_t size, const int64_t* newlines, int64_t newline_count,
                            int64_t lines, PowersOfTen powers, LineFields* fields, unsigned long long* marks) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= lines) return;
  const int64_t begin = line_begin(newlines, i);
  const LineFields f = parse_plain_line(text + begin, line_end(newlines, newline_count, size, i) - begin, powers);
  fields[i] = f;
  if (f.status == kEnd) atomicMin(&marks[0], static_cast<unsigned long long>(i));
  if (f.status == kDecline) atomicMin(&marks[1], static_cast<unsigned long long>(i));
}

// Step 3: 1 for an element line before `end_line`.
__global__ void flag_elements(const LineFields* fields, int64_t end_line, uint32_t* flags) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < end_line) flags[i] = fields[i].status == kElement;
}

__global__ void element_lines(const LineFields* fields, int64_t end_line, const uint32_t* index, uint32_t* lines) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < end_line && fields[i].status == kElement) lines[index[i]] = uint32_t(i);
}

// The element lines' text, for the kernels that read their fields.
struct ElementText {
  const char* text;
  const int64_t* newlines;
  const LineFields* fields;
  const uint32_t* element_line;  // element e's line
  __device__ const char* field(uint32_t e, uint16_t at) const { return text + line_begin(newlines, element_line[e]) + at; }
  __device__ const LineFields& of(uint32_t e) const { return fields[element_line[e]]; }
};

// The names a table interns (step 4), each with an index: node references, r = 2e (plus) or
// 2e + 1 (minus), of which ground's are not entered ...
struct NodeReferences {
  ElementText t;
  __device__ bool ground(uint32_t r) const { return t.of(r >> 1).ground >> (r & 1) & 1; }
  __device__ const char* name(uint32_t r, uint32_t& length) const {
    const LineFields& f = t.of(r >> 1);
    length = r & 1 ? f.minus_len : f.plus_len;
    return t.field(r >> 1, r & 1 ? f.minus_at : f.plus_at);
  }
};
// ... and element names, e, for the duplicates.
struct ElementNames {
  ElementText t;
  __device__ bool ground(uint32_t) const { return false; }
  __device__ const char* name(uint32_t e, uint32_t& length) const {
    length = t.of(e).name_len;
    return t.field(e, t.of(e).name_at);
  }
};

// 1 where index r is (want_first) or is not (!want_first) its name's first; 0 for ground.
__global__ void flag_by_first(const uint32_t* slot_of, const uint32_t* first, uint32_t count, bool want_first,
                              uint32_t* flags) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < count) flags[r] = slot_of[r] != kGroundRef && (first[slot_of[r]] == r) == want_first;
}

// Step 5: the lengths of the names a table gets, in its order: name r of `names` where flags[r] is
// set, as the rank[r]-th (rank: the flags' scan), with which[rank[r]] = r; or, without flags, every
// name in order (which not written).
template <class Names>
__global__ void listed_name_lengths(Names names, const uint32_t* flags, const uint32_t* rank, uint32_t count,
                                    uint32_t* which, uint64_t* lengths) {
  const uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= count || (flags && !flags[r])) return;
  uint32_t length;
  names.name(r, length);
  const uint32_t k = flags ? rank[r] : r;
  if (which) which[k] = r;
  lengths[k] = length;
}

// 1 where element e's name is kept under ParseOptions::dc_names_only: it merges its ends at DC,
// or an earlier element has its name (later[e], for the duplicates' warnings).
__global__ void flag_kept_names(ElementText t, const uint32_t* later, uint32_t elements, uint32_t* flags) {
  const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= elements) return;
  const LineFields& f = t.of(e);
  flags[e] = merges_at_dc(ElementKind(f.kind), f.value) || later[e];
}

__global__ void build_elements(ElementText t, uint32_t elements, const uint32_t* slot_of, const uint32_t* first,
                               const uint32_t* rank, Element* out) {
  const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= elements) return;
  const LineFields& f = t.of(e);
  auto id = [&](uint32_t r) { return slot_of[r] == kGroundRef ? 0u : 1u + rank[first[slot_of[r]]]; };
  Element el;
  el.plus = id(2 * e);
  el.minus = id(2 * e + 1);
  el.value = f.value;
  el.line = t.element_line[e] + 1;
  el.file = 0;
  el.kind = ElementKind(f.kind);
  out[e] = el;
}

// The duplicates' (element, first of its name) pairs, in element order (index: the flags' scan).
__global__ void list_duplicates(const uint32_t* slot_of, const uint32_t* first, const uint32_t* flags,
                                const uint32_t* index, uint32_t elements, DuplicateName* out) {
  const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < elements && flags[e]) out[index[e]] = {e, first[slot_of[e]]};
}

double seconds_since(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - start).count();
  start = now;
  return s;
}

// The file's bytes [offset, offset + size) into `text` on the calling thread's device, through a
// pinned buffer per reading thread: each reads its pieces with pread while the others' pieces are
// copied. False, with `why`, when a read fails (the CPU parser then reads the file and reports it).
bool upload_file(int fd, int64_t offset, int64_t size, char* text, const ParseOptions& options, std::string& why) {
  int device = 0;
  PGSIM_CUDA(cudaGetDevice(&device));  // a thread's current device is its own: the readers take the caller's
  // 4 MB pieces: the driver pins the readers' buffers one after another, about 0.5 ms per MB on
  // the H100 machine, so with 16 MB buffers the last of 8 readers started 0.06-0.07 s after the
  // first, and all had read a 525 MB text 0.10-0.12 s after the context was ready; with 4 MB,
  // 0.035-0.043 s (2 MB: 0.030-0.035 s at 7.2M, no better at 50M).
  constexpr int64_t kPiece = int64_t(4) << 20;
  const int64_t pieces = (size + kPiece - 1) / kPiece;
  // Up to 8 readers, each with a pinned buffer of one piece, and never more than the phase's
  // OpenMP threads (--threads).
  const int readers = int(std::min<int64_t>({pieces, 8, omp_get_max_threads()}));
  std::vector<std::thread> threads;
  struct Failure {
    std::string read;    // a read's error: the CPU parser reports it
    std::string device;  // a CUDA call's
  };
  std::vector<Failure> failures(static_cast<size_t>(readers));
  std::atomic<int64_t> copied{0};
  int running = readers;  // under `mutex`; a reader's end is signalled on `ended`
  std::mutex mutex;
  std::condition_variable ended;
  for (int t = 0; t < readers; ++t)
    threads.emplace_back([&, t] {
      void* buffer = nullptr;
      cudaStream_t stream = nullptr;
      try {
        PGSIM_CUDA(cudaSetDevice(device));
        PGSIM_CUDA(cudaHostAlloc(&buffer, size_t(kPiece), cudaHostAllocDefault));
        PGSIM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        for (int64_t k = t; k < pieces; k += readers) {
          const int64_t at = k * kPiece, n = std::min(kPiece, size - at);
          for (int64_t done = 0; done < n;) {
            const ssize_t got = pread(fd, static_cast<char*>(buffer) + done, size_t(n - done), off_t(offset + at + done));
            if (got <= 0) throw InputError(got < 0 ? std::strerror(errno) : "the file got shorter");
            done += got;
          }
          PGSIM_CUDA(cudaMemcpyAsync(text + at, buffer, size_t(n), cudaMemcpyHostToDevice, stream));
          PGSIM_CUDA(cudaStreamSynchronize(stream));
          copied += n;
        }
      } catch (const InputError& e) {
        failures[size_t(t)].read = e.what();
      } catch (const GpuError& e) {
        failures[size_t(t)].device = e.what();
      }
      if (stream) cudaStreamDestroy(stream);
      if (buffer) cudaFreeHost(buffer);
      const std::lock_guard<std::mutex> lock(mutex);
      --running;
      ended.notify_one();
    });
  // Meanwhile the progress line shows the text copied, as the CPU parse's shows the text read.
  {
    std::unique_lock<std::mutex> lock(mutex);
    for (bool all_ended = false; !all_ended;) {  // a last call once all have ended
      all_ended = ended.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; });
      if (options.progress) options.progress(uint64_t(copied.load()), uint64_t(size), options.progress_user);
    }
  }
  for (std::thread& t : threads) t.join();
  for (const Failure& f : failures)
    if (!f.device.empty()) throw GpuError(f.device);
  for (const Failure& f : failures)
    if (!f.read.empty()) {
      why = "a read failed: " + f.read;
      return false;
    }
  return true;
}

// What parse_device_text read of its text: its physical lines, and whether an .end line ended it
// (as NetlistPart::lines and ::ended say).
struct TextRead {
  uint32_t lines = 0;
  bool ended = false;
};

// Steps 1-5 on the text in `text` (size bytes); `duplicates`: the elements named like an
// earlier one, with that one (parser/duplicate_names.hpp). dc_names_only: ParseOptions'.
bool parse_device_text(const char* text, int64_t size, const std::string& name, bool dc_names_only, Netlist& netlist,
                       std::vector<DuplicateName>& duplicates, TextRead& read, std::string& why, GpuParseTimes& times,
                       std::chrono::steady_clock::time_point& clock, KeptNames* keep_names = nullptr,
                       KeptElements* keep_elements = nullptr) {
  const cudaStream_t stream = nullptr;
  const int64_t tiles = (size + kTileBytes - 1) / kTileBytes;
  int64_t newline_count = 0;
  DeviceBuffer<int64_t> newlines;
  {
    DeviceBuffer<uint64_t> tile_counts{size_t(tiles)}, tile_base{size_t(tiles)};
    count_newlines<<<unsigned(tiles), kTileThreads, 0, stream>>>(text, size, tile_counts.data());
    PGSIM_CUDA_LAUNCH();
    exclusive_sum(tile_counts.data(), tile_base.data(), tiles, stream);
    const uint64_t last_base = read_back(tile_base.data() + tiles - 1);
    newline_count = int64_t(last_base + read_back(tile_counts.data() + tiles - 1));
    newlines = DeviceBuffer<int64_t>(size_t(std::max<int64_t>(newline_count, 1)));
    write_newlines<<<unsigned(tiles), kTileThreads, 0, stream>>>(text, size, tile_base.data(), newlines.data());
    PGSIM_CUDA_LAUNCH();
  }
  char last_byte = 0;
  PGSIM_CUDA(cudaMemcpy(&last_byte, text + size - 1, 1, cudaMemcpyDeviceToHost));
  const int64_t lines = newline_count + (last_byte != '\n');
  if (lines >= int64_t(UINT32_MAX)) {
    why = "more than 2^32 lines";
    return false;
  }
  DeviceBuffer<LineFields> fields{size_t(lines)};
  DeviceBuffer<unsigned long long> marks(2);
  const unsigned long long none[2] = {~0ull, ~0ull};
  marks.upload(none, 2);
  parse_lines<<<blocks_for(lines), kBlock, 0, stream>>>(text, size, newlines.data(), newline_count, lines,
                                                        kPowersOfTen, fields.data(), marks.data());
  PGSIM_CUDA_LAUNCH();
  unsigned long long mark[2];
  PGSIM_CUDA(cudaMemcpy(mark, marks.data(), sizeof mark, cudaMemcpyDeviceToHost));
  const int64_t end_line = mark[0] == ~0ull ? lines : int64_t(mark[0]);
  read.lines = uint32_t(lines);
  read.ended = end_line < lines;
  LineFields declined{};
  int64_t declined_line = -1;
  if (mark[1] != ~0ull && int64_t(mark[1]) < end_line) {
    declined_line = int64_t(mark[1]);
  } else if (end_line + 1 < lines) {  // a '+' line after .end continues it (the CPU reads it as part of the .end line)
    LineFields after;
    PGSIM_CUDA(cudaMemcpy(&after, fields.data() + end_line + 1, sizeof after, cudaMemcpyDeviceToHost));
    if (after.status == kDecline && after.kind == kContinuation) declined_line = end_line + 1;
  }
  if (declined_line >= 0) {
    PGSIM_CUDA(cudaMemcpy(&declined, fields.data() + declined_line, sizeof declined, cudaMemcpyDeviceToHost));
    why = "line " + std::to_string(declined_line + 1) + " is " + decline_text(declined.kind);
    return false;
  }
  times.lines = seconds_since(clock);
  if (end_line == 0) {
    why = "no elements";
    return false;
  }

  // Step 3.
  DeviceBuffer<uint32_t> element_line;
  uint32_t elements = 0;
  {
    DeviceBuffer<uint32_t> flags{size_t(end_line) + 1}, index{size_t(end_line) + 1};
    PGSIM_CUDA(cudaMemsetAsync(flags.data() + end_line, 0, sizeof(uint32_t), stream));
    flag_elements<<<blocks_for(end_line), kBlock, 0, stream>>>(fields.data(), end_line, flags.data());
    PGSIM_CUDA_LAUNCH();
    exclusive_sum(flags.data(), index.data(), end_line + 1, stream);
    elements = read_back(index.data() + end_line);
    if (elements == 0 || elements >= (1u << 29)) {  // 2^30 references: table slots stay 32-bit
      why = elements == 0 ? "no elements" : "more than 2^29 elements";
      return false;
    }
    element_line = DeviceBuffer<uint32_t>(elements);
    element_lines<<<blocks_for(end_line), kBlock, 0, stream>>>(fields.data(), end_line, index.data(),
                                                               element_line.data());
    PGSIM_CUDA_LAUNCH();
  }
  const ElementText element_text{text, newlines.data(), fields.data(), element_line.data()};
  const NodeReferences refs{element_text};
  const ElementNames element_names{element_text};

  // Step 4, for `count` names: each one's slot, and each slot's first index (kNone where unused).
  const auto intern = [&](auto names, uint32_t count, DeviceBuffer<uint32_t>& slot_of, DeviceBuffer<uint32_t>& first) {
    // At most two thirds full were every name new (element names are, nearly: linear probing
    // then takes about 5 probes an insertion); node names recur (a grid node is met 3.4 times on
    // average), so their table is a fifth full. Not more room: the table's two arrays (8 bytes a
    // slot) are the parse's largest device memory after the text.
    uint64_t capacity = 1024;
    while (capacity < uint64_t(count) + uint64_t(count) / 2) capacity *= 2;
    slot_of = DeviceBuffer<uint32_t>(count);
    {
      DeviceBuffer<uint32_t> slots(capacity);
      PGSIM_CUDA(cudaMemsetAsync(slots.data(), 0xff, capacity * sizeof(uint32_t), stream));
      enter_names<<<blocks_for(count), kBlock, 0, stream>>>(names, count, slots.data(), capacity - 1, slot_of.data());
      PGSIM_CUDA_LAUNCH();
    }
    first = DeviceBuffer<uint32_t>(capacity);
    PGSIM_CUDA(cudaMemsetAsync(first.data(), 0xff, capacity * sizeof(uint32_t), stream));
    first_of_names<<<blocks_for(count), kBlock, 0, stream>>>(slot_of.data(), count, first.data());
    PGSIM_CUDA_LAUNCH();
  };
  // flags[r]: r is (want_first) or is not its name's first; index: their exclusive scan. Returns their count.
  const auto flag = [&](const DeviceBuffer<uint32_t>& slot_of, const DeviceBuffer<uint32_t>& first, uint32_t count,
                        bool want_first, DeviceBuffer<uint32_t>& flags, DeviceBuffer<uint32_t>& index) {
    flags = DeviceBuffer<uint32_t>(size_t(count) + 1);
    index = DeviceBuffer<uint32_t>(size_t(count) + 1);
    PGSIM_CUDA(cudaMemsetAsync(flags.data() + count, 0, sizeof(uint32_t), stream));
    flag_by_first<<<blocks_for(count), kBlock, 0, stream>>>(slot_of.data(), first.data(), count, want_first,
                                                            flags.data());
    PGSIM_CUDA_LAUNCH();
    exclusive_sum(flags.data(), index.data(), int64_t(count) + 1, stream);
    return read_back(index.data() + count);
  };
  const uint32_t references = 2 * elements;
  DeviceBuffer<uint32_t> slot_of, first, is_first, rank;
  intern(refs, references, slot_of, first);
  const uint32_t names = flag(slot_of, first, references, true, is_first, rank);
  if (uint64_t(netlist.node_names.size()) + names >= NameTable::kProvisional) {
    why = "more than 2^31 node names";
    return false;
  }

  // Step 5: node names, elements, element names and their duplicates, each built and copied back
  // (the copies timed apart: the work queued before each is finished first).
  HostStaging staging(size_t(16) << 20);
  const auto download = [&](void* host, const void* device, size_t bytes) {
    PGSIM_CUDA(cudaStreamSynchronize(stream));
    auto start = std::chrono::steady_clock::now();
    staging.download(host, device, bytes);
    times.download += seconds_since(start);
  };
  // The names r in [0, total) of `names` that flags marks (place: the flags' exclusive scan, count
  // of them), or all of them in order (flags null, count = total), gathered into one arena on the
  // device: name k at at[k] (at: count + 1 offsets), its end counted from `base` in ends[k] where
  // asked; `which` says which names they were (which[k] = r, for flags only; one entry when none are).
  struct Gathered {
    DeviceBuffer<uint32_t> which;
    DeviceBuffer<char> chars;
    DeviceBuffer<uint64_t> at, ends;
    uint64_t bytes = 0;
  };
  const auto gather = [&](auto names, const uint32_t* flags, const uint32_t* place, uint32_t total, uint32_t count,
                          bool with_ends, uint64_t base) {
    Gathered g;
    g.which = DeviceBuffer<uint32_t>(flags ? std::max<uint32_t>(count, 1) : 0);
    DeviceBuffer<uint64_t> lengths(size_t(count) + 1);
    g.at = DeviceBuffer<uint64_t>(size_t(count) + 1);
    PGSIM_CUDA(cudaMemsetAsync(lengths.data() + count, 0, sizeof(uint64_t), stream));
    if (total > 0) {
      listed_name_lengths<<<blocks_for(total), kBlock, 0, stream>>>(names, flags, place, total,
                                                                    flags ? g.which.data() : nullptr, lengths.data());
      PGSIM_CUDA_LAUNCH();
    }
    exclusive_sum(lengths.data(), g.at.data(), int64_t(count) + 1, stream);
    g.bytes = read_back(g.at.data() + count);
    g.chars = DeviceBuffer<char>(g.bytes);
    if (with_ends) g.ends = DeviceBuffer<uint64_t>(count);
    if (count > 0) {  // every node may be ground
      copy_names<<<blocks_for(count), kBlock, 0, stream>>>(names, flags ? g.which.data() : nullptr, count, g.at.data(),
                                                           base, g.chars.data(), with_ends ? g.ends.data() : nullptr);
      PGSIM_CUDA_LAUNCH();
    }
    return g;
  };
  // The same names appended to `table`; returns `which`.
  const auto append = [&](auto names, const uint32_t* flags, const uint32_t* place, uint32_t total, uint32_t count,
                          NameTable& table) {
    Gathered g = gather(names, flags, place, total, count, true, table.arena_bytes());
    const NameTable::Appended to = table.append_whole(count, g.bytes);
    download(to.text, g.chars.data(), g.bytes);
    download(to.ends, g.ends.data(), count * sizeof(uint64_t));
    return std::move(g.which);
  };
  if (keep_names) {  // left on the device for the node ids (gpu_node_ids.hpp)
    Gathered g = gather(refs, is_first.data(), rank.data(), references, names, false, 0);
    int device = 0;
    PGSIM_CUDA(cudaGetDevice(&device));
    *keep_names = keep_node_names(std::move(g.chars), std::move(g.at), names, device);
  } else {
    append(refs, is_first.data(), rank.data(), references, names, netlist.node_names);
  }
  DeviceBuffer<Element> built(elements);
  build_elements<<<blocks_for(elements), kBlock, 0, stream>>>(element_text, elements, slot_of.data(), first.data(),
                                                               rank.data(), built.data());
  PGSIM_CUDA_LAUNCH();
  const auto elements_down = [&] {
    netlist.elements.resize(elements);
    download(netlist.elements.data(), built.data(), elements * sizeof(Element));
    built = DeviceBuffer<Element>();
  };
  if (!keep_elements) elements_down();
  for (DeviceBuffer<uint32_t>* done : {&slot_of, &first, &is_first, &rank})
    *done = DeviceBuffer<uint32_t>();  // freed: the element names' hash table takes their place
  // The duplicates first: with dc_names_only, their names are among those kept.
  DeviceBuffer<uint32_t> later;
  {
    DeviceBuffer<uint32_t> index;
    intern(element_names, elements, slot_of, first);
    duplicates.resize(flag(slot_of, first, elements, false, later, index));
    if (!duplicates.empty()) {
      DeviceBuffer<DuplicateName> listed(duplicates.size());
      list_duplicates<<<blocks_for(elements), kBlock, 0, stream>>>(slot_of.data(), first.data(), later.data(),
                                                                   index.data(), elements, listed.data());
      PGSIM_CUDA_LAUNCH();
      download(duplicates.data(), listed.data(), duplicates.size() * sizeof(DuplicateName));
    }
    slot_of = DeviceBuffer<uint32_t>();
    first = DeviceBuffer<uint32_t>();
  }
  if (keep_elements) {  // left on the device, unless duplicates' warnings will read their lines
    if (duplicates.empty()) {
      int device = 0;
      PGSIM_CUDA(cudaGetDevice(&device));
      *keep_elements = std::make_shared<DeviceElements>(device, std::move(built));
    } else {
      elements_down();
    }
  }
  if (dc_names_only) {  // only the names a DC run may show: about a quarter of a grid's
    DeviceBuffer<uint32_t> kept_flags(size_t(elements) + 1), place(size_t(elements) + 1);
    PGSIM_CUDA(cudaMemsetAsync(kept_flags.data() + elements, 0, sizeof(uint32_t), stream));
    flag_kept_names<<<blocks_for(elements), kBlock, 0, stream>>>(element_text, later.data(), elements, kept_flags.data());
    PGSIM_CUDA_LAUNCH();
    exclusive_sum(kept_flags.data(), place.data(), int64_t(elements) + 1, stream);
    const uint32_t kept = read_back(place.data() + elements);
    const DeviceBuffer<uint32_t> which =
        append(element_names, kept_flags.data(), place.data(), elements, kept, netlist.element_names);
    netlist.named_elements.resize(kept);
    download(netlist.named_elements.data(), which.data(), size_t(kept) * sizeof(uint32_t));
    netlist.names_thinned = true;
  } else {
    append(element_names, nullptr, nullptr, elements, elements, netlist.element_names);
  }
  netlist.node_names.drop_index();
  netlist.files = {name};
  if (end_line < lines) {  // bytes up to the end of the .end line, as the CPU parser counts them
    int64_t end_newline = size;
    if (end_line < newline_count) PGSIM_CUDA(cudaMemcpy(&end_newline, newlines.data() + end_line, sizeof end_newline, cudaMemcpyDeviceToHost));
    netlist.bytes_read = uint64_t(std::min(end_newline + 1, size));
  } else {
    netlist.bytes_read = uint64_t(size);
  }
  times.names = seconds_since(clock) - times.download;
  return true;
}

// What a text must be before any of it is copied: not gzip, no byte-order mark, not empty.
bool plain_start(const char* first, size_t n, std::string& why) {
  if (n == 0) {
    why = "an empty file";
    return false;
  }
  if (gzip_magic(first, n)) {
    why = "gzip";
    return false;
  }
  if (n >= 3 && std::memcmp(first, "\xEF\xBB\xBF", 3) == 0) {
    why = "a UTF-8 byte-order mark";
    return false;
  }
  return true;
}

bool enough_device_memory(int64_t size, std::string& why) {
  size_t free = 0, total = 0;
  PGSIM_CUDA(cudaMemGetInfo(&free, &total));
  // At most 6 bytes a text byte for element lines of 20 bytes or more (pgsim-gen's are 30-45):
  // the text, and per line its fields (24 B) and newline (8 B), its element's line (4 B), its two
  // references' slots, flags and ranks (24 B), and room for them in the table (at most 48 B). A
  // netlist of shorter lines that this guess lets through may meet a failed allocation: a
  // GpuError, which the caller (app/backend.hpp read_netlist) answers by reading on the CPU.
  const double need = double(size) * 6.0 + double(64 << 20);
  if (need <= 0.9 * double(free)) return true;
  why = "too little free device memory (" + std::to_string(free >> 20) + " MiB for a text of " +
        std::to_string(size >> 20) + " MiB)";
  return false;
}

bool finish(bool accepted, Netlist& netlist, const std::string& name, std::vector<DuplicateName> duplicates,
            GpuParseTimes& times, std::chrono::steady_clock::time_point& clock) {
  if (!accepted) return false;
  finish_netlist(netlist, name, std::move(duplicates));
  times.finish = seconds_since(clock);
  return true;
}

// Reads bytes [begin, min(end, the file's size)) of the regular file `path` onto the device and
// parses them (steps 1-5), as parse_device_text.
bool parse_file_range(const std::string& path, uint64_t begin, uint64_t end, const std::string& name,
                      const ParseOptions& options, Netlist& netlist, std::vector<DuplicateName>& duplicates,
                      TextRead& read, std::string& why, GpuParseTimes& times, std::chrono::steady_clock::time_point& clock,
                      KeptNames* keep_names = nullptr, KeptElements* keep_elements = nullptr) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = "cannot open it";
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return false;
  }
  const uint64_t stop = std::min(end, uint64_t(st.st_size));
  const int64_t size = begin < stop ? int64_t(stop - begin) : 0;
  char head[3] = {0, 0, 0};
  const ssize_t got = size > 0 ? pread(fd, head, size_t(std::min<int64_t>(size, sizeof head)), off_t(begin)) : 0;
  if (!plain_start(head, size_t(std::max<ssize_t>(got, 0)), why) || !enough_device_memory(size, why)) return false;
  DeviceBuffer<char> text{size_t(size)};
  if (!upload_file(fd, int64_t(begin), size, text.data(), options, why)) return false;
  times.upload = seconds_since(clock);
  return parse_device_text(text.data(), size, name, options.dc_names_only, netlist, duplicates, read, why, times, clock,
                           keep_names, keep_elements);
}

}  // namespace

std::string GpuParseTimes::text() const {
  char line[192];
  std::snprintf(line, sizeof line,
                "text read and copied %.3f s, lines %.3f s, names and elements %.3f s (copied back %.3f s), duplicate "
                "element names %.3f s",
                upload, lines, names, download, finish);
  return line;
}

bool parse_netlist_on_gpu(const std::string& path, const std::string& name, const ParseOptions& options,
                          Netlist& netlist, std::string& why, GpuParseTimes* times_out) {
  GpuParseTimes times;
  auto clock = std::chrono::steady_clock::now();
  std::vector<DuplicateName> duplicates;
  TextRead read;
  const bool accepted = parse_file_range(path, 0, UINT64_MAX, name, options, netlist, duplicates, read, why, times, clock);
  const bool done = finish(accepted, netlist, name, std::move(duplicates), times, clock);
  if (times_out) *times_out = times;
  return done;
}

bool parse_netlist_part_on_gpu(const std::string& path, uint64_t begin, uint64_t end, const ParseOptions& options,
                               int device, NetlistPart& part, std::string& why, GpuParseTimes* times_out,
                               std::unique_ptr<dist::NodeNamesOnDevice>* keep_names,
                               std::shared_ptr<dist::ElementsOnDevice>* keep_elements) {
  if (keep_elements && !keep_names) throw std::logic_error("parse_netlist_part_on_gpu: elements kept without their names");
  PGSIM_CUDA(cudaSetDevice(device));
  GpuParseTimes times;
  auto clock = std::chrono::steady_clock::now();
  Netlist netlist;
  std::vector<DuplicateName> duplicates;
  TextRead read;
  if (!parse_file_range(path, begin, end, path, options, netlist, duplicates, read, why, times, clock, keep_names,
                        keep_elements))
    return false;
  part = finish_netlist_part(std::move(netlist), read.lines, read.ended, std::move(duplicates));
  times.finish = seconds_since(clock);
  if (times_out) *times_out = times;
  return true;
}

bool parse_netlist_text_on_gpu(const std::string& text, const std::string& name, Netlist& netlist, std::string& why,
                               const ParseOptions& options) {
  GpuParseTimes times;
  auto clock = std::chrono::steady_clock::now();
  if (!plain_start(text.data(), text.size(), why) || !enough_device_memory(int64_t(text.size()), why)) return false;
  DeviceBuffer<char> device(text.size());
  device.upload(text.data(), text.size());
  std::vector<DuplicateName> duplicates;
  TextRead read;
  const bool accepted =
      parse_device_text(device.data(), int64_t(text.size()), name, options.dc_names_only, netlist, duplicates, read, why,
                        times, clock);
  return finish(accepted, netlist, name, std::move(duplicates), times, clock);
}

}  // namespace pgsim::gpu
