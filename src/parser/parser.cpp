// SPICE netlist reader (DESIGN.md section 1), on all cores.
//
// How (the contract: the Netlist, its warnings and its first error equal a one-chunk parse's,
// whatever the block and chunk sizes and the thread count):
// 1. Blocks. A file is read through NetlistInput in blocks of about chunk_bytes x 8 x threads.
//    A block is cut at its last line start that is not a '+' continuation; the tail after the
//    cut is carried into the next block, which another thread reads while this one is parsed.
//    The text is never held whole (two blocks at a time).
// 2. Chunks. The block is split at such line starts into chunks of about chunk_bytes, parsed
//    at once on all threads (chunk_parser.hpp): elements, dot commands as events, the chunk's
//    first error, and its names with their hashes: every element name, and each node name once
//    (later occurrences in the chunk refer to the first), grouped by NameTable shard. A chunk
//    stops after an .include or .end line.
// 3. Entering, in file order, a run of chunks up to the first that stopped early:
//    a. Interning (one thread per NameTable shard): each shard walks its names (chunks in
//       order, names in chunk order) and looks each up; a name not yet in the table is entered
//       as provisional, keyed by its index over the run: that is the name's first appearance,
//       and later chunks' names find the key.
//    b. Ids: a prefix sum over the first appearances of each chunk, in file order, gives each
//       its id (the table's size plus its rank), so nodes and element names are numbered by
//       first appearance exactly as a serial parse numbers them; the names are appended to the
//       tables' arenas in parallel.
//    c. Names holding a key take the id of the one it names and elements are copied into the
//       netlist with their file:line, per chunk, while each shard replaces its provisional
//       entries by the ids; then warnings (duplicate element names, unknown control lines)
//       follow in file order.
//    Then the stopping chunk's reason: its error is thrown (with the file line its chunk
//    started at plus its line in the chunk), .end ends the file, an .include is read
//    (recursively, the same way) before the rest of the chunk is parsed and entered.
// Memory is touched once where it can be: arrays that threads fill are resized without zeroing
// (default_init.hpp), chunk results and blocks are reused from block to block.
// A part of a file (netlist_part.hpp, the distributed parse) goes the same way from its range's
// first line, with its warnings kept rather than logged and its first error kept with its place
// (errors travel inside the parse as Located, which the whole-file parse makes a ParseError).
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "chunk_parser.hpp"
#include "duplicate_names.hpp"
#include "input_error.hpp"
#include "netlist.hpp"
#include "netlist_input.hpp"
#include "netlist_part.hpp"

