// The GPU netlist reader (gpu/gpu_parse.hpp) against the CPU parser: every netlist it takes must
// come back as the CPU parser's, field by field, and every form it does not take must be declined.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "app/run.hpp"
#include "gpu/gpu_parse.hpp"
#include "gpu_test_util.hpp"
#include "mpirun_util.hpp"
#include "mna/reduce.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "parser/netlist_part.hpp"
#include "plain_mutation.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// Every field of a parsed netlist the rest of pgsim reads.
void require_same(const Netlist& gpu, const Netlist& cpu) {
  REQUIRE(gpu.files == cpu.files);
  REQUIRE(gpu.warnings == cpu.warnings);
  REQUIRE(gpu.bytes_read == cpu.bytes_read);
  REQUIRE(gpu.elements.size() == cpu.elements.size());
  for (size_t k = 0; k < cpu.elements.size(); ++k) {
    const Element &g = gpu.elements[k], &c = cpu.elements[k];
    INFO("element " << k << " (line " << cpu.elements[k].line << ")");  // its name may not be kept
    REQUIRE(g.plus == c.plus);
    REQUIRE(g.minus == c.minus);
    REQUIRE(std::memcmp(&g.value, &c.value, sizeof(double)) == 0);  // the same double, -0 included
    REQUIRE(g.line == c.line);
    REQUIRE(g.file == c.file);
    REQUIRE(g.kind == c.kind);
  }
  REQUIRE(gpu.node_names.size() == cpu.node_names.size());
  for (uint32_t i = 0; i < cpu.node_names.size(); ++i) REQUIRE(gpu.node_names[i] == cpu.node_names[i]);
  REQUIRE(gpu.names_thinned == cpu.names_thinned);
  REQUIRE(gpu.named_elements == cpu.named_elements);
  REQUIRE(gpu.element_names.size() == cpu.element_names.size());
  for (uint32_t i = 0; i < cpu.element_names.size(); ++i) REQUIRE(gpu.element_names[i] == cpu.element_names[i]);
  REQUIRE(!gpu.transient.tran);
}

// The CPU parse's netlist thinned to the names that ParseOptions::dc_names_only keeps: the
// merging elements' and the duplicates' later elements'.
void keep_dc_names(Netlist& cpu) {
  const MergingElements merging = merging_elements(cpu, nullptr);
  FillVector<uint32_t> keep(merging.elements.begin(), merging.elements.end());
  for (const DuplicateName& d : find_duplicate_names(cpu.element_names)) keep.push_back(d.element);
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  cpu.keep_element_names(std::move(keep));
}

// The text read both ways; true when the GPU reader took it (and then gave the CPU's netlist,
// with dc_names_only the CPU's thinned as keep_dc_names() thins it).
bool read_alike(const std::string& text, bool dc_names_only = false) {
  Netlist gpu;
  std::string why;
  ParseOptions options;
  options.dc_names_only = dc_names_only;
  const bool taken = gpu::parse_netlist_text_on_gpu(text, "t.sp", gpu, why, options);
  INFO("declined: " << why);
  if (taken) {
    Netlist cpu = parse_netlist_text(text, "t.sp");
    if (dc_names_only) keep_dc_names(cpu);
    require_same(gpu, cpu);
  }
  return taken;
}

// A random netlist of the plain form: names from a small pool in random case (so that names
// recur, across the text and across case), random separators, comments, blank and control lines.
std::string random_plain_netlist(std::mt19937& rng, int lines) {
  std::uniform_int_distribution<int> pick(0, 999);
  const char* separators[] = {" ", "\t", ",", " , ", "  "};
  const char* values[] = {"1", "0.5", "2.50e+3", "1E-3", "-0", "70", "123456789.125", "4e-22", "3e22", "0.000"};
  std::string text = "* random plain netlist\n";
  auto node = [&] {
    const int n = pick(rng) % 300;
    if (n == 0) return std::string(pick(rng) % 2 ? "0" : "GnD");
    std::string name = "n" + std::to_string(n) + "_Ab" + std::string(size_t(n % 23), 'x');
    for (char& c : name)
      if (pick(rng) % 3 == 0) c = char(std::toupper(static_cast<unsigned char>(c)));
    return name;
  };
  auto sep = [&] { return std::string(separators[pick(rng) % 5]); };
  for (int i = 0; i < lines; ++i) {
    const int form = pick(rng) % 20;
    if (form == 0) {
      text += pick(rng) % 2 ? "  * a comment, with ; and $\n" : "\n";
      continue;
    }
    if (form == 1) {
      text += pick(rng) % 2 ? ".options post=1\n" : ".op\n";
      continue;
    }
    const char letter = "RRRRRRvVIi"[pick(rng) % 10];
    std::string value = values[pick(rng) % 10];
    if (letter == 'R' && value == "-0") value = "0.25";
    if ((letter == 'V' || letter == 'v') && pick(rng) % 2) value = "1.8";
    std::string plus = node(), minus = node();
    if (letter == 'V' || letter == 'v') plus = "pad" + std::to_string(i), minus = "0";  // never across one node
    text += std::string(1, letter) + std::to_string(pick(rng) % 50 ? i : 7) + sep() + plus + sep() + minus + sep() +
            value + (pick(rng) % 7 == 0 ? " ; trailing\r\n" : pick(rng) % 7 == 0 ? "\r\n" : "\n");
  }
  return text;
}

}  // namespace

