// The parallel parser (src/parser/parser.cpp) equals a one-chunk parse whatever the block and
// chunk boundaries and the thread count: names and ids, elements and their file:line, warnings,
// the first error's text, the transient tables (source waveforms, .tran, .print).
#include <catch2/catch.hpp>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <random>

#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

// A parse's whole outcome as text: the netlist, or the error.
std::string outcome(const std::string& path, const ParseOptions& options) {
  std::string s;
  try {
    const Netlist nl = parse_netlist(path, options);
    for (uint32_t i = 0; i < nl.node_count(); ++i) s += "node " + std::string(nl.node_names[i]) + "\n";
    for (uint32_t i = 0; i < nl.element_names.size(); ++i) s += "name " + std::string(nl.element_names[i]) + "\n";
    for (size_t k = 0; k < nl.elements.size(); ++k) {  // element k is named element_names[k]
      const Element& e = nl.elements[k];
      s += "element " + std::string(1, element_letter(e.kind)) + " " + std::to_string(k) + " " +
           std::to_string(e.plus) + " " + std::to_string(e.minus) + " " + exact(e.value) + " " + nl.where(e.where()) + "\n";
    }
    for (const std::string& w : nl.warnings) s += "warning " + w + "\n";
    const TransientInputs& t = nl.transient;
    for (const SourceWaveform& w : t.waveforms) {
      s += "waveform " + std::to_string(w.element) + " " + std::to_string(int(w.waveform.kind));
      for (double p : w.waveform.p) s += " " + exact(p);
      s += "\n";
    }
    if (t.tran)
      s += "tran " + exact(t.tran->tstep) + " " + exact(t.tran->tstop) + " " + exact(t.tran->tstart) + " " +
           exact(t.tran->tmax) + " " + nl.where({t.tran->file, t.tran->line}) + "\n";
    for (const PrintedNode& p : t.printed) s += "print " + p.name + " " + nl.where({p.file, p.line}) + "\n";
    for (const std::string& f : nl.files) s += "file " + f + "\n";
    s += "bytes " + std::to_string(nl.bytes_read) + "\n";
  } catch (const InputError& e) {
    s += std::string("error ") + e.what() + "\n";
  }
  return s;
}

// Quiet spdlog while a test parses thousands of times (warnings are compared through Netlist::warnings).
struct QuietLog {
  QuietLog() { spdlog::set_level(spdlog::level::off); }
  ~QuietLog() { spdlog::set_level(spdlog::level::info); }
};

}  // namespace