namespace pgsim {
namespace {

// Chunks of 256 KB, 8 per thread in a block: with several chunks per thread the dynamic schedule
// evens out slow chunks and threads (H100 machine, 16 threads, 7.2M-node grid: 1 MB chunks,
// 2 per thread, parsed at 645-703 MB/s, these at 730-737 MB/s; bench_parse, same call).
constexpr size_t kDefaultChunkBytes = 1u << 18;
constexpr size_t kChunksPerThread = 8;
constexpr uint32_t kParallelNames = 1u << 16;  // fewer names are interned on one thread
constexpr size_t kAhead = 8;  // names ahead that a table lookup's next load is started, to overlap cache misses
constexpr size_t kRing = 32;  // names in that pipeline at once (3 kAhead), rounded up to a power of two
static_assert(kRing > 3 * kAhead && (kRing & (kRing - 1)) == 0);

// Runs f(i) for i in [0, n), on all threads when `parallel` (small work is not worth waking them);
// the first exception is rethrown here.
template <class F>
void parallel_for(size_t n, bool parallel, F&& f) {
  std::exception_ptr error;
  std::mutex mutex;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
  for (long i = 0; i < static_cast<long>(n); ++i) {
    try {
      f(static_cast<size_t>(i));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// Seconds since `start`, for the -v log of the parse's steps.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An error at a place in the netlist, thrown inside the parse: the whole-file parse makes it a
// ParseError, a part's parse (netlist_part.hpp) keeps the place to renumber its line.
struct Located {
  uint32_t file, line;
  std::string message;
};

// parse_netlist_text's text, read like a file.
class TextInput {
 public:
  explicit TextInput(const std::string& text) : text_(text) {}
  size_t read(char* dst, size_t n) {
    n = std::min(n, text_.size() - pos_);
    std::copy_n(text_.data() + pos_, n, dst);
    pos_ += n;
    return n;
  }
  uint64_t progress() const { return pos_; }
  uint64_t total() const { return text_.size(); }

 private:
  const std::string& text_;
  size_t pos_ = 0;
};

// The node names of a run of chunks (being entered), keyed by their index over the run: chunk by
// chunk, in each chunk's order, so a smaller key means earlier in the file.
struct RunNames {
  ChunkResult* chunks;
  std::vector<uint32_t> base;  // first key of each chunk, and the total
  size_t chunk_of(uint32_t key) const {
    return static_cast<size_t>(std::upper_bound(base.begin(), base.end(), key) - base.begin()) - 1;
  }
  uint32_t& id(uint32_t key) const {
    const size_t c = chunk_of(key);
    return chunks[c].nodes.ids[key - base[c]];
  }
  static std::string_view name(const void* run, uint32_t key) {
    const RunNames& r = *static_cast<const RunNames*>(run);
    const size_t c = r.chunk_of(key);
    return r.chunks[c].node_name(key - r.base[c]);
  }
};

// The node names of NameTable shard `shard` in chunks[0, count), in file order: each chunk's group
// of the shard (ChunkNames::by_shard) in turn.
class ShardNames {
 public:
  ShardNames(const ChunkResult* chunks, size_t count, size_t shard) : chunks_(chunks), count_(count), shard_(shard) {
    if (count_ > 0) k_ = chunks_[0].nodes.shard_begin[shard_];
    skip_ended();
  }
  bool done() const { return c_ == count_; }
  const ChunkNames::Entry& entry() const { return chunks_[c_].nodes.by_shard[k_]; }
  size_t chunk() const { return c_; }  // in the run
  void next() {
    ++k_;
    skip_ended();
  }

 private:
  // Moves past chunks whose group has no names left.
  void skip_ended() {
    while (c_ < count_ && k_ == chunks_[c_].nodes.shard_begin[shard_ + 1])
      if (++c_ < count_) k_ = chunks_[c_].nodes.shard_begin[shard_];
  }
  const ChunkResult* chunks_;
  size_t count_, shard_, c_ = 0;
  uint32_t k_ = 0;
};

class Parser {
 public:
  // `deferred`: a part's parse; warnings go there instead of the log.
  Parser(Netlist& netlist, const ParseOptions& options, std::vector<ParseWarning>* deferred = nullptr)
      : nl_(netlist), options_(options), deferred_(deferred) {}

  // Returns whether an .end line ended the file; throws Located or InputError. `file_start`:
  // the input starts its file (false for a part of a file after its start).
  template <class Input>
  bool parse_stream(Input& input, const std::string& path, int depth, bool file_start = true);
  // Logs (or defers) the warnings of what was parsed, in file order: duplicate element names,
  // found now (or given to take_duplicates()), among the unknown control lines met. Called once,
  // after the parse or its error.
  void flush_warnings();
  // The duplicate element names found by another reader (gpu/gpu_parse.hpp), for flush_warnings()
  // to warn of instead of finding them itself.
  void take_duplicates(std::vector<DuplicateName> duplicates) { found_duplicates_ = std::move(duplicates); }
  void finish(const std::string& name);
  uint32_t top_lines() const { return top_lines_; }
  uint64_t duplicates() const { return rules_.duplicates(); }
  // Where the parse's time went (-v): wall seconds of each step, summed over blocks and includes.
  struct StepTimes {
    double first_read = 0;  // a file's first block, read before any chunk can start
    double chunks = 0;      // chunks parsed on all threads (header comment, step 2)
    double names = 0;       // node names interned, ids given (steps 3a, 3b)
    double enter = 0;       // elements entered (step 3c)
    double read_wait = 0;   // waiting for the next block's read after a block was entered
    double duplicates = 0;  // duplicate element names found, after the parse
  };
  const StepTimes& step_times() const { return times_; }

 private:
  bool parse_block(const char* text, size_t size, uint32_t file, uint32_t& line_base, bool file_start, int depth);
  uint32_t enter(ChunkResult* chunks, size_t count, uint32_t file, uint32_t& line_base);
  void intern(RunNames& run, size_t count, bool parallel);
  void control_warnings(const ChunkResult& chunk, size_t first_element, uint32_t file, uint32_t line_base);
  void include(const ChunkEvent& event, uint32_t file, uint32_t line, int depth);
  void warn(ParseWarning warning) {
    if (deferred_) return deferred_->push_back(std::move(warning));
    log(warning_text(warning, nl_.files));
  }
  void log(std::string message) {
    spdlog::warn("{}", message);
    nl_.warnings.push_back(std::move(message));
  }
  size_t chunk_bytes() const { return options_.chunk_bytes ? options_.chunk_bytes : kDefaultChunkBytes; }

  Netlist& nl_;
  const ParseOptions& options_;
  std::vector<ParseWarning>* deferred_;
  std::optional<std::vector<DuplicateName>> found_duplicates_;
  // Per shard, the run's first appearances of node names: their hashes and keys.
  struct First {
    uint64_t hash;
    uint32_t key;
  };
  std::vector<First> firsts_[NameTable::kShards];
  // Unknown control lines warned about (once per command, in file order), each with the number
  // of elements before it, held until flush_warnings() places the duplicate names among them.
  std::vector<std::pair<uint64_t, ParseWarning>> controls_;
  std::deque<std::vector<ChunkResult>> results_;  // by include depth (a deque: parse_block holds one while an include adds the next)
  WarningRules rules_;
  uint32_t top_lines_ = 0;  // physical lines of the top file parsed
  StepTimes times_;
};

// A block of netlist text: whole logical lines [0, cut) to parse, and the start of the next
// block's first line after them. Its bytes are left uninitialised until read into (std::string's
// resize would zero, and page in, the whole block at every parse, however small the file).
class Block {
 public:
  const char* data() const { return data_.get(); }
  size_t cut() const { return cut_; }
  bool eof() const { return eof_; }
  // Reads from `input` (`capacity` bytes at a time) after the bytes held, until the block holds a
  // cut: its last line start that is not a '+' continuation, or the file's end.
  template <class Input>
  void fill(Input& input, size_t capacity) {
    cut_ = 0;
    while (!eof_ && !cut_) {
      if (size_ == capacity_) reserve(std::max(capacity, 2 * capacity_));  // a logical line longer than a block
      const size_t want = capacity_ - size_;
      const size_t got = input.read(data_.get() + size_, want);
      size_ += got;
      eof_ = got < want;
      if (!eof_) cut_ = last_cut(data_.get(), 0, size_, size_);
    }
    if (eof_) cut_ = size_;
  }
  // Starts this block with what `before` holds after its cut.
  void follow(const Block& before) {
    size_ = 0;
    reserve(before.size_ - before.cut_);
    std::copy(before.data() + before.cut_, before.data() + before.size_, data_.get());
    size_ = before.size_ - before.cut_;
    eof_ = before.eof_;
  }

 private:
  void reserve(size_t n) {
    if (n <= capacity_) return;
    std::unique_ptr<char[]> bigger(new char[n]);
    std::copy_n(data_.get(), size_, bigger.get());
    data_ = std::move(bigger);
    capacity_ = n;
  }
  std::unique_ptr<char[]> data_;
  size_t size_ = 0, capacity_ = 0, cut_ = 0;
  bool eof_ = false;
};

template <class Input>
bool Parser::parse_stream(Input& input, const std::string& path, int depth, bool file_start) {
  const uint32_t file = static_cast<uint32_t>(nl_.files.size());
  nl_.files.push_back(path);
  const size_t block_bytes = options_.block_bytes ? options_.block_bytes
                                                  : chunk_bytes() * kChunksPerThread * static_cast<size_t>(std::max(1, omp_get_max_threads()));
  // The block being parsed, and the next one, read meanwhile on another thread.
  Block current, next;
  const auto first_read = std::chrono::steady_clock::now();
  current.fill(input, block_bytes);
  times_.first_read += seconds_since(first_read);
  uint32_t line_base = 0;
  bool ended = false;
  while (current.cut() > 0) {
    std::future<void> reading;
    if (!current.eof())
      reading = std::async(std::launch::async, [&] {
        next.follow(current);
        next.fill(input, block_bytes);
      });
    ended = parse_block(current.data(), current.cut(), file, line_base, file_start, depth);
    file_start = false;
    if (reading.valid()) {
      const auto wait = std::chrono::steady_clock::now();
      reading.wait();
      times_.read_wait += seconds_since(wait);
      // After .end the serial parser reads no further: what the read-ahead met there (a corrupt
      // gzip member, say) is not the netlist's error.
      if (!ended) reading.get();
    }
    if (depth == 0 && options_.progress) options_.progress(input.progress(), input.total(), options_.progress_user);
    if (ended || current.eof()) break;
    std::swap(current, next);
  }
  if (depth == 0 && options_.progress) options_.progress(input.total(), input.total(), options_.progress_user);
  if (depth == 0) top_lines_ = line_base;
  return ended;
}

bool Parser::parse_block(const char* text, size_t size, uint32_t file, uint32_t& line_base, bool file_start, int depth) {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t b = 0; b < size;) {
    size_t e = size;
    if (size - b > chunk_bytes()) {
      e = last_cut(text, b, b + chunk_bytes(), size);
      if (!e) e = next_cut(text, b + chunk_bytes(), size);  // a logical line longer than a chunk
    }
    ranges.emplace_back(b, e);
    b = e;
  }
  // Results of the previous block at this include depth, reused (chunk_parser.hpp says why).
  if (results_.size() <= static_cast<size_t>(depth)) results_.resize(static_cast<size_t>(depth) + 1);
  std::vector<ChunkResult>& chunks = results_[static_cast<size_t>(depth)];
  if (chunks.size() < ranges.size()) chunks.resize(ranges.size());
  const auto start = std::chrono::steady_clock::now();
  parallel_for(ranges.size(), ranges.size() > 1, [&](size_t i) {
    parse_chunk(text + ranges[i].first, text + ranges[i].second, file_start && i == 0, chunks[i]);
  });
  times_.chunks += seconds_since(start);
  const size_t count = ranges.size();
  for (size_t i = 0; i < count;) {
    size_t j = i;
    while (j < count && !chunks[j].stopped_early()) ++j;
    const size_t last = std::min(j + 1, count);
    const uint32_t last_base = enter(&chunks[i], last - i, file, line_base);
    if (j == count) break;
    const ChunkResult& stopped = chunks[j];
    if (stopped.error) throw Located{file, last_base + stopped.error->line, stopped.error->message};
    const ChunkEvent& event = stopped.events.back();
    if (event.kind == ChunkEvent::End) {
      nl_.bytes_read += static_cast<uint64_t>(stopped.stop - text);
      return true;
    }
    include(event, file, last_base + event.line, depth);
    // The rest of the chunk, after the .include line.
    ranges[j].first = static_cast<size_t>(stopped.stop - text);
    parse_chunk(text + ranges[j].first, text + ranges[j].second, false, chunks[j]);
    i = j;
  }
  nl_.bytes_read += size;
  return false;
}

void Parser::include(const ChunkEvent& event, uint32_t file, uint32_t line, int depth) {
  if (depth + 1 >= kMaxIncludeDepth)
    throw Located{file, line, ".include nested more than " + std::to_string(kMaxIncludeDepth) + " deep (a file that includes itself?)"};
  if (nl_.files.size() >= Netlist::kMaxFiles)  // Element::file's width
    throw Located{file, line, ".include: more than " + std::to_string(Netlist::kMaxFiles) + " files in one netlist"};
  std::filesystem::path path(event.text);
  if (path.is_relative()) path = std::filesystem::path(nl_.files[file]).parent_path() / path;
  // Opening or reading the file fails at the .include line (errors in its text have their own place).
  try {
    NetlistInput input(path.string());
    parse_stream(input, path.string(), depth + 1);
  } catch (const InputError& e) {
    throw Located{file, line, std::string(".include: ") + e.what()};
  }
}

// Enters chunks[0, count) (see the header comment, step 3); returns the line base of the last.
uint32_t Parser::enter(ChunkResult* chunks, size_t count, uint32_t file, uint32_t& line_base) {
  RunNames run{chunks, std::vector<uint32_t>(count + 1, 0)};
  uint64_t elements = 0;
  for (size_t c = 0; c < count; ++c) {
    const uint64_t next = uint64_t(run.base[c]) + chunks[c].nodes.ids.size();
    if (next >= NameTable::kProvisional) throw InputError("a netlist block with more than 2^31 names");
    run.base[c + 1] = static_cast<uint32_t>(next);
    elements += chunks[c].elements.size();
  }
  const bool parallel = run.base[count] + elements >= kParallelNames;
  auto start = std::chrono::steady_clock::now();
  intern(run, count, parallel);
  times_.names += seconds_since(start);
  start = std::chrono::steady_clock::now();

  // Elements, with their places in the file.
  std::vector<size_t> element_base(count + 1, nl_.elements.size());
  std::vector<uint32_t> line_bases(count);
  for (size_t c = 0; c < count; ++c) {
    element_base[c + 1] = element_base[c] + chunks[c].elements.size();
    line_bases[c] = line_base;
    line_base += chunks[c].lines;
  }
  nl_.elements.resize(element_base[count]);
  // c. Per chunk: names first seen in an earlier chunk of the run take its id, and the elements
  // are copied; per shard (at the same time): provisional table entries become the ids.
  parallel_for(count + NameTable::kShards, parallel, [&](size_t task) {
    if (task >= count) {
      const std::vector<First>& firsts = firsts_[task - count];
      for (size_t k = 0; k < firsts.size(); ++k) {
        if (k + kAhead < firsts.size()) nl_.node_names.prefetch(firsts[k + kAhead].hash);
        nl_.node_names.settle(firsts[k].hash, firsts[k].key, run.id(firsts[k].key));
      }
      return;
    }
    const size_t c = task;
    ChunkResult& r = chunks[c];
    for (uint32_t& id : r.nodes.ids)
      if (id & NameTable::kProvisional) id = run.id(id & ~NameTable::kProvisional);
    const std::vector<uint32_t>& nodes = r.nodes.ids;
    const auto node = [&](uint32_t index) { return index == ChunkElement::kGround ? Netlist::ground : nodes[index]; };
    for (size_t k = 0; k < r.elements.size(); ++k) {
      const ChunkElement& ce = r.elements[k];
      Element& e = nl_.elements[element_base[c] + k];
      e.kind = ce.kind;  // its name: element_names[element_base[c] + k]
      e.plus = node(ce.plus);
      e.minus = node(ce.minus);
      e.value = ce.value;
      e.line = line_bases[c] + ce.line;
      e.file = static_cast<uint16_t>(file);  // below Netlist::kMaxFiles (include())
    }
  });
  for (size_t c = 0; c < count; ++c) {
    control_warnings(chunks[c], element_base[c], file, line_bases[c]);
    // Transient tables: element indices and lines were the chunk's own.
    TransientInputs& t = chunks[c].transient;
    if (t.tran) t.tran->file = file, t.tran->line += line_bases[c];
    for (PrintedNode& p : t.printed) p.file = file, p.line += line_bases[c];
    nl_.transient.append(std::move(t), static_cast<uint32_t>(element_base[c]));
  }
  times_.enter += seconds_since(start);
  return line_bases[count - 1];
}

// Steps a and b of the header comment; step c is enter()'s.
void Parser::intern(RunNames& run, size_t count, bool parallel) {
  ChunkResult* chunks = run.chunks;
  NameTable& nodes = nl_.node_names;
  // a. First appearances of node names, one thread per shard.
  parallel_for(NameTable::kShards, parallel, [&](size_t s) {
    const NameTable::Resolver resolver{&RunNames::name, &run};
    std::vector<First>& firsts = firsts_[s];
    firsts.clear();
    // The shard's names in file order, looked up in a software pipeline: each stage's loads are
    // issued kAhead names before the next stage needs them (NameTable::prefetch says why). The
    // chunks' groups of the shard are walked once, in place, and the names in the pipeline kept
    // in a small ring, rather than copied first into one array (32 bytes a name written and read
    // back) for the stages to index.
    struct Pending {
      const ChunkNames::Entry* name;
      size_t chunk;
      uint32_t candidate;  // prefetch_place's, for prefetch_text
    };
    Pending ring[kRing];
    ShardNames walk(chunks, count, s);
    size_t entered = 0;  // names that entered the pipeline: name i enters at step i, is looked up at step i + 3 kAhead
    for (size_t i = 0; !walk.done() || i < entered + 3 * kAhead; ++i) {
      if (!walk.done()) {
        const ChunkNames::Entry& e = walk.entry();
        ring[i % kRing] = {&e, walk.chunk(), NameTable::npos};
        nodes.prefetch(e.hash);
        __builtin_prefetch(chunks[walk.chunk()].text + e.name.offset);
        walk.next();
        ++entered;
      }
      if (i >= kAhead && i - kAhead < entered) {
        Pending& p = ring[(i - kAhead) % kRing];
        p.candidate = nodes.prefetch_place(p.name->hash);
      }
      if (i >= 2 * kAhead && i - 2 * kAhead < entered) nodes.prefetch_text(ring[(i - 2 * kAhead) % kRing].candidate, resolver);
      if (i < 3 * kAhead || i - 3 * kAhead >= entered) continue;
      const Pending& p = ring[(i - 3 * kAhead) % kRing];
      const ChunkNames::Entry& e = *p.name;
      const uint32_t key = run.base[p.chunk] + e.index;
      const uint32_t id = nodes.lookup_or_reserve(chunks[p.chunk].view(e.name), e.hash, key, resolver);
      chunks[p.chunk].nodes.ids[e.index] = id;
      if (id == NameTable::npos) firsts.push_back({e.hash, key});
    }
  });
  // b. Ids of first appearances by a prefix sum in file order (every element name is one);
  // names appended in id order.
  struct Firsts {
    uint32_t names[2] = {0, 0};  // element names, node names
    uint64_t bytes[2] = {0, 0};
  };
  std::vector<Firsts> base(count + 1);
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    Firsts& f = base[c + 1];
    const ChunkResult& r = chunks[c];
    f.names[0] = static_cast<uint32_t>(r.element_names.size());
    f.bytes[0] = r.element_name_bytes;
    for (size_t i = 0; i < r.nodes.ids.size(); ++i)
      if (r.nodes.ids[i] == NameTable::npos) ++f.names[1], f.bytes[1] += r.nodes.names[i].size;
  });
  NameTable* tables[2] = {&nl_.element_names, &nodes};
  for (int t = 0; t < 2; ++t) {
    base[0].names[t] = tables[t]->size();
    base[0].bytes[t] = tables[t]->arena_bytes();
    for (size_t c = 0; c < count; ++c) base[c + 1].names[t] += base[c].names[t], base[c + 1].bytes[t] += base[c].bytes[t];
    tables[t]->extend(base[count].names[t] - base[0].names[t], base[count].bytes[t] - base[0].bytes[t]);
  }
  // Per chunk: element names, and the node names first seen, take their ids and go into the arenas.
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    ChunkResult& r = chunks[c];
    Firsts next = base[c];
    for (const ChunkName& name : r.element_names) {
      nl_.element_names.place(next.names[0]++, next.bytes[0], r.view(name));
      next.bytes[0] += name.size;
    }
    std::vector<uint32_t>& ids = r.nodes.ids;
    for (uint32_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != NameTable::npos) continue;
      const std::string_view name = r.node_name(i);
      ids[i] = next.names[1]++;
      nodes.place(ids[i], next.bytes[1], name);
      next.bytes[1] += name.size();
    }
  });
}

