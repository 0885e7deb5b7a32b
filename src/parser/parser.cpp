// SPICE netlist reader (DESIGN.md section 1), on all cores.
//
// How (the contract: the Netlist, its warnings and its first error equal a one-chunk parse's,
// whatever the block and chunk sizes and the thread count):
// 1. Blocks. A file is read through NetlistInput in blocks of about chunk_bytes x 2 x threads.
//    A block is cut at its last line start that is not a '+' continuation; the tail after the
//    cut is carried into the next block. The text is never held whole.
// 2. Chunks. The block is split at such line starts into chunks of about chunk_bytes, parsed
//    at once on all threads (chunk_parser.hpp): elements with their names as hashed views, dot
//    commands as events, the chunk's first error. A chunk stops after an .include or .end line.
// 3. Entering, in file order, a run of chunks up to the first that stopped early:
//    a. Interning (one thread per NameTable shard): each shard walks its occurrences (chunks
//       in order, occurrences in order) and looks each name up; a name not yet in the table is
//       entered as provisional, keyed by the occurrence's index in the run: that occurrence is
//       the name's first appearance, and later occurrences get the key.
//    b. Ids: a prefix sum over the first appearances of each chunk, in file order, gives each
//       its id (the table's size plus its rank), so nodes and element names are numbered by
//       first appearance exactly as a serial parse numbers them; the names are appended to the
//       tables' arenas in parallel, occurrences holding a key take the id of the one it names,
//       and each shard replaces its provisional entries by the ids.
//    c. Elements are copied into the netlist in parallel with their file:line; warnings
//       (duplicate element names, unknown control lines) follow in file order.
//    Then the stopping chunk's reason: its error is thrown (with the file line its chunk
//    started at plus its line in the chunk), .end ends the file, an .include is read
//    (recursively, the same way) before the rest of the chunk is parsed and entered.
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <mutex>
#include <unordered_set>

#include "chunk_parser.hpp"
#include "input_error.hpp"
#include "netlist.hpp"
#include "netlist_input.hpp"

namespace pgsim {
namespace {

constexpr size_t kDefaultChunkBytes = 4u << 20;
constexpr uint32_t kParallelOccurrences = 1u << 16;  // fewer names are interned on one thread

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

// A run of chunks being entered: occurrence keys (index over the run) to chunks.
struct Run {
  ChunkResult* chunks;
  std::vector<uint32_t> occ_base;  // first key of each chunk, and the total
  size_t chunk_of(uint32_t key) const {
    return static_cast<size_t>(std::upper_bound(occ_base.begin(), occ_base.end(), key) - occ_base.begin()) - 1;
  }
  static std::string_view name(const void* run, uint32_t key) {
    const Run& r = *static_cast<const Run*>(run);
    const size_t c = r.chunk_of(key);
    return r.chunks[c].names[key - r.occ_base[c]];
  }
};

class Parser {
 public:
  Parser(Netlist& netlist, const ParseOptions& options) : nl_(netlist), options_(options) {}

  template <class Input>
  void parse_stream(Input& input, const std::string& path, int depth);
  void finish(const std::string& name);

 private:
  bool parse_block(const char* text, size_t size, uint32_t file, uint32_t& line_base, bool file_start, int depth);
  uint32_t enter(ChunkResult* chunks, size_t count, uint32_t file, uint32_t& line_base);
  void intern(Run& run, size_t count, bool parallel);
  void warnings(const ChunkResult& chunk, size_t first_element, uint32_t file, uint32_t line_base, uint32_t duplicates);
  void include(const ChunkEvent& event, uint32_t file, uint32_t line, int depth);
  void warn(std::string message) {
    spdlog::warn("{}", message);
    nl_.warnings.push_back(std::move(message));
  }
  size_t chunk_bytes() const { return options_.chunk_bytes ? options_.chunk_bytes : kDefaultChunkBytes; }