TEST_CASE("GPU parse: plain netlists come back as the CPU parser reads them", "[gpu][parse]") {
  test::skip_without_gpu();
  SECTION("elements, case-insensitive names with their first spelling, ground spelt 0 and gnd") {
    REQUIRE(read_alike("* t\nR1 N1 n2 1.5\nr2 n1 N2 2\nV1 n1 0 1.8\nI1 n2 GND 1e-3\nR3 gnd 0 3\n.end\n"));
    REQUIRE(read_alike("R1 0 gnd 1\n"));  // no node names at all
  }
  SECTION("CRLF, tabs, commas, ';' and '$' comments, blank lines, ignored control lines") {
    REQUIRE(read_alike(".title x\r\n\r\nR1\ta\tb\t1\r\nR2,b,c,2 ; c\r\n   $ all comment\r\nI1 c 0 -2.5 $ c\r\n.op\r\n"));
  }
  SECTION("the last line without a newline, and lines after .end not read") {
    REQUIRE(read_alike("R1 a b 1\nV1 a 0 1"));
    REQUIRE(read_alike("R1 a b 1\n.END\nC1 x y what ever\n+ more\n\x01\n"));
    REQUIRE(read_alike("R1 a b 1\n.end"));
  }
  SECTION("duplicate element names warned of as the CPU parser warns") {
    std::string text;
    for (int i = 0; i < 9; ++i) text += "R1 a" + std::to_string(i) + " b 1\n";
    REQUIRE(read_alike(text));
  }
  SECTION("long names and bytes above 0x7f") {
    const std::string a(300, 'a'), b = "n\xc3\xa9\xc3\xa9_\xff";
    REQUIRE(read_alike("R1 " + a + " " + b + " 1\nR2 " + b + " " + a + "A 2\nI1 " + a + " 0 1\n"));
  }
  SECTION("random plain netlists") {
    std::mt19937 rng(7);
    for (int round = 0; round < 20; ++round) REQUIRE(read_alike(random_plain_netlist(rng, 2000)));
  }
  SECTION("a large one: a table of a million references") {
    std::mt19937 rng(11);
    REQUIRE(read_alike(random_plain_netlist(rng, 500000)));
  }
  SECTION("IBM's ibmpg1") {
    std::ifstream in(test::shared_data("ibmpg1.spice"), std::ios::binary);
    REQUIRE(in);  // scripts/device-build points PGSIM_SHARED_DATA at the copy that travels
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(read_alike(text));
  }
}

TEST_CASE("GPU parse: dc_names_only keeps the merging and the duplicate elements' names, as thinning the CPU's does",
          "[gpu][parse]") {
  test::skip_without_gpu();
  SECTION("0 V and other voltage sources, 0-ohm resistors, duplicates; no name kept at all") {
    REQUIRE(read_alike("V1 a 0 1.8\nR1 a b 0\nR2 b c 0.000\nR3 c d 0e3\nR4 d 0 2\nI1 d 0 1\nR4 c 0 3\nV2 e 0 0\nR5 e d 1\n", true));
    REQUIRE(read_alike("R1 a 0 1\nI1 a 0 1\n", true));
  }
  SECTION("random plain netlists and ibmpg1") {
    std::mt19937 rng(17);
    for (int round = 0; round < 10; ++round) REQUIRE(read_alike(random_plain_netlist(rng, 3000), true));
    std::ifstream in(test::shared_data("ibmpg1.spice"), std::ios::binary);
    REQUIRE(in);
    REQUIRE(read_alike(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), true));
  }
  SECTION("thinned again to the merging elements, and reduce()'s message naming a loop of sources") {
    const std::string text = "V1 a 0 1.8\nR1 a b 1\nR1 b 0 1\nV2 b c 0\nR2 c 0 0\nV3 a c 1\n";
    Netlist gpu;
    std::string why;
    ParseOptions options;
    options.dc_names_only = true;
    REQUIRE(gpu::parse_netlist_text_on_gpu(text, "t.sp", gpu, why, options));
    REQUIRE(gpu.named_elements == FillVector<uint32_t>{0, 2, 3, 4, 5});  // element 2 is the second R1
    Netlist cpu = parse_netlist_text(text, "t.sp");
    for (Netlist* nl : {&gpu, &cpu}) keep_merging_names(*nl, merging_elements(*nl, nullptr));
    require_same(gpu, cpu);
    REQUIRE(gpu.named_elements == FillVector<uint32_t>{0, 3, 4, 5});
    std::string gpu_error, cpu_error;
    try {
      reduce(gpu, nullptr);
    } catch (const InputError& e) {
      gpu_error = e.what();
    }
    try {
      reduce(cpu, nullptr);
    } catch (const InputError& e) {
      cpu_error = e.what();
    }
    CHECK_THAT(gpu_error, Catch::Matchers::Contains("'V3'"));
    CHECK(gpu_error == cpu_error);
  }
}