// The unknown control lines of one entered chunk, kept for flush_warnings().
void Parser::control_warnings(const ChunkResult& chunk, size_t first_element, uint32_t file, uint32_t line_base) {
  for (const ChunkEvent& event : chunk.events)
    if (event.kind == ChunkEvent::UnknownControl && rules_.first_control(event.text))
      controls_.push_back({first_element + event.element,
                           {ParseWarning::Kind::UnknownControl, {file, line_base + event.line}, {}, event.text}});
}

void Parser::flush_warnings() {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<DuplicateName> duplicates =
      found_duplicates_ ? std::exchange(*found_duplicates_, {}) : find_duplicate_names(nl_.element_names);
  times_.duplicates += seconds_since(start);
  // A control line with k elements before it comes before element k's duplicate.
  size_t next_control = 0;
  const auto controls_before = [&](uint64_t element) {
    for (; next_control < controls_.size() && controls_[next_control].first <= element; ++next_control)
      warn(std::move(controls_[next_control].second));
  };
  for (const DuplicateName& d : duplicates) {
    if (!rules_.wants_duplicates()) {
      rules_.add_duplicates(duplicates.size() - size_t(&d - duplicates.data()));
      break;
    }
    controls_before(d.element);
    rules_.count_duplicate();
    warn({ParseWarning::Kind::DuplicateName, nl_.elements[d.element].where(), nl_.elements[d.first].where(),
          std::string(nl_.element_name(d.element))});
  }
  controls_before(UINT64_MAX);
  controls_.clear();
}