  Netlist& nl_;
  const ParseOptions& options_;
  std::vector<std::vector<uint32_t>> firsts_ = std::vector<std::vector<uint32_t>>(NameTable::kShards);
  std::unordered_set<std::string> warned_;
  uint64_t duplicates_ = 0;
};

template <class Input>
void Parser::parse_stream(Input& input, const std::string& path, int depth) {
  const uint32_t file = static_cast<uint32_t>(nl_.files.size());
  nl_.files.push_back(path);
  const size_t block = options_.block_bytes ? options_.block_bytes
                                            : chunk_bytes() * 2 * static_cast<size_t>(std::max(1, omp_get_max_threads()));
  std::string buffer;
  uint32_t line_base = 0;
  bool eof = false, file_start = true;
  while (true) {
    // Read until the buffer holds a cut (a logical line longer than a block takes several reads).
    size_t cut = 0;
    while (!eof && !cut) {
      const size_t old = buffer.size();
      buffer.resize(old + block);
      const size_t got = input.read(buffer.data() + old, block);
      buffer.resize(old + got);
      eof = got < block;
      if (!eof) cut = last_cut(buffer.data(), 0, buffer.size(), buffer.size());
    }
    if (eof) cut = buffer.size();
    if (cut == 0) break;
    const bool ended = parse_block(buffer.data(), cut, file, line_base, file_start, depth);
    file_start = false;
    if (depth == 0 && options_.progress) options_.progress(input.progress(), input.total(), options_.progress_user);
    if (ended) break;
    buffer.erase(0, cut);
  }
  if (depth == 0 && options_.progress) options_.progress(input.total(), input.total(), options_.progress_user);
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
  std::vector<ChunkResult> chunks(ranges.size());
  parallel_for(ranges.size(), ranges.size() > 1, [&](size_t i) {
    chunks[i] = parse_chunk(text + ranges[i].first, text + ranges[i].second, file_start && i == 0);
  });
  for (size_t i = 0; i < chunks.size();) {
    size_t j = i;
    while (j < chunks.size() && !chunks[j].stopped_early()) ++j;
    const size_t last = std::min(j + 1, chunks.size());
    const uint32_t last_base = enter(&chunks[i], last - i, file, line_base);
    if (j == chunks.size()) break;
    const ChunkResult& stopped = chunks[j];
    if (stopped.error) throw ParseError(nl_.files[file], last_base + stopped.error->line, stopped.error->message);
    const ChunkEvent& event = stopped.events.back();
    if (event.kind == ChunkEvent::End) {
      nl_.bytes_read += static_cast<uint64_t>(stopped.stop - text);
      return true;
    }
    include(event, file, last_base + event.line, depth);
    // The rest of the chunk, after the .include line.
    ranges[j].first = static_cast<size_t>(stopped.stop - text);
    chunks[j] = parse_chunk(text + ranges[j].first, text + ranges[j].second, false);
    i = j;
  }
  nl_.bytes_read += size;
  return false;
}

void Parser::include(const ChunkEvent& event, uint32_t file, uint32_t line, int depth) {
  if (depth + 1 >= kMaxIncludeDepth)
    throw ParseError(nl_.files[file], line,
                     ".include nested more than " + std::to_string(kMaxIncludeDepth) + " deep (a file that includes itself?)");
  std::filesystem::path path(event.text);
  if (path.is_relative()) path = std::filesystem::path(nl_.files[file]).parent_path() / path;
  // Opening or reading the file fails at the .include line (errors in its text have their own place).
  try {
    NetlistInput input(path.string());
    parse_stream(input, path.string(), depth + 1);
  } catch (const ParseError&) {
    throw;
  } catch (const InputError& e) {
    throw ParseError(nl_.files[file], line, std::string(".include: ") + e.what());
  }
}

// Enters chunks[0, count) (see the header comment, step 3); returns the line base of the last.
uint32_t Parser::enter(ChunkResult* chunks, size_t count, uint32_t file, uint32_t& line_base) {
  Run run{chunks, std::vector<uint32_t>(count + 1, 0)};
  for (size_t c = 0; c < count; ++c) {
    const uint64_t next = uint64_t(run.occ_base[c]) + chunks[c].ids.size();
    if (next >= NameTable::kProvisional) throw InputError("a netlist block with more than 2^31 names");
    run.occ_base[c + 1] = static_cast<uint32_t>(next);
  }
  const bool parallel = run.occ_base[count] >= kParallelOccurrences;
  intern(run, count, parallel);

  // Elements, with their places in the file.
  std::vector<size_t> element_base(count + 1, nl_.elements.size());
  std::vector<uint32_t> line_bases(count), duplicates(count);
  for (size_t c = 0; c < count; ++c) {
    element_base[c + 1] = element_base[c] + chunks[c].elements.size();
    line_bases[c] = line_base;
    line_base += chunks[c].lines;
  }
  nl_.elements.resize(element_base[count]);
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    const ChunkResult& r = chunks[c];
    uint32_t dups = 0;
    for (size_t k = 0; k < r.elements.size(); ++k) {
      const ChunkElement& ce = r.elements[k];
      Element& e = nl_.elements[element_base[c] + k];
      e.kind = ce.kind;
      e.name = r.ids[3 * k];
      e.plus = r.ids[3 * k + 1];
      e.minus = r.ids[3 * k + 2];
      e.value = ce.value;
      e.where = {file, line_bases[c] + ce.line};
      dups += ce.duplicate;
    }
    duplicates[c] = dups;
  });
  for (size_t c = 0; c < count; ++c) {
    warnings(chunks[c], element_base[c], file, line_bases[c], duplicates[c]);
    // Transient tables: element indices and lines were the chunk's own.
    TransientInputs& t = chunks[c].transient;
    if (t.tran) t.tran->file = file, t.tran->line += line_bases[c];
    for (PrintedNode& p : t.printed) p.file = file, p.line += line_bases[c];
    nl_.transient.append(std::move(t), static_cast<uint32_t>(element_base[c]));
  }
  return line_bases[count - 1];
}

