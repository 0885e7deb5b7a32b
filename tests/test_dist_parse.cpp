// The distributed parse and the distributed voltages file (issue 17) under mpirun on 1 to 4 ranks,
// through tests/dist_parse_check.cpp: the ranks' netlists put together are the serial parse's, for
// ibmpg1, a pgsim-gen grid and hand-written netlists ('+' continuations, comments, CRLF, an
// .include, an .end in the middle, empty ranges, cuts landing on continuation lines and CRLF);
// errors give the serial text on every rank (a gzip netlist is refused); the voltages file is byte
// for byte write_voltages'.
// Skipped (77) when the build has no MPI or mpirun is absent.
#include <catch2/catch.hpp>

#include <spdlog/spdlog.h>

#include <filesystem>

#include "parser/input_error.hpp"
#include "parser/netlist.hpp"
#include "mpirun_util.hpp"
#include "test_util.hpp"

using namespace pgsim;
using test::skip_without_mpirun;

namespace {

#if defined(PGSIM_MPIRUN)
struct Result {
  int code;
  std::string output;
};

// dist_parse_check on `ranks` processes (test::mpirun).
Result check(int ranks, const std::string& args, const test::TempDir& dir, int threads = 1) {
  const std::string log = dir.file("check.log");
  const int code = test::run_command(test::mpirun(ranks, threads) + "\"" PGSIM_PARSE_CHECK "\" " + args, log);
  return {code, test::read_text(log)};
}

void require_passed(const Result& r, const std::string& mode) {
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE(r.output.find(mode + " checks passed") != std::string::npos);
}

// What every rank must print for each file: "rank R: FILE: " and the error (the serial parse's),
// or "no error"; and the exit code of a run that failed.
void require_error_everywhere(const Result& r, int ranks, const std::vector<std::pair<std::string, std::string>>& expected) {
  INFO(r.output);
  CHECK(r.code == 2);  // mpirun passes on the ranks' exit code
  for (const auto& [path, error] : expected)
    for (int q = 0; q < ranks; ++q)
      CHECK(r.output.find("rank " + std::to_string(q) + ": " + path + ": " + error + "\n") != std::string::npos);
}

// A 20k-node pgsim-gen grid made in dir from `seed`.
std::string generated_grid(const test::TempDir& dir, int seed) {
  const std::string grid = dir.file("grid.sp");
  REQUIRE(std::system(("\"" PGSIM_GEN_EXE "\" --nodes 20k --seed " + std::to_string(seed) + " -o " + grid + " >/dev/null")
                          .c_str()) == 0);
  return grid;
}

std::string serial_error(const std::string& path) {
  spdlog::set_level(spdlog::level::err);  // its warnings (duplicate names) are not what is tested
  try {
    parse_netlist(path);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("the serial parse of " << path << " did not fail");
  return {};
}

// A netlist with every kind of line the cuts must respect, repeated so that cuts at random
// offsets land on each: '+' continuations (one of them indented), CRLF
// lines, '*', ';' and '$' comments, blank lines, unknown control lines in several cases (warned
// once), ground as 0, gnd and GND, node names whose case varies (one node, first spelling
// kept), an .include in the middle, and after an .end a line that would be an error.
std::string tricky_netlist(const test::TempDir& dir) {
  dir.write("inc.sp", "* included\nRinc1 N1_0 incnode 5\nRinc2 incnode GND 6\n+\n.END\nRinc3 never 0 1\n");
  std::string text = "\xEF\xBB\xBF* title line\r\n";
  for (int k = 0; k < 40; ++k) {
    const std::string i = std::to_string(k), j = std::to_string(k + 1);
    text += "R" + i + "a N1_" + i + " n2_" + i + " 1.5\n";
    text += "R" + i + "b n2_" + i + "\n+ n3_" + i + "\n  +   2.0\n";
    text += "V" + i + " n1_" + i + " 0 1.8\r\n";
    text += "I" + i + " N3_" + i + " gnd 1e-3 ; comment\r\n";
    text += k % 3 == 0 ? ".foo bar\n" : k % 3 == 1 ? ".FOO baz\r\n" : ".Bar\n";
    text += "R" + i + "c n4_" + i + " n3_" + i + " 3 $ comment\n";
    text += "*comment\r\n\r\n   \n";
    text += "R" + i + "d n4_" + i + " n1_" + j + "\r\n+ 4\r\n";
    if (k == 17) text += ".include \"inc.sp\"\n";
    text += "C" + i + " n1_" + i + " GND 1e-15\n";
  }
  text += ".end\nQ1 bad line after the end\nR_late zz yy 1\n";
  return dir.write("tricky.sp", text);
}
#endif

}  // namespace

#if defined(PGSIM_MPIRUN)
TEST_CASE("distributed parse: hand-written netlist, random cuts on continuations and CRLF, 1 to 4 ranks", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  const std::string path = tricky_netlist(dir);
  const std::string text = test::read_text(path);
  const auto at = [&](std::initializer_list<size_t> offsets) {
    std::string s = " --at 0";
    for (size_t o : offsets) s += "," + std::to_string(o);
    return s;
  };
  // Cuts asked for on a '+' line, an indented one, between a CR and its LF, and inside the
  // byte-order mark; every rank's range empty but one; all cuts at the file's end.
  const size_t plus = text.find("\n+ n3_") + 1, indented = text.find("  +   2.0"), lf = text.find("\r\n") + 1;
  REQUIRE(lf < plus);
  const std::string args = path + " --random 40 --small-chunks" + at({plus}) + at({lf, indented}) + at({1, 2, plus}) +
                           at({lf, plus, indented + 1}) + at({0, 0, 0}) + at({text.size(), text.size(), text.size()});
  for (int ranks = 1; ranks <= 4; ++ranks) {
    INFO(ranks << " ranks");
    require_passed(check(ranks, "parse " + args, dir), "parse");
  }
  // Two threads per rank: the parse's chunks and the node numbering's per-thread passes in parallel.
  require_passed(check(2, "parse " + path + " --random 10 --small-chunks", dir, 2), "parse");
}

TEST_CASE("distributed parse: node names left on failing devices are numbered on the host instead, 1 to 3 ranks",
          "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  const std::string grid = generated_grid(dir, 4);
  for (int ranks = 1; ranks <= 3; ++ranks) {
    INFO(ranks << " ranks");
    require_passed(check(ranks, "parse " + grid + " --random 2 --failing-device", dir), "parse");
  }
}

TEST_CASE("distributed parse: ibmpg1 and a pgsim-gen grid, 1 to 4 ranks", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  const std::string grid = generated_grid(dir, 3);
  const std::string ibmpg1 = PGSIM_SHARED_DATA "/ibmpg1.spice";
  for (int ranks = 1; ranks <= 4; ++ranks) {
    INFO(ranks << " ranks");
    require_passed(check(ranks, "parse " + grid + " --random 3", dir), "parse");
    if (std::filesystem::exists(ibmpg1)) require_passed(check(ranks, "parse " + ibmpg1 + " --random 2", dir), "parse");
  }
}

TEST_CASE("distributed parse: duplicate-name warnings of several ranks capped as one process caps them", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  // Four blocks of three duplicate pairs: with cuts between blocks every pair is within a rank,
  // and the serial parse's first 5 warnings and its summary (12 duplicates) must come out of rank 0.
  std::string text;
  std::vector<uint64_t> block_start;
  for (int b = 0; b < 4; ++b) {
    block_start.push_back(text.size());
    for (int k = 0; k < 3; ++k) {
      const std::string name = "R" + std::to_string(b) + "_" + std::to_string(k);
      text += name + " a" + std::to_string(b) + " b" + std::to_string(k) + " 1\n" + name + " b" + std::to_string(k) + " 0 2\n";
      text += ".unknown" + std::to_string(k) + "\n";
    }
  }
  const std::string path = dir.write("dups.sp", text);
  const auto at = [&](std::initializer_list<int> blocks) {
    std::string s;
    for (int b : blocks) s += (s.empty() ? "" : ",") + std::to_string(block_start[b]);
    return s;
  };
  const std::string args = "parse " + path + " --no-default --at " + at({0, 2}) + " --at " + at({0, 1, 3}) + " --at " + at({0, 1, 2, 3}) +
                           " --at " + at({0});
  for (int ranks = 1; ranks <= 4; ++ranks) {
    INFO(ranks << " ranks");
    require_passed(check(ranks, args, dir), "parse");
  }
}

TEST_CASE("distributed parse: errors end every rank with the serial text", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  std::string good;
  for (int k = 0; k < 300; ++k) good += "R" + std::to_string(k) + " n" + std::to_string(k) + " n" + std::to_string(k + 1) + " 1\n";
  // An error in the last rank's range, on a continued line.
  const std::string late = dir.write("late.sp", good + good.substr(0, 300) + "Rbad n1\n+ n2 -5\n" + "R9 a b 1\n");
  // Two errors: the first in file order wins, whatever rank holds the second.
  const std::string two = dir.write("two.sp", "R1 a b 1\n" + good.substr(0, 2000) + "Rx a b\n" + good + "Ry a b c d\n");
  // An error after .end is none.
  const std::string ended = dir.write("ended.sp", good + ".end\n" + good + "Rbad a b -1\n");
  // In an include of a late range: the include's own file:line.
  dir.write("bad_inc.sp", "R1 p q 1\nRq q\n");
  const std::string included = dir.write("inc_err.sp", good + ".include bad_inc.sp\n" + good);
  const std::string missing = dir.write("inc_missing.sp", good + good + ".include nowhere.sp\n");
  const std::string empty = dir.write("empty.sp", "* nothing but a comment\n\n");
  const std::string tran = dir.write("tran.sp", good + "I1 n5 0 pulse(0 1 0 1n 1n 5n 10n)\n.tran 1n 10n\n");
  const std::string none = dir.file("none.sp");
  std::vector<std::pair<std::string, std::string>> expected;  // file, error
  for (const std::string& path : {late, two, included, missing, empty, none}) expected.emplace_back(path, serial_error(path));
  expected.emplace_back(tran, tran + ":301: transient input (.tran, PULSE or PWL sources, .print) runs in one process only: "
                                     "run pgsim without mpirun");
  expected.emplace_back(ended, "no error");
  // A compressed netlist cannot be entered in the middle.
  REQUIRE(std::system(("gzip -k " + late).c_str()) == 0);
  expected.emplace_back(late + ".gz", "cannot read netlist '" + late + ".gz' in parts: it is gzip-compressed (decompress it, "
                                      "or run pgsim in one process)");
  std::string args = "error";
  for (const auto& [path, error] : expected) args += " " + path;
  for (int ranks = 1; ranks <= 4; ++ranks) {
    INFO(ranks << " ranks");
    require_error_everywhere(check(ranks, args, dir), ranks, expected);
  }
}

TEST_CASE("distributed voltages file: the bytes of write_voltages, or no file and one error on every rank", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  const std::string grid = generated_grid(dir, 5);
  for (int ranks = 1; ranks <= 4; ++ranks) {
    INFO(ranks << " ranks");
    const std::string out = dir.file("v" + std::to_string(ranks) + ".txt"), serial = dir.file("s.txt");
    dir.write("v" + std::to_string(ranks) + ".txt", "an older result, replaced\n");
    require_passed(check(ranks, "write " + grid + " " + out + " " + serial, dir), "write");
    const std::string text = test::read_text(out);
    CHECK(text.size() > 20000 * 20);
    CHECK(text == test::read_text(serial));
    // Nothing but the output is left in the folder (no temporary).
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()))
      CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }
  SECTION("a FIFO: written by rank 0 alone, in order") {
    const std::string fifo = dir.file("fifo"), copy = dir.file("from_fifo.txt");
    REQUIRE(std::system(("mkfifo " + fifo).c_str()) == 0);
    const int reader = std::system(("cat " + fifo + " >" + copy + " &").c_str());
    REQUIRE(reader == 0);
    require_passed(check(3, "write " + grid + " " + fifo + " " + dir.file("s.txt"), dir), "write");
    // cat ends when the writer closes; wait for it.
    for (int k = 0; k < 100 && test::read_text(copy).size() < test::read_text(dir.file("s.txt")).size(); ++k)
      std::system("sleep 0.1");
    CHECK(test::read_text(copy) == test::read_text(dir.file("s.txt")));
  }
  SECTION("a folder that does not exist: every rank fails alike, nothing is written") {
    const std::string out = dir.file("nowhere/v.txt");
    const Result r = check(3, "write " + grid + " " + out + " " + dir.file("s.txt"), dir);
    require_error_everywhere(r, 3, {{"write", "cannot write '" + out + "': No such file or directory"}});
    CHECK(!std::filesystem::exists(dir.file("nowhere")));
  }
}

TEST_CASE("exchange_bytes: 64-bit counts, in messages or direct reads of any size", "[dist][mpi]") {
  skip_without_mpirun();
  test::TempDir dir;
  for (int ranks : {1, 2, 3}) require_passed(check(ranks, "exchange", dir), "exchange");
}
#else
TEST_CASE("distributed parse", "[dist][mpi]") { skip_without_mpirun(); }
#endif