void Parser::finish(const std::string& name) {
  flush_warnings();
  if (std::optional<std::string> summary = rules_.summary(name)) log(std::move(*summary));
  if (nl_.elements.empty()) throw InputError(name + ": the netlist has no elements");
  // Spare capacity stays: it was never written, so it is address space, not memory, and copying
  // the arrays to fit would page them in twice and raise the peak.
}

// Room in `netlist` for `size` bytes of text. Arrays: room for lines of 28 bytes (IBM-style lines
// are ~40), more than almost any netlist needs, so they are not copied to grow: capacity that is
// never written costs no memory. Hash indexes are written when made: sized for IBM-style lines
// (about one new node per element), with some room, since growing one costs a pass over it.
void reserve_for(Netlist& netlist, uint64_t size) {
  netlist.elements.reserve(size / 28);
  netlist.node_names.reserve(size / 28, size / 4);
  netlist.element_names.reserve(size / 28, size / 4);
  netlist.node_names.reserve_index(size / 52);
}

template <class Input>
Netlist parse(Input& input, const std::string& name, const ParseOptions& options) {
  Netlist netlist;
  reserve_for(netlist, input.total());
  Parser parser(netlist, options);
  try {
    parser.parse_stream(input, name, 0);
  } catch (const Located& e) {
    parser.flush_warnings();  // what came before the error, as a serial parse would have logged it
    throw ParseError(netlist.files[e.file], e.line, e.message);
  } catch (const InputError&) {
    parser.flush_warnings();
    throw;
  }
  parser.finish(name);
  const Parser::StepTimes& t = parser.step_times();
  spdlog::debug("parse steps: first block read {:.3f} s, chunks {:.3f} s, names interned {:.3f} s, elements entered "
                "{:.3f} s, waiting for reads {:.3f} s, duplicate element names {:.3f} s",
                t.first_read, t.chunks, t.names, t.enter, t.read_wait, t.duplicates);
  return netlist;
}

