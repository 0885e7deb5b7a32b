// Every bad input of issue 7, end to end through the pgsim binary: the exit code and the
// message (file:line where there is a line, and the offending text). README "Errors" lists them.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <vector>

#include "app/exit_codes.hpp"
#include "app/voltage_file.hpp"
#include "gzip_test_util.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

struct Case {
  const char* what;
  std::string netlist;  // written to case.sp
  int exit_code;
  std::vector<std::string> message;  // substrings of pgsim's stderr; "@" stands for the netlist path
};

std::string substitute(std::string s, const std::string& path) {
  if (auto at = s.find('@'); at != std::string::npos) s.replace(at, 1, path);
  return s;
}

}  // namespace

TEST_CASE("each bad netlist gets its exit code and a message with file:line and the text", "[errors]") {
  const std::string ok = "V1 a 0 1\nR1 a b 1\nR2 b 0 1\n";
  const std::vector<Case> cases = {
      {"empty netlist", "", kExitInput, {"@: the netlist has no elements"}},
      {"only comments", "* a title\n* nothing else\n.end\n", kExitInput, {"@: the netlist has no elements"}},
      {"no sources", "R1 a 0 1\nR2 a b 2\n", kExitInput, {"@: the netlist has no voltage or current sources"}},
      {"missing nodes", ok + "R3 a\n", kExitInput, {"@:4: element 'R3' needs two nodes and a value"}},
      {"missing value", ok + "V2 b 0 dc\n", kExitInput, {"@:4: element 'V2' has no voltage value"}},
      {"unparsable number", ok + "R3 a b 1x2\n", kExitInput, {"@:4: element 'R3': '1x2' is not a finite number"}},
      {"nan", ok + "R3 a b nan\n", kExitInput, {"@:4:", "'nan' is not a finite number"}},
      {"inf", ok + "I1 a 0 -inf\n", kExitInput, {"@:4:", "'-inf' is not a finite number"}},
      {"1e999", ok + "R3 a b 1e999\n", kExitInput, {"@:4:", "'1e999' is not a finite number"}},
      {"value out of range", ok + "I1 a 0 1e31\n", kExitInput, {"@:4:", "'1e31' is outside the range"}},
      {"tiny resistance", ok + "R3 a b 1e-40\n", kExitInput, {"@:4:", "'1e-40' is outside the range"}},
      {"negative resistance", ok + "R3 a b -2\n", kExitInput, {"@:4: resistor 'R3' has a negative resistance '-2'"}},
      {"unknown element letter", ok + "#3 a b 1\n", kExitInput, {"@:4: unknown element '#3'"}},
      {"unsupported element", ok + "X1 a b sub\n", kExitInput, {"@:4: element 'X1': type 'X' is not supported"}},
      {"extra field", ok + "R3 a b 1 2\n", kExitInput, {"@:4: element 'R3': unexpected field '2'"}},
      {"another element's value key", ok + "R3 a b C=1\n", kExitInput,
       {"@:4: element 'R3': unexpected 'C=1': a resistor's value is 'R=value' or a number"}},
      {"a value key on a source", ok + "V2 b 0 DC V=1\n", kExitInput,
       {"@:4: element 'V2': unexpected 'V=1': a voltage source's value is a number, after an optional DC"}},
      {"stray continuation", "+ R1 a 0 1\n" + ok, kExitInput, {"@:1: continuation line"}},
      {"subcircuit", ok + ".subckt inv a b\n", kExitInput, {"@:4: '.subckt' is not supported"}},
      {"binary garbage", ok + std::string("R3 a\x01\x02 b 1\n"), kExitInput, {"@:4: unexpected control character (byte 0x01)"}},
      {"NUL in a comment", ok + std::string("* x\0y\n", 6), kExitInput, {"@:4: unexpected control character (byte 0x00)"}},
      {"very long token", ok + "R3 a b " + std::string(1 << 20, '7') + "k7\n", kExitInput,
       {"@:4:", "(1048578 characters) is not a finite number"}},
      {"missing include", ok + ".include \"nothere.sp\"\n", kExitInput,
       {"@:4: .include: cannot open netlist '", "nothere.sp': No such file or directory"}},
      {"V source across one node", ok + "V2 b b 0.5\n", kExitInput,
       {"@:4: voltage source 'V2' has both ends on node 'b' but forces '0.5' across them"}},
      {"floating component", ok + "R3 x y 1\nR4 y z 2\n", kExitInput,
       {"floating part of the circuit: 3 node(s), among them 'x', have no resistive path"}},
      {"disagreeing source loop", ok + "V2 b a 0.1\nV3 b 0 0.8\n", kExitInput,
       {"voltage sources in a loop disagree", "'V3' (@:5)", "'V2' (@:4)", "'V1' (@:1)"}},
      {"short across a source", ok + "R3 a 0 0\n", kExitInput,
       {"voltage sources and shorts (0-ohm resistors, inductors) in a loop disagree", "'R3' (@:4)", "'V1' (@:1)"}},
      {"SIN source", ok + "I1 a 0 0 SIN(0 1 1meg)\n", kExitInput, {"@:4: 'SIN' sources are not supported (PULSE and PWL are)"}},
      {"short PULSE", ok + "I1 a 0 0 PULSE(0)\n", kExitInput, {"@:4: PULSE takes 2 to 7 values"}},
      {"bad .tran", ok + ".tran 1n\n", kExitInput, {"@:4: .tran takes TSTEP TSTOP [TSTART [TMAX]]"}},
      {".print of a current", ok + ".tran 1p 1n\n.print tran i(V1)\n", kExitInput,
       {"@:5: .print: 'i'(...) is not supported (only v(node) is)"}},
      {".print of an unknown node", ok + ".tran 1p 1n\n.print tran v(zz)\n", kExitInput,
       {"@:5: .print: node 'zz' is not in the netlist"}},
      {"moving V source in a loop of sources", ok + "V2 a 0 PWL(0 1 1n 2)\n.tran 1p 1n\n", kExitInput,
       {"@:4: voltage source 'V2' has a waveform but lies in a loop of voltage sources and shorts"}},
      {"inductor loop in a transient", ok + "L1 a b 1n\nL2 a b 1n\nR3 b c 1\nR4 c 0 1\nC1 c 0 1p\n.tran 1p 1n\n", kExitInput,
       {"@:4: inductor 'L1' lies in a loop"}},
      {"no convergence", "V1 a 0 1\nR1 a b 1\nR2 b c 1\nR3 c d 1\nR4 d 0 1\nI1 c 0 1m\n", kExitNotConverged,
       {"pcg did not converge: relative residual", "after 1 iterations", "no voltages written"}},
  };
  test::TempDir dir;
  for (const Case& c : cases) {
    INFO(c.what);
    const std::string path = dir.write("case.sp", c.netlist);
    // --no-eliminate: chain elimination would solve the chain exactly before PCG.
    const std::string extra = c.exit_code == kExitNotConverged ? " --precond none --no-eliminate --max-iter 1" : "";
    CHECK(test::run_pgsim(path + extra, dir.file("log")) == c.exit_code);
    const std::string log = test::read_text(dir.file("log"));
    INFO(log);
    CHECK(log.size() < 2000);  // long tokens are cut in messages
    for (const std::string& m : c.message) CHECK_THAT(log, Catch::Contains(substitute(m, path)));
  }
}

