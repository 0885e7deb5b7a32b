// libFuzzer target for the netlist parser and the SDD reduction (issue 7).
// Netlist text goes through parse_netlist_text (gzip data through a file and its decoder; plain
// text also in chunks of a few bytes: the outcomes must be equal) and reduce(); an InputError is the expected
// answer to bad text. Anything else -- another exception, a sanitizer report, a timeout, a leak,
// or a reduced system that breaks the invariants checked below -- is a crash.
// Built and run by tests/fuzz/run_fuzz.sh (clang++ -fsanitize=fuzzer,address,undefined).
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// What reduce() promises: an SDD M-matrix in valid CSR, finite b, and a node map into it.
void check(const pgsim::Netlist& nl, const pgsim::ReducedSystem& sys) {
  const pgsim::CsrMatrix& G = sys.G;
  const int32_t n = G.rows;
  require(G.ptr.size() == size_t(n) + 1 && G.ptr[0] == 0 && G.ptr[n] == G.nnz(), "CSR row pointers");
  require(G.col.size() == G.val.size() && sys.b.size() == size_t(n), "array sizes");
  require(sys.node_of_unknown.size() == size_t(n), "one node per unknown");
  for (int32_t i = 0; i < n; ++i) {
    require(G.ptr[i] <= G.ptr[i + 1], "row pointers increase");
    double diag = 0, off = 0;
    for (int32_t k = G.ptr[i]; k < G.ptr[i + 1]; ++k) {
      require(G.col[k] >= 0 && G.col[k] < n, "column in range");
      require(k == G.ptr[i] || G.col[k] > G.col[k - 1], "columns sorted and unique");
      require(std::isfinite(G.val[k]), "finite matrix entries");
      if (G.col[k] == i) diag = G.val[k];
      else require(G.val[k] < 0, "off-diagonals negative"), off -= G.val[k];
    }
    require(diag > 0 && diag >= off * (1 - 1e-12), "diagonally dominant rows");
    require(std::isfinite(sys.b[i]), "finite right-hand side");
  }
  require(sys.unknown_of_node.size() == nl.node_count() && sys.offset_of_node.size() == nl.node_count(), "node map");
  for (uint32_t v = 0; v < nl.node_count(); ++v) {
    require(sys.unknown_of_node[v] >= -1 && sys.unknown_of_node[v] < n, "unknown in range");
    require(std::isfinite(sys.offset_of_node[v]), "finite offsets");
  }
  require(sys.unknown_of_node[pgsim::Netlist::ground] == -1 && sys.offset_of_node[pgsim::Netlist::ground] == 0,
          "ground is fixed at 0 V");
}

// A parse's outcome as text (the netlist or the error), to compare chunked and one-chunk parses.
std::string outcome(const std::string& text, const pgsim::ParseOptions& options) {
  std::string s;
  try {
    const pgsim::Netlist nl = pgsim::parse_netlist_text(text, "fuzz.sp", options);
    for (uint32_t i = 0; i < nl.node_count(); ++i) s.append(nl.node_names[i]).push_back('\n');
    for (size_t k = 0; k < nl.elements.size(); ++k) {
      const pgsim::Element& e = nl.elements[k];
      s += std::to_string(k) + " " + std::string(nl.element_names[uint32_t(k)]) + " " + std::to_string(e.plus) + " " +
           std::to_string(e.minus) + " " + std::to_string(e.value) + " " + nl.where(e.where()) + "\n";
    }
    for (const std::string& w : nl.warnings) s += w + "\n";
  } catch (const pgsim::InputError& e) {
    s = e.what();
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // duplicate-name and unknown-command warnings
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // An input that starts as gzip does is read from a file, through NetlistInput's decoder.
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (gzip) {
    std::FILE* f = std::fopen("fuzz.sp.gz", "wb");
    require(f && std::fwrite(data, 1, size, f) == size && std::fclose(f) == 0, "fuzz.sp.gz written");
  }
  try {
    pgsim::Netlist nl = gzip ? pgsim::parse_netlist("fuzz.sp.gz") : pgsim::parse_netlist_text(text, "fuzz.sp");
    pgsim::ReducedSystem sys = pgsim::reduce(nl);
    check(nl, sys);
  } catch (const pgsim::InputError&) {
  }
  // Chunk and block boundaries (here every few bytes) change nothing.
  pgsim::ParseOptions tiny;
  tiny.chunk_bytes = 7;
  tiny.block_bytes = 13;
  if (!gzip) require(outcome(text, tiny) == outcome(text, {}), "a chunked parse equals the one-chunk parse");
  return 0;
}