TEST_CASE("a chunk or block boundary at every byte gives the one-chunk parse", "[parser]") {
  QuietLog quiet;
  test::TempDir dir;
  dir.write("inc.sp", "* included\r\nR7 a\r\n+ c 4 ; comment\r\nR1 c 0 1\r\n.print tran v(c)\r\n.end\r\nR8 junk\n");
  dir.write("bad_inc.sp", "R9 x y 1\nR10 x\n");
  const std::vector<std::string> netlists = {
      // continuation lines, comments, CRLF, a BOM, .include, .end, duplicates, unknown dot commands
      "\xEF\xBB\xBF* title\nR1 a b 1k\n+\n\nR2 b\n+ 0\n   + 2.5 $ tail\nV1 a 0 DC 1.8\n.foo x\n"
      "R1 a 0 3 ; dup\n.include inc.sp\nI1 B 0 1m\n.FOO\n.bar\nr2 c GND 1\nR1 c b 7\nR1 b 0 1\nR1 a c 2\nR1 b c 3\n"
      ".tran 1p 1n\nI2 b 0 PULSE(0 1m 1n\n+ 2n 1n 5n 10n)\nV2 c 0 DC 1 PWL(0 1 1n 1.1)\n.print tran v(a) v(b)\n"
      ".tran 2p 2n\n.end\nR3 this is not read\n",
      "R1 a b 1\r\nR2 b 0 2\r\n* c\r\n+ R3 b c 3\r\n\r\nV1 a 0 1\r\n",  // a '+' line continuing a comment
      "V1 a 0 1\nR1 a b 1\nR2 b c 2\n+ 3 4\nR3 c 0 1\n",                // an error on a continued line
      "V1 a 0 1\nR1 a b 1\n.include bad_inc.sp\nR2 b 0 1\n",           // an error in an included file
      "V1 a 0 1\nR1 a 0 1\nR1 a 0 2\n.x\nR1 a 0 3\n.include missing.sp\nR2 a 0 4\n",
      "  + R1 a b 1\nV1 a 0 1\n",
      "R1 a b 1\nR2 b\x01 0 1\n",
      "V1 a 0 1\nR1 a 0 1\n.end",
      "V1 a 0 1\nR1 a 0 1",
  };
  for (const std::string& text : netlists) {
    const std::string path = dir.write("top.sp", text);
    const std::string expected = outcome(path, {});
    INFO(text);
    INFO(expected);
    CHECK((expected.find("element") != std::string::npos || expected.find("error") != std::string::npos));
    for (size_t chunk : {1, 16})
      for (size_t block = 1; block <= text.size() + 1; ++block) {
        ParseOptions options;
        options.chunk_bytes = chunk;
        options.block_bytes = block;
        INFO("chunk " << chunk << ", block " << block);
        REQUIRE(outcome(path, options) == expected);
      }
  }
  // What the first netlist must give, so the equalities above are not between two wrong answers.
  const std::string first = outcome(dir.write("top.sp", netlists[0]), {});
  CHECK_THAT(first, Catch::Contains("element R 0 1 2 0x1.f4p+9 " + dir.file("top.sp") + ":2\n"));
  CHECK_THAT(first, Catch::Contains("element R 1 2 0 0x1.4p+1 " + dir.file("top.sp") + ":5\n"));
  CHECK_THAT(first, Catch::Contains("element R 4 1 3 0x1p+2 " + dir.file("inc.sp") + ":2\n"));  // element 4, named by its index
  CHECK_THAT(first, Catch::Contains("warning " + dir.file("top.sp") + ":9: ignoring unknown control line '.foo'\n"));
  CHECK_THAT(first, Catch::Contains("warning " + dir.file("top.sp") + ":10: duplicate element name 'R1' (first at " +
                                    dir.file("top.sp") + ":2); both elements are kept\n"));
  CHECK_THAT(first, Catch::Contains("warning " + dir.file("top.sp") + ":14: ignoring unknown control line '.bar'\n"));
  CHECK_THAT(first, Catch::Contains("warning " + dir.file("top.sp") + ": 7 elements in all share a name with an earlier element"));
  CHECK(first.find("'.FOO'") == std::string::npos);  // one warning per command
  CHECK(first.find("R3") == std::string::npos);      // after .end
  // Transient tables: .print nodes in file order (the include's first), the last .tran, waveforms
  // at their elements' indices (I2 and V2 are elements 12 and 13).
  CHECK_THAT(first, Catch::Contains("print c " + dir.file("inc.sp") + ":5\nprint a " + dir.file("top.sp") +
                                    ":24\nprint b " + dir.file("top.sp") + ":24\n"));
  CHECK_THAT(first, Catch::Contains(" 0x0p+0 0x0p+0 " + dir.file("top.sp") + ":25\n"));
  CHECK(first.find(":20\n") == std::string::npos);  // the first .tran was replaced
  CHECK_THAT(first, Catch::Contains("\nwaveform 12 0 0x0p+0 "));           // I2: PULSE
  CHECK_THAT(first, Catch::Contains("\nwaveform 13 1 0x0p+0 0x1p+0 "));    // V2: PWL
  CHECK(first.find("R8") == std::string::npos);      // after the include's .end
  const std::string continued = outcome(dir.write("top.sp", netlists[2]), {});
  CHECK(continued == "error " + dir.file("top.sp") + ":3: element 'R2': unexpected field '3' after the value\n");
  const std::string included = outcome(dir.write("top.sp", netlists[3]), {});
  CHECK_THAT(included, Catch::StartsWith("error " + dir.file("bad_inc.sp") + ":2: element 'R10' needs two nodes"));
}

TEST_CASE("1, 2 and 5 threads parse a generated grid to the same netlist", "[parser]") {
  test::TempDir dir;
  const std::string netlist = dir.file("g.sp");
  const std::string cmd = std::string("\"") + PGSIM_GEN_EXE + "\" --nodes 50000 --seed 2 -o " + netlist + " > " +
                          dir.file("gen.log") + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  ParseOptions small;  // blocks of 1 MB (~75k names: interned on all threads), 16 kB chunks
  small.block_bytes = 1 << 20;
  small.chunk_bytes = 16 << 10;
  std::vector<std::string> outcomes;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 5}) {
    omp_set_num_threads(threads);
    outcomes.push_back(outcome(netlist, small));
  }
  omp_set_num_threads(saved);
  const std::string serial = outcome(netlist, {});
  CHECK_THAT(serial, Catch::Contains("element R"));
  for (const std::string& o : outcomes) CHECK(o == serial);
}