TEST_CASE("missing and unreadable netlists are input errors", "[errors]") {
  test::TempDir dir;
  CHECK(test::run_pgsim(dir.file("none.sp"), dir.file("log")) == kExitInput);
  CHECK_THAT(test::read_text(dir.file("log")),
             Catch::Contains("cannot open netlist '" + dir.file("none.sp") + "': No such file or directory"));
  std::filesystem::create_directories(dir.file("adir.sp"));
  CHECK(test::run_pgsim(dir.file("adir.sp"), dir.file("log")) == kExitInput);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("'" + dir.file("adir.sp") + "': it is a directory"));
  CHECK(test::run_pgsim(dir.write("a.sp", "V1 a 0 1\nR1 a 0 1\n") + " --no-such-option", dir.file("log")) == kExitInput);
  CHECK(test::run_pgsim(dir.file("a.sp") + " --tol -1", dir.file("log")) == kExitInput);
  CHECK(test::run_pgsim(dir.file("a.sp") + " --precond jacobi --smoother sgs", dir.file("log")) == kExitInput);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("--smoother: applies to --precond cmg only, not jacobi"));
  CHECK(test::run_pgsim(dir.file("a.sp") + " --trsv thread", dir.file("log")) == kExitInput);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("--trsv: applies to --precond ic0 only, not cmg"));
}