void Parser::intern(Run& run, size_t count, bool parallel) {
  ChunkResult* chunks = run.chunks;
  const NameTable::Resolver resolver{&Run::name, &run};
  auto table = [&](size_t occurrence) -> NameTable& { return occurrence % 3 == 0 ? nl_.element_names : nl_.node_names; };
  // a. First appearances, one thread per shard.
  parallel_for(NameTable::kShards, parallel, [&](size_t s) {
    std::vector<uint32_t>& firsts = firsts_[s];
    firsts.clear();
    for (size_t c = 0; c < count; ++c) {
      ChunkResult& r = chunks[c];
      const uint32_t* occ = r.by_shard.data() + r.shard_begin[s];
      const size_t n = r.shard_begin[s + 1] - r.shard_begin[s];
      constexpr size_t kAhead = 8;  // overlap the table misses of the next occurrences
      for (size_t k = 0; k < std::min(n, kAhead); ++k) table(occ[k]).prefetch(r.hashes[occ[k]]);
      for (size_t k = 0; k < n; ++k) {
        if (k + kAhead < n) table(occ[k + kAhead]).prefetch(r.hashes[occ[k + kAhead]]);
        const uint32_t o = occ[k];
        const uint32_t key = run.occ_base[c] + o;
        const uint32_t id = table(o).lookup_or_reserve(r.names[o], r.hashes[o], key, resolver);
        if (id == NameTable::npos) {
          firsts.push_back(key);
          continue;
        }
        r.ids[o] = id;
        if (o % 3 == 0) r.elements[o / 3].duplicate = true;
      }
    }
  });
  // b. Ids of first appearances by a prefix sum in file order; names appended in id order.
  struct Firsts {
    uint32_t names[2] = {0, 0};  // [0]: element names, [1]: node names
    uint64_t bytes[2] = {0, 0};
  };
  std::vector<Firsts> base(count + 1);
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    const ChunkResult& r = chunks[c];
    Firsts& f = base[c + 1];
    for (size_t o = 0; o < r.ids.size(); ++o)
      if (r.ids[o] == NameTable::npos) ++f.names[o % 3 != 0], f.bytes[o % 3 != 0] += r.names[o].size();
  });
  NameTable* tables[2] = {&nl_.element_names, &nl_.node_names};
  for (int t = 0; t < 2; ++t) {
    base[0].names[t] = tables[t]->size();
    base[0].bytes[t] = tables[t]->arena_bytes();
    for (size_t c = 0; c < count; ++c) base[c + 1].names[t] += base[c].names[t], base[c + 1].bytes[t] += base[c].bytes[t];
    tables[t]->extend(base[count].names[t] - base[0].names[t], base[count].bytes[t] - base[0].bytes[t]);
  }
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    ChunkResult& r = chunks[c];
    Firsts next = base[c];
    for (size_t o = 0; o < r.ids.size(); ++o) {
      if (r.ids[o] != NameTable::npos) continue;
      const int t = o % 3 != 0;
      r.ids[o] = next.names[t]++;
      tables[t]->place(r.ids[o], next.bytes[t], r.names[o]);
      next.bytes[t] += r.names[o].size();
    }
  });
  // Occurrences keyed to a first appearance take its id.
  parallel_for(count, parallel && count > 1, [&](size_t c) {
    ChunkResult& r = chunks[c];
    for (uint32_t& id : r.ids) {
      if (!(id & NameTable::kProvisional)) continue;
      const uint32_t key = id & ~NameTable::kProvisional;
      const size_t k = run.chunk_of(key);
      id = chunks[k].ids[key - run.occ_base[k]];
    }
  });
  // c. Provisional table entries become the ids.
  parallel_for(NameTable::kShards, parallel, [&](size_t s) {
    for (uint32_t key : firsts_[s]) {
      const size_t c = run.chunk_of(key);
      const uint32_t o = key - run.occ_base[c];
      table(o).settle(chunks[c].hashes[o], key, chunks[c].ids[o]);
    }
  });
}