// Element k's place in `named` (ascending): where its name is once the names are thinned;
// named.size() or the place of a larger element when k is not there.
uint32_t place_among(const FillVector<uint32_t>& named, uint32_t k) {
  return uint32_t(std::lower_bound(named.begin(), named.end(), k) - named.begin());
}

}  // namespace

char element_letter(ElementKind kind) {
  static constexpr char kLetters[] = {'R', 'V', 'I', 'C', 'L'};
  return kLetters[static_cast<int>(kind)];
}

Netlist::Netlist() { node_names.intern("0"); }

std::string_view element_name_in(const NameTable& names, const FillVector<uint32_t>& named, bool thinned, uint32_t k) {
  return names[thinned ? place_among(named, k) : k];
}

std::string_view Netlist::element_name(uint32_t k) const {
  return element_name_in(element_names, named_elements, names_thinned, k);
}

void Netlist::keep_element_names(FillVector<uint32_t> keep) {
  if (names_thinned && keep == named_elements) return;  // a reader kept just these (ParseOptions::dc_names_only)
  const std::ptrdiff_t n = std::ptrdiff_t(keep.size());
  // Where element keep[i]'s name is now: its index, or its place among the named.
  FillVector<uint32_t> at;
  if (names_thinned) {
    at.resize(keep.size());
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) at[size_t(i)] = place_among(named_elements, keep[size_t(i)]);
    for (std::ptrdiff_t i = 0; i < n; ++i)
      if (at[size_t(i)] == named_elements.size() || named_elements[at[size_t(i)]] != keep[size_t(i)])
        throw std::logic_error("keep_element_names: element " + std::to_string(keep[size_t(i)]) + " has no name kept");
  }
  const auto name_of = [&](std::ptrdiff_t i) { return element_names[names_thinned ? at[size_t(i)] : keep[size_t(i)]]; };
  NameTable kept;
  // Each thread copies one range of the kept names (static schedules over the same range: the
  // same ranges in both loops) to where the names before its range end.
  std::vector<uint64_t> start(size_t(omp_get_max_threads()) + 1, 0);  // [t + 1]: thread t's bytes, then offsets