TEST_CASE("ibmpg1t parses to the same netlist and transient tables for any chunk size and thread count", "[parser][ibm]") {
  QuietLog quiet;
  const std::string netlist = test::shared_data("ibmpg1t.spice");
  if (!std::ifstream(netlist)) {
    WARN("no ibmpg1t data in " PGSIM_SHARED_DATA);
    return;
  }
  const std::string serial = outcome(netlist, {});
  const auto lines_starting = [&](const std::string& prefix) {
    size_t n = 0;
    for (size_t at = serial.find("\n" + prefix); at != std::string::npos; at = serial.find("\n" + prefix, at + 1)) ++n;
    return n;
  };
  CHECK(lines_starting("tran ") == 1);
  CHECK(lines_starting("print ") == 20);
  CHECK(lines_starting("waveform ") > 1000);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 5})
    for (size_t chunk : {size_t(4) << 10, size_t(64) << 10}) {
      omp_set_num_threads(threads);
      ParseOptions options;
      options.chunk_bytes = chunk;
      options.block_bytes = 1 << 20;
      INFO("threads " << threads << ", chunk " << chunk);
      CHECK(outcome(netlist, options) == serial);
    }
  omp_set_num_threads(saved);
}

TEST_CASE("node and element ids follow first appearance, case-insensitively, for any chunk size and thread count", "[parser]") {
  // Random names from small pools in random case (so a chunk meets a node many times, in several
  // spellings, and meets nodes and element names that earlier chunks met first), checked against
  // a plain serial numbering written here: node names' first spelling kept, ids in order of first
  // appearance, "gnd" ground; element names one per element, as spelt; a duplicate-name count.
  QuietLog quiet;
  std::mt19937 rng(7);
  const auto spell = [&](std::string name) {
    for (char& c : name)
      if (rng() % 2) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return name;
  };
  std::vector<std::string> nodes{"0"}, names;
  std::map<std::string, uint32_t> node_id{{"0", 0}};
  std::set<std::string> seen_names;
  std::vector<std::array<uint32_t, 3>> elements;
  size_t duplicates = 0;
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const auto node = [&](const std::string& spelt) -> uint32_t {
    if (lower(spelt) == "gnd") return 0;
    const auto [it, added] = node_id.emplace(lower(spelt), static_cast<uint32_t>(nodes.size()));
    if (added) nodes.push_back(spelt);
    return it->second;
  };
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    const std::string name = spell("r" + std::to_string(rng() % 2500));
    const std::string a = spell(rng() % 50 == 0 ? "gnd" : "n" + std::to_string(rng() % 700));
    const std::string b = spell(rng() % 50 == 0 ? "0" : "n" + std::to_string(rng() % 700));
    text += name + " " + a + " " + b + " " + std::to_string(1 + rng() % 9) + "\n";
    duplicates += !seen_names.insert(lower(name)).second;
    names.push_back(name);
    const uint32_t plus = node(a);
    elements.push_back({static_cast<uint32_t>(names.size() - 1), plus, node(b)});
  }
  REQUIRE(duplicates > 100);
  test::TempDir dir;
  const std::string path = dir.write("random.sp", text);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 5})
    for (size_t chunk : {size_t(0), size_t(64), size_t(4096)}) {
      omp_set_num_threads(threads);
      ParseOptions options;
      options.chunk_bytes = chunk;
      options.block_bytes = chunk ? 8 * chunk : 0;
      INFO("threads " << threads << ", chunk " << chunk);
      const Netlist nl = parse_netlist(path, options);
      REQUIRE(nl.node_count() == nodes.size());
      for (uint32_t i = 0; i < nodes.size(); ++i) REQUIRE(nl.node_names[i] == nodes[i]);
      REQUIRE(nl.element_names.size() == names.size());
      for (uint32_t i = 0; i < names.size(); ++i) REQUIRE(nl.element_names[i] == names[i]);
      REQUIRE(nl.elements.size() == elements.size());
      for (size_t k = 0; k < elements.size(); ++k) {
        REQUIRE(elements[k][0] == k);  // element k is named element_names[k]
        REQUIRE(nl.elements[k].plus == elements[k][1]);
        REQUIRE(nl.elements[k].minus == elements[k][2]);
        REQUIRE(nl.elements[k].where().line == k + 1);
      }
      REQUIRE(!nl.warnings.empty());
      CHECK_THAT(nl.warnings.back(), Catch::Contains(std::to_string(duplicates) + " elements in all share a name"));
    }
  omp_set_num_threads(saved);
}