// Warnings of one entered chunk in file order: duplicate element names (the first
// kMaxDuplicateWarnings of the whole netlist) and unknown control lines (once per command).
void Parser::warnings(const ChunkResult& chunk, size_t first_element, uint32_t file, uint32_t line_base,
                      uint32_t duplicates) {
  size_t next_event = 0;
  // Events before element k (an event's `element` counts the elements before it).
  const auto events_before = [&](size_t k) {
    for (; next_event < chunk.events.size() && chunk.events[next_event].element <= k; ++next_event) {
      const ChunkEvent& event = chunk.events[next_event];
      if (event.kind != ChunkEvent::UnknownControl) continue;
      std::string key(event.text);
      for (char& ch : key) ch = ch >= 'A' && ch <= 'Z' ? char(ch + ('a' - 'A')) : ch;
      if (warned_.insert(key).second)
        warn(nl_.files[file] + ":" + std::to_string(line_base + event.line) + ": ignoring unknown control line " +
             shown(event.text));
    }
  };
  if (duplicates > 0 && duplicates_ < kMaxDuplicateWarnings) {
    for (size_t k = 0; k < chunk.elements.size(); ++k) {
      events_before(k);
      if (!chunk.elements[k].duplicate || ++duplicates_ > kMaxDuplicateWarnings) continue;
      const Element& e = nl_.elements[first_element + k];
      // The first element of this name: name ids follow first appearances, so it is at index >= the id.
      size_t first = e.name;
      while (nl_.elements[first].name != e.name) ++first;
      warn(nl_.where(e.where) + ": duplicate element name " + shown(chunk.names[3 * k]) + " (first at " +
           nl_.where(nl_.elements[first].where) + "); both elements are kept");
    }
  } else {
    duplicates_ += duplicates;
  }
  events_before(SIZE_MAX);
}

void Parser::finish(const std::string& name) {
  if (duplicates_ > kMaxDuplicateWarnings)
    warn(name + ": " + std::to_string(duplicates_) + " elements in all share a name with an earlier element (the first " +
         std::to_string(kMaxDuplicateWarnings) + " are listed above)");
  if (nl_.elements.empty()) throw InputError(name + ": the netlist has no elements");
  // The netlist stays in memory through the whole run: no spare capacity (vectors grown by doubling
  // hold up to twice their size), and no index of element names (only messages read them after).
  nl_.element_names.drop_index();
  nl_.element_names.shrink_to_fit();
  nl_.node_names.shrink_to_fit();
  nl_.elements.shrink_to_fit();
}

template <class Input>
Netlist parse(Input& input, const std::string& name, const ParseOptions& options) {
  Netlist netlist;
  // IBM-style lines are ~40 bytes with two nodes each, about one new node per element.
  const uint64_t size = input.total();
  netlist.elements.reserve(size / 40);
  netlist.node_names.reserve(size / 60, size / 4);
  netlist.element_names.reserve(size / 40, size / 8);
  Parser parser(netlist, options);
  parser.parse_stream(input, name, 0);
  parser.finish(name);
  return netlist;
}

}  // namespace

char element_letter(ElementKind kind) {
  static constexpr char kLetters[] = {'R', 'V', 'I', 'C', 'L'};
  return kLetters[static_cast<int>(kind)];
}

Netlist::Netlist() { node_names.intern("0"); }

std::string Netlist::where(const SourceLocation& loc) const {
  return files[loc.file] + ":" + std::to_string(loc.line);
}

Netlist parse_netlist_text(const std::string& text, const std::string& name, const ParseOptions& options) {
  TextInput input(text);
  return parse(input, name, options);
}

Netlist parse_netlist(const std::string& path, const ParseOptions& options) {
  NetlistInput input(path);
  return parse(input, netlist_display_name(path), options);
}

}  // namespace pgsim