TEST_CASE("GPU parse: mutated netlists are declined or read as the CPU parser reads them", "[gpu][parse]") {
  test::skip_without_gpu();
  // A differential fuzz: bytes of a plain netlist replaced, inserted or deleted at random, with
  // bytes that matter to the grammar. Where the CPU parser fails, the GPU reader must decline.
  std::mt19937 rng(13);
  int taken = 0, declined = 0;
  for (int round = 0; round < 400; ++round) {
    std::string text = random_plain_netlist(rng, 40);
    test::mutate_plain_text(text, rng, true);
    INFO(text);
    Netlist gpu;
    std::string why;
    const bool accepted = gpu::parse_netlist_text_on_gpu(text, "t.sp", gpu, why);
    bool cpu_failed = false;
    Netlist cpu;
    try {
      cpu = parse_netlist_text(text, "t.sp");
    } catch (const std::exception&) {
      cpu_failed = true;
    }
    if (accepted) {
      REQUIRE_FALSE(cpu_failed);
      require_same(gpu, cpu);
    }
    (accepted ? taken : declined) += 1;
  }
  REQUIRE(taken > 50);  // both outcomes met often enough for the comparison to mean something
  REQUIRE(declined > 50);
}

TEST_CASE("GPU parse: a byte range of a file reads as parse_netlist_part reads it", "[gpu][parse]") {
  test::skip_without_gpu();
  std::mt19937 rng(5);
  std::string text = random_plain_netlist(rng, 300000);
  // An .end two thirds in: the range holding it ends there; the range after it is read whole, as
  // the distributed parse's ranks read theirs before they learn where the netlist ended.
  text.insert(text.find('\n', text.size() * 2 / 3) + 1, ".end\n");
  const std::string path = "gpu_parse_range.sp";
  std::ofstream(path, std::ios::binary) << text;
  std::vector<uint64_t> cuts{0};
  for (double at : {0.1, 0.37, 0.5, 0.66, 0.9}) cuts.push_back(text.find('\n', size_t(at * double(text.size()))) + 1);
  cuts.push_back(text.size());
  int ended = 0;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    INFO("range [" << cuts[k] << ", " << cuts[k + 1] << ")");
    const NetlistPart cpu = parse_netlist_part(path, cuts[k], cuts[k + 1]);
    REQUIRE_FALSE(cpu.error);
    NetlistPart gpu;
    std::string why;
    const bool taken = gpu::parse_netlist_part_on_gpu(path, cuts[k], cuts[k + 1], {}, 0, gpu, why);
    INFO("declined: " << why);
    REQUIRE(taken);
    require_same(gpu.netlist, cpu.netlist);
    REQUIRE(gpu.ended == cpu.ended);
    if (!cpu.ended) REQUIRE(gpu.lines == cpu.lines);  // a part's lines count only where it did not end
    REQUIRE(gpu.duplicates == cpu.duplicates);
    REQUIRE(gpu.warnings.size() == cpu.warnings.size());
    for (size_t w = 0; w < cpu.warnings.size(); ++w) {
      const ParseWarning &g = gpu.warnings[w], &c = cpu.warnings[w];
      REQUIRE(g.kind == c.kind);
      REQUIRE(g.text == c.text);
      REQUIRE(g.where.line == c.where.line);
      REQUIRE(g.first.line == c.first.line);
    }
    // With dc_names_only, only the names a DC run shows, as the CPU part's thinned; the same warnings.
    ParseOptions dc;
    dc.dc_names_only = true;
    NetlistPart thin;
    REQUIRE(gpu::parse_netlist_part_on_gpu(path, cuts[k], cuts[k + 1], dc, 0, thin, why));
    NetlistPart cpu_thin = parse_netlist_part(path, cuts[k], cuts[k + 1]);
    keep_dc_names(cpu_thin.netlist);
    require_same(thin.netlist, cpu_thin.netlist);
    REQUIRE(thin.warnings.size() == cpu.warnings.size());
    for (size_t w = 0; w < cpu.warnings.size(); ++w) REQUIRE(thin.warnings[w].text == cpu.warnings[w].text);
    ended += cpu.ended;
  }
  CHECK(ended == 1);
  NetlistPart empty;
  std::string why;
  CHECK_FALSE(gpu::parse_netlist_part_on_gpu(path, cuts[1], cuts[1], {}, 0, empty, why));  // the CPU reads an empty range
  std::remove(path.c_str());
}