TEST_CASE("gzip and piped netlists: corrupt or truncated data, devices, and errors at their exact lines", "[errors]") {
  test::TempDir dir;
  const std::string ok = "V1 a 0 1\nR1 a b 1\nR2 b 0 1\n";
  const std::string packed = test::gzip(ok + "R3 a b 1x2\n");
  std::string bad_crc = packed;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // inside the trailer's CRC-32
  const std::string corrupt = dir.write("corrupt.sp.gz", bad_crc);
  const std::string cut = dir.write("cut.sp.gz", packed.substr(0, packed.size() / 2));
  const std::string bad_line = dir.write("line4.sp.gz", packed);
  const std::string top = dir.write("top.sp", ok + ".include corrupt.sp.gz\n");
  const std::string plain_bad_line = dir.write("line4.sp", ok + "R3 a b 1x2\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {corrupt, "cannot read netlist '" + corrupt + "': corrupt gzip data (incorrect data check)"},
      {cut, "cannot read netlist '" + cut + "': truncated gzip data (the input ends inside a compressed stream)"},
      {"- <" + cut, "cannot read netlist from standard input: truncated gzip data"},
      {bad_line, bad_line + ":4: element 'R3': '1x2' is not a finite number"},
      {"- <" + bad_line, "<stdin>:4: element 'R3': '1x2' is not a finite number"},
      {"- <" + plain_bad_line, "<stdin>:4: element 'R3': '1x2' is not a finite number"},
      {top, top + ":4: .include: cannot read netlist '" + corrupt + "': corrupt gzip data"},
      // Only stat()ed: a device that never ends is refused before it is opened.
      {"/dev/zero", "cannot read netlist '/dev/zero': it is a device, not a file or a pipe"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    CHECK(test::run_pgsim(args + " -o " + dir.file("v.txt"), dir.file("log")) == kExitInput);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains(message));
    CHECK_FALSE(std::filesystem::exists(dir.file("v.txt")));
  }
}

TEST_CASE("duplicate element names are a warning and both elements count", "[errors]") {
  test::TempDir dir;
  const std::string path = dir.write("dup.sp", "V1 a 0 1\nR1 a b 1\nR1 b 0 1\nr1 b 0 1\n");
  REQUIRE(test::run_pgsim(path + " -o " + dir.file("v.txt"), dir.file("log")) == kExitOk);
  const std::string log = test::read_text(dir.file("log"));
  CHECK_THAT(log, Catch::Contains(path + ":3: duplicate element name 'R1' (first at " + path + ":2)"));
  CHECK_THAT(log, Catch::Contains(path + ":4: duplicate element name 'r1'"));
  auto v = read_voltages(dir.file("v.txt"));
  REQUIRE(v.size() == 2);
  CHECK(v[1].value == Approx(1.0 / 3).margin(1e-9));  // 1 ohm over two 1-ohm resistors in parallel
}

