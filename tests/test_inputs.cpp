// Netlists from standard input, FIFOs, gzip files and includes, and OpenROAD's write_pg_spice
// dialect, end to end through the pgsim binary in a temporary folder (issue 14). The errors of
// these inputs are in test_errors.cpp.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <map>

#include "app/exit_codes.hpp"
#include "app/voltage_file.hpp"
#include "gzip_test_util.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// Runs `shell` (a command line where PGSIM stands for the quoted pgsim binary) with its output in `log`.
int run_shell(const std::string& shell, const std::string& log) {
  std::string cmd = shell;
  for (size_t at; (at = cmd.find("PGSIM")) != std::string::npos;) cmd.replace(at, 5, std::string("\"") + PGSIM_EXE + "\"");
  const int status = std::system(("(" + cmd + ") >\"" + log + "\" 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

}  // namespace

TEST_CASE("standard input, a FIFO and gzip files give the voltages file of the plain netlist", "[inputs]") {
  test::TempDir dir;
  const std::string plain = dir.file("grid.sp"), log = dir.file("log");
  const std::string gen = std::string("\"") + PGSIM_GEN_EXE + "\" --nodes 20k --seed 3 -o " + quoted(plain);
  REQUIRE(std::system((gen + " >" + quoted(log) + " 2>&1").c_str()) == 0);
  const std::string text = test::read_text(plain);
  const std::string packed = dir.write("grid.sp.gz", test::gzip(text));
  // Two members, and a name that does not say gzip: the magic bytes decide.
  const size_t half = text.find('\n', text.size() / 2) + 1;
  const std::string multi = dir.write("grid_multi.sp", test::gzip(text.substr(0, half)) + test::gzip(text.substr(half)));

  REQUIRE(test::run_pgsim(plain + " -o " + dir.file("v_plain.txt"), log) == kExitOk);
  const std::string expected = test::read_text(dir.file("v_plain.txt"));
  REQUIRE(expected.size() > 20000 * 10);
  const std::string fifo = dir.file("grid.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::map<std::string, std::string> runs = {
      {"pipe", "cat " + quoted(plain) + " | PGSIM - -o "},
      {"redirected stdin", "PGSIM - <" + quoted(plain) + " -o "},
      {"gzip file", "PGSIM " + quoted(packed) + " -o "},
      {"multi-member gzip", "PGSIM " + quoted(multi) + " -o "},
      {"gzip on a pipe", "cat " + quoted(packed) + " | PGSIM - -o "},
      {"FIFO", "cat " + quoted(packed) + " >" + quoted(fifo) + " & PGSIM " + quoted(fifo) + " -o "},
  };
  for (const auto& [what, command] : runs) {
    INFO(what);
    const std::string out = dir.file("v.txt");
    std::filesystem::remove(out);
    REQUIRE(run_shell(command + quoted(out), log) == kExitOk);
    CHECK(test::read_text(out) == expected);
  }
}

TEST_CASE("an .include of a gzip file, from a gzip file, is read", "[inputs]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("sub"));
  dir.write("sub/grid.sp.gz", test::gzip("R1 a b 1\nR2 b 0 1\n"));
  dir.write("sub/sources.sp", "V1 a 0 1\n");
  const std::string top = dir.write("top.sp.gz", test::gzip("* top\n.include \"sub/grid.sp.gz\"\n.inc sub/sources.sp\n"));
  REQUIRE(test::run_pgsim(top + " -o " + dir.file("v.txt"), dir.file("log")) == kExitOk);
  const auto v = read_voltages(dir.file("v.txt"));
  REQUIRE(v.size() == 2);
  CHECK(v[1].name == "b");
  CHECK(v[1].value == Approx(0.5).margin(1e-9));
}

TEST_CASE("OpenROAD write_pg_spice netlists (R= values, DC sources, footer) solve to the hand-computed voltages",
          "[inputs]") {
  test::TempDir dir;
  const std::string top = std::string(PGSIM_TEST_DATA) + "/openroad/both.sp";
  REQUIRE(test::run_pgsim(top + " -o " + dir.file("v.txt"), dir.file("log")) == kExitOk);
  const std::string log = test::read_text(dir.file("log"));
  INFO(log);
  // vss.sp numbers its elements from R0, I0 and V0 again: warned about, and kept.
  CHECK_THAT(log, Catch::Contains("vss.sp:4: duplicate element name 'R0' (first at "));
  CHECK_THAT(log, Catch::Contains("vss.sp:12: duplicate element name 'V0'"));
  std::map<std::string, double> v;
  for (const auto& [name, value] : read_voltages(dir.file("v.txt"))) v[name] = value;
  REQUIRE(v.size() == 8);
  // VDD: two 1.1 V pads through 2 ohm each (1 ohm together), R2 and R3 in parallel (0.5 ohm),
  // 1 mohm to the pin, 100 mA drawn at the pin.
  CHECK(v["Node_metal4_0_0"] == Approx(1.1).margin(1e-12));
  CHECK(v["Node_metal1_500_0"] == Approx(1.1 - 0.1 * 1.0).margin(1e-9));
  CHECK(v["Node_metal1_500_400"] == Approx(1.0 - 0.1 * 0.5).margin(1e-9));
  CHECK(v["ITermNode_metal1_500_400"] == Approx(0.95 - 0.1 * 1e-3).margin(1e-9));
  // VSS: 100 mA pushed in at the pin (a negative sink), 0.5 + 0.5 ohm to the 0 V pad.
  CHECK(v["Node_metal4_0_800"] == Approx(0.0).margin(1e-12));
  CHECK(v["Node_metal1_500_800"] == Approx(0.05).margin(1e-9));
  CHECK(v["ITermNode_metal1_500_800"] == Approx(0.1).margin(1e-9));
}