#if defined(PGSIM_MPIRUN) && defined(PGSIM_PARSE_CHECK)
// tests/dist_parse_check.cpp against the serial parse, with ranges read on the GPU (ranks share a
// device where there are fewer). Every rank's read there: the node ids numbered on the GPUs
// (dist/node_names_on_device.hpp); some ranks' (or an empty range, which the CPU reads): the names
// brought down for the host's numbering. Each way also with the elements left on the GPUs
// (--keep-elements: renumbered there, or brought down with the names). Random cuts give empty and
// uneven ranges.
TEST_CASE("GPU parse under mpirun: node ids numbered on the GPUs are the serial parse's, 1 to 3 ranks",
          "[gpu][parse][mpi]") {
  test::skip_without_gpu();
  test::skip_without_mpirun();
  test::TempDir dir;
  const std::string grid = dir.file("grid.sp");
  REQUIRE(std::system(("\"" PGSIM_GEN_EXE "\" --nodes 30k --seed 5 -o " + grid + " >/dev/null").c_str()) == 0);
  // The grid with two elements of one name last: a duplicate element name in the last range (at
  // the default cuts), whose reader brings its elements down (the warning reads their lines)
  // while the other ranks' stay on their GPUs.
  const std::string duplicated = dir.file("duplicated.sp");
  {
    std::string text = test::read_text(grid);
    const size_t op = text.rfind(".op");
    REQUIRE(op != std::string::npos);
    text.insert(op, "Rtwice n1_0_0 n1_2_0 5e-01\nRtwice n1_2_0 n1_4_0 7e-01\n");
    std::ofstream(duplicated, std::ios::binary) << text;
  }
  std::vector<std::string> netlists{grid};
  if (std::filesystem::exists(PGSIM_SHARED_DATA "/ibmpg1.spice")) netlists.push_back(PGSIM_SHARED_DATA "/ibmpg1.spice");
  const auto check = [&](int ranks, const std::string& args) {
    const std::string log = dir.file("check.log");
    const int code = test::run_command(test::mpirun(ranks, 2) + "\"" PGSIM_PARSE_CHECK "\" parse " + args, log);
    const std::string output = test::read_text(log);
    INFO(ranks << " ranks: " << args << "\n" << output);
    REQUIRE(code == 0);
    REQUIRE(output.find("parse checks passed") != std::string::npos);
  };
  for (const std::string& netlist : netlists)
    for (int ranks = 1; ranks <= 3; ++ranks) {
      check(ranks, netlist + " --random 3 --gpu-ranks " + std::to_string(ranks));
      check(ranks, netlist + " --random 2 --keep-elements --gpu-ranks " + std::to_string(ranks));
      if (ranks > 1) check(ranks, netlist + " --random 1 --gpu-ranks 1");
      if (ranks > 1) check(ranks, netlist + " --random 1 --keep-elements --gpu-ranks 1");
    }
  for (int ranks = 1; ranks <= 3; ++ranks) check(ranks, duplicated + " --keep-elements --gpu-ranks " + std::to_string(ranks));
}
#endif