TEST_CASE("CRLF line ends, a byte-order mark, tabs and odd node names are read", "[errors]") {
  test::TempDir dir;
  const std::string text = "\xEF\xBB\xBF* title\r\nV1\ta\t0\t1\r\nR1 a n#1[2]:x 1\r\nR2 n#1[2]:x \xC3\xA9t\xC3\xA9 1\r\n"
                           "R3 \xC3\xA9t\xC3\xA9 0 2\r\n";
  REQUIRE(test::run_pgsim(dir.write("crlf.sp", text) + " -o " + dir.file("v.txt"), dir.file("log")) == kExitOk);
  auto v = read_voltages(dir.file("v.txt"));
  REQUIRE(v.size() == 3);
  CHECK(v[1].name == "n#1[2]:x");
  CHECK(v[1].value == Approx(0.75).margin(1e-9));
  CHECK(v[2].name == "\xC3\xA9t\xC3\xA9");
  CHECK(v[2].value == Approx(0.5).margin(1e-9));
}

TEST_CASE("a voltage source of 0 V across one node, and a resistor across one node, are harmless", "[errors]") {
  test::TempDir dir;
  const std::string path = dir.write("self.sp", "V1 a 0 1\nV2 b b 0\nR0 b b 5\nR1 a b 1\nR2 b 0 1\n");
  REQUIRE(test::run_pgsim(path + " -o " + dir.file("v.txt"), dir.file("log")) == kExitOk);
  auto v = read_voltages(dir.file("v.txt"));
  REQUIRE(v.size() == 2);
  CHECK(v[1].value == Approx(0.5).margin(1e-9));
}

TEST_CASE("reference (--compare) file errors are input errors", "[errors]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", "V1 a 0 1\nR1 a 0 1\n");
  struct RefCase {
    std::string file, message;
  };
  std::filesystem::create_directories(dir.file("refdir"));
  const std::vector<RefCase> cases = {
      {dir.file("none.txt"), "cannot open voltage file '" + dir.file("none.txt") + "': No such file or directory"},
      {dir.file("refdir"), "cannot read voltage file '" + dir.file("refdir") + "': it is a directory"},
      {dir.write("short.txt", "a 1\nb\n"), dir.file("short.txt") + ":2: expected 'node value', got 'b'"},
      {dir.write("nan.txt", "a nan\n"), dir.file("nan.txt") + ":1: 'nan' is not a finite number"},
      {dir.write("empty.txt", ""), dir.file("empty.txt") + ": no 'node value' lines"},
  };
  for (const RefCase& c : cases) {
    INFO(c.file);
    CHECK(test::run_pgsim(net + " --compare " + c.file, dir.file("log")) == kExitInput);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains(c.message));
  }
}

TEST_CASE("output failures are system errors that leave an earlier result in place", "[errors]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", "V1 a 0 1\nR1 a 0 1\n");
  const std::string earlier = dir.write("v.txt", "earlier result\n");
  std::filesystem::create_directories(dir.file("outdir"));
  dir.write("afile", "x");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-o " + dir.file("missing/v.txt"), "cannot write '" + dir.file("missing/v.txt") + "': No such file or directory"},
      {"-o " + dir.file("afile/v.txt"), "cannot write '" + dir.file("afile/v.txt") + "': Not a directory"},
      {"-o " + dir.file("outdir"), "cannot write '" + dir.file("outdir") + "': it is a directory"},
      {"-o " + earlier + " --json " + dir.file("missing/r.json"), "cannot write '" + dir.file("missing/r.json") + "'"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    CHECK(test::run_pgsim(net + " " + args, dir.file("log")) == kExitSystem);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains(message));
    CHECK(test::read_text(earlier) == "earlier result\n");
  }
  if (::geteuid() != 0) {  // root writes anywhere: the permission case needs an ordinary user
    std::filesystem::create_directories(dir.file("ro"));
    const std::string kept = dir.write("ro/v.txt", "earlier result\n");
    std::filesystem::permissions(dir.file("ro"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    CHECK(test::run_pgsim(net + " -o " + kept, dir.file("log")) == kExitSystem);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("Permission denied"));
    CHECK(test::read_text(kept) == "earlier result\n");
    std::filesystem::permissions(dir.file("ro"), std::filesystem::perms::owner_all);
  }
  for (auto& entry : std::filesystem::recursive_directory_iterator(dir.file(".")))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}