#pragma omp parallel
  {
    const size_t me = size_t(omp_get_thread_num());
    uint64_t bytes = 0;
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) bytes += name_of(i).size();
    start[me + 1] = bytes;
#pragma omp barrier
#pragma omp single
    {
      for (size_t t = 1; t < start.size(); ++t) start[t] += start[t - 1];
      kept.extend(uint32_t(n), start.back());
    }
    uint64_t offset = start[me];
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const std::string_view name = name_of(i);
      kept.place(uint32_t(i), offset, name);
      offset += name.size();
    }
  }
  element_names = std::move(kept);
  named_elements = std::move(keep);
  names_thinned = true;
}

std::string Netlist::where(const SourceLocation& loc) const {
  return files[loc.file] + ":" + std::to_string(loc.line);
}

void finish_netlist(Netlist& netlist, const std::string& name, std::vector<DuplicateName> duplicates) {
  Parser parser(netlist, ParseOptions());
  parser.take_duplicates(std::move(duplicates));
  parser.finish(name);
}

Netlist parse_netlist_text(const std::string& text, const std::string& name, const ParseOptions& options) {
  TextInput input(text);
  return parse(input, name, options);
}

Netlist parse_netlist(const std::string& path, const ParseOptions& options) {
  NetlistInput input(path);
  return parse(input, netlist_display_name(path), options);
}