TEST_CASE("GPU parse: a file read through the pinned pieces is the text read", "[gpu][parse]") {
  test::skip_without_gpu();
  std::mt19937 rng(3);
  const std::string text = random_plain_netlist(rng, 1500000);
  REQUIRE(text.size() > 8 * (size_t(4) << 20));  // more of the reader's 4 MB pieces than its 8 readers
  const std::string path = "gpu_parse_file.sp";
  std::ofstream(path, std::ios::binary) << text;
  Netlist gpu;
  std::string why;
  gpu::GpuParseTimes times;
  // The progress callback: the text's size, bytes copied never going back, all of them at the end.
  struct Seen {
    uint64_t done = 0, total = 0;
    bool ordered = true;
  } seen;
  ParseOptions options;
  options.progress_user = &seen;
  options.progress = [](uint64_t done, uint64_t total, void* user) {
    Seen& s = *static_cast<Seen*>(user);
    s.ordered = s.ordered && done >= s.done && done <= total;
    s.done = done, s.total = total;
  };
  REQUIRE(gpu::parse_netlist_on_gpu(path, path, options, gpu, why, &times));
  CHECK(seen.ordered);
  CHECK(seen.total == text.size());
  CHECK(seen.done == text.size());
  require_same(gpu, parse_netlist(path));
  std::remove(path.c_str());
}

TEST_CASE("GPU parse: run() reads on the GPU when asked, with the CPU parse's voltages", "[gpu][parse]") {
  test::skip_without_gpu();
  test::TempDir dir;
  std::string text = "* a chain of 3000 resistors, a pad, loads\nV1 N0 0 1.8\n";
  for (int i = 0; i < 3000; ++i) {
    text += "R" + std::to_string(i) + " n" + std::to_string(i) + " N" + std::to_string(i + 1) + " 0.0" + std::to_string(i % 7 + 1) + "\n";
    if (i % 10 == 9) text += "I" + std::to_string(i) + " n" + std::to_string(i + 1) + " gnd 1e-4\n";
  }
  Options opt;
  opt.netlist = dir.write("g.sp", text);
  opt.quiet = true;
  opt.backend = "cpu";
  opt.parse = "cpu";
  opt.output = dir.file("cpu.txt");
  REQUIRE_FALSE(run(opt).parse_on_gpu);
  opt.parse = "gpu";
  opt.output = dir.file("gpu.txt");
  REQUIRE(run(opt).parse_on_gpu);
  REQUIRE(test::read_text(dir.file("gpu.txt")) == test::read_text(dir.file("cpu.txt")));
  opt.compare = dir.file("cpu.txt");  // looks names up: read on the CPU
  REQUIRE_FALSE(run(opt).parse_on_gpu);
}

TEST_CASE("GPU parse: declines every form it does not read", "[gpu][parse]") {
  test::skip_without_gpu();
  using namespace std::string_literals;  // "..."s keeps a NUL byte
  const std::string declined[] = {
      "R1 a b 1\n+ 2\n"s,                 // a continuation line
      "R1 a b 1\n.end\n+ x\n"s,           // ... even after .end, which it would continue
      "R1 a b 1k\n"s,                     // a unit suffix
      "R1 a b R=1\n"s,                    // OpenROAD's form
      "V1 a 0 DC 1.8\n"s,                 // five fields
      "I1 a 0 PULSE(0 1 0 1n 1n 1n 10n)\n"s,
      "C1 a 0 1e-12\nR1 a 0 1\n"s,        // an element kind it does not take
      "R1 a b -1\n"s,                     // errors the CPU parser reports
      "R1 a b 1e31\n"s,
      "V1 a A 1\n"s,
      "R1 a b\n"s,
      "X1 a b c\n"s,
      "R1 a b 12345678901234567890\n"s,   // more than 19 digits: fast_float reads it
      "R1 a b .5\n"s,
      "R1 a b 1e-23\n"s,                  // beyond one exact operation
      ".include other.sp\n"s,
      ".tran 1n 10n\nR1 a b 1\n"s,
      ".param x=1\nR1 a b 1\n"s,
      ".foo\nR1 a b 1\n"s,                // an unknown control line (a warning on the CPU)
      "R1 a b 1\x01\n"s,                  // a control byte
      "* comment \0 with NUL\nR1 a b 1\n"s,
      "\xEF\xBB\xBFR1 a b 1\n"s,          // a byte-order mark
      "* only comments\n"s,               // no elements
      ".end\nR1 a b 1\n"s,
  };
  for (const std::string& text : declined) {
    INFO(text);
    Netlist gpu;
    std::string why;
    REQUIRE_FALSE(gpu::parse_netlist_text_on_gpu(text, "t.sp", gpu, why));
    REQUIRE_FALSE(why.empty());
  }
  Netlist gpu;
  std::string why;
  REQUIRE_FALSE(gpu::parse_netlist_text_on_gpu(std::string(70000, 'a') + "\nR1 a b 1\n", "t.sp", gpu, why));
  REQUIRE(why.find("64 KiB") != std::string::npos);
}