NetlistPart parse_netlist_part(const std::string& path, uint64_t begin, uint64_t end, const ParseOptions& options) {
  FileRangeInput input(path, begin, end);
  NetlistPart part;
  reserve_for(part.netlist, input.total());
  Parser parser(part.netlist, options, &part.warnings);
  try {
    part.ended = parser.parse_stream(input, path, 0, begin == 0);
    part.lines = parser.top_lines();
  } catch (const Located& e) {
    part.error = ParseFailure{true, {e.file, e.line}, e.message};
  } catch (const InputError& e) {
    part.error = ParseFailure{false, {}, e.what()};
  }
  parser.flush_warnings();
  part.duplicates = parser.duplicates();
  part.netlist.node_names.drop_index();
  return part;
}

NetlistPart finish_netlist_part(Netlist netlist, uint32_t lines, bool ended, std::vector<DuplicateName> duplicates) {
  NetlistPart part;
  part.netlist = std::move(netlist);
  Parser parser(part.netlist, ParseOptions(), &part.warnings);
  parser.take_duplicates(std::move(duplicates));
  parser.flush_warnings();
  part.duplicates = parser.duplicates();
  part.lines = lines;
  part.ended = ended;
  part.netlist.node_names.drop_index();
  return part;
}

std::string warning_text(const ParseWarning& w, const std::vector<std::string>& files) {
  const auto where = [&](const SourceLocation& loc) { return files[loc.file] + ":" + std::to_string(loc.line); };
  if (w.kind == ParseWarning::Kind::UnknownControl) return where(w.where) + ": ignoring unknown control line " + shown(w.text);
  return where(w.where) + ": duplicate element name " + shown(w.text) + " (first at " + where(w.first) +
         "); both elements are kept";
}

bool WarningRules::first_control(std::string_view command) {
  std::string key(command);
  for (char& ch : key) ch = ch >= 'A' && ch <= 'Z' ? char(ch + ('a' - 'A')) : ch;
  return controls_.insert(std::move(key)).second;
}

bool WarningRules::count_duplicate() { return ++duplicates_ <= kMaxDuplicateWarnings; }

bool WarningRules::wants_duplicates() const { return duplicates_ < kMaxDuplicateWarnings; }

std::optional<std::string> WarningRules::summary(const std::string& name) const {
  if (duplicates_ <= kMaxDuplicateWarnings) return std::nullopt;
  return name + ": " + std::to_string(duplicates_) + " elements in all share a name with an earlier element (the first " +
         std::to_string(kMaxDuplicateWarnings) + " are listed above)";
}

}  // namespace pgsim
