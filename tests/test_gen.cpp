// pgsim-gen: the generated grid solves to the direct solver's voltages, is reproducible for a
// seed, names its nodes n<layer>_<x>_<y>, and refuses bad sizes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "app/exit_codes.hpp"
#include "app/voltage_file.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

int run_gen(const std::string& args, const std::string& log) {
  std::string cmd = std::string("\"") + PGSIM_GEN_EXE + "\" " + args + " >\"" + log + "\" 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("a generated grid solves to the direct solver's voltages", "[gen]") {
  test::TempDir dir;
  const std::string netlist = dir.file("g.sp");
  REQUIRE(run_gen("--nodes 5000 --layers 4 --seed 3 -o " + netlist, dir.file("gen.log")) == kExitOk);
  REQUIRE(test::run_pgsim(netlist + " -q -o " + dir.file("pcg.txt") + " --json " + dir.file("r.json"),
                          dir.file("pcg.log")) == kExitOk);
  REQUIRE(test::run_pgsim(netlist + " -q --solver direct -o " + dir.file("direct.txt"), dir.file("direct.log")) ==
          kExitOk);

  auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")));
  const int64_t nodes = j["nodes"];
  CHECK(nodes >= 5000);
  CHECK(nodes <= 5000 * 105 / 100);
  CHECK(j["unknowns"].get<int64_t>() < nodes);  // the 0 V vias merge layer-1 and layer-2 nodes

  auto pcg = read_voltages(dir.file("pcg.txt")), direct = read_voltages(dir.file("direct.txt"));
  REQUIRE(pcg.size() == static_cast<size_t>(nodes));
  REQUIRE(direct.size() == pcg.size());
  double max_error = 0, vdd_min = 2, gnd_max = -1;
  const std::regex name_re("(_X_)?n([0-9]+)_([0-9]+)_([0-9]+)");
  std::set<int> layers;
  for (size_t i = 0; i < pcg.size(); ++i) {
    REQUIRE(pcg[i].name == direct[i].name);
    max_error = std::max(max_error, std::abs(pcg[i].value - direct[i].value));
    std::smatch m;
    REQUIRE(std::regex_match(pcg[i].name, m, name_re));
    int layer = std::stoi(m[2]);
    layers.insert(layer);
    // Bottom-layer VDD stripes lie on even y, GND stripes on odd y.
    if (layer == 1 && std::stoll(m[4]) % 2 == 0) vdd_min = std::min(vdd_min, direct[i].value);
    if (layer == 1 && std::stoll(m[4]) % 2 == 1) gnd_max = std::max(gnd_max, direct[i].value);
  }
  CHECK(max_error <= 1e-9);
  CHECK(layers == std::set<int>{1, 2, 3, 4});
  // The loads pull VDD down and GND up by an IR drop of a few percent, not more.
  CHECK(vdd_min < 1.8 - 0.005);
  CHECK(vdd_min > 1.8 * 0.8);
  CHECK(gnd_max > 0.005);
  CHECK(gnd_max < 1.8 * 0.2);
}

TEST_CASE("the same seed writes the same bytes", "[gen]") {
  test::TempDir dir;
  for (const char* name : {"a.sp", "b.sp"})
    REQUIRE(run_gen("--nodes 20k --seed 11 -o " + dir.file(name), dir.file("log")) == kExitOk);
  REQUIRE(run_gen("--nodes 20k --seed 12 -o " + dir.file("c.sp"), dir.file("log")) == kExitOk);
  const std::string a = test::read_text(dir.file("a.sp"));
  CHECK(a.size() > 1000000);
  CHECK(a == test::read_text(dir.file("b.sp")));
  const std::string c = test::read_text(dir.file("c.sp"));
  CHECK(c != a);
  CHECK(c.size() > a.size() * 9 / 10);  // another seed moves loads and values, not the grid
}

TEST_CASE("pgsim-gen --tran writes a transient grid: inductors behind the pads, decaps, pulses, .tran and .print", "[gen][transient]") {
  test::TempDir dir;
  const std::string netlist = dir.file("t.sp");
  REQUIRE(run_gen("--nodes 3000 --seed 5 --tran 2e-10 -o " + netlist, dir.file("gen.log")) == kExitOk);
  const std::string log = test::read_text(dir.file("gen.log"));
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("([0-9]+) pads, ([0-9]+) loads, ([0-9]+) capacitors, ([0-9]+) inductors")));
  CHECK(std::stoll(m[3]) == 2 * std::stoll(m[2]));  // a decap per load current, two per cell
  CHECK(std::stoll(m[4]) == std::stoll(m[1]));
  const std::string text = test::read_text(netlist);
  CHECK_THAT(text, Catch::Contains("--tran 2e-10"));  // the header reproduces the command
  CHECK_THAT(text, Catch::Contains(" pulse("));
  CHECK_THAT(text, Catch::Contains("\n.tran 1.000000e-11 2.000000e-10\n.print tran v(n1_"));
  REQUIRE(test::run_pgsim(netlist + " -q --backend cpu -o " + dir.file("w.txt") + " --json " + dir.file("r.json"),
                          dir.file("run.log")) == kExitOk);
  const auto j = nlohmann::json::parse(test::read_text(dir.file("r.json")));
  CHECK(j["transient"]["steps"] == 20);
  CHECK(j["transient"]["printed_nodes"] == 5);
  // The pulses (50x the DC loads, rising from 0-200 ps on, against the decaps) deepen the drop
  // beyond the DC operating point's within the first 200 ps.
  REQUIRE(test::run_pgsim(netlist + " -q --dc --json " + dir.file("dc.json"), dir.file("dc.log")) == kExitOk);
  const auto dc = nlohmann::json::parse(test::read_text(dir.file("dc.json")));
  CHECK(j["ir_drop"]["worst_drop"].get<double>() > 1.1 * dc["ir_drop"]["worst_drop"].get<double>());
}

TEST_CASE("pgsim-gen refuses bad sizes and options with exit 2", "[gen]") {
  test::TempDir dir;
  const std::string out = " -o " + dir.file("g.sp");
  for (const char* args : {"--nodes 1000 --tran 0", "--nodes 1000 --tran -1e-9", "--nodes 1000 --tran x", "--nodes 0", "--nodes 50", "--nodes abc", "--nodes 1e12", "--nodes 1Q", "--nodes 1000 --layers 1",
                           "--nodes 1000 --load-fraction 2", "--nodes 1000 --pads-every 0", "--layers 3"}) {
    INFO(args);
    CHECK(run_gen(args + out, dir.file("log")) == kExitInput);
  }
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("--nodes"));
  CHECK(run_gen("--nodes 1000 -o /nonexistent-dir/g.sp", dir.file("log")) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("/nonexistent-dir/g.sp"));
}

TEST_CASE("a run writes the same voltages and IR-drop report for 1, 2 and 8 threads", "[gen]") {
  test::TempDir dir;
  const std::string netlist = dir.file("g.sp");
  // Enough nodes that 8 threads are used after the parse (app/thread_budget.hpp: 9 here).
  REQUIRE(run_gen("--nodes 280000 --seed 5 -o " + netlist, dir.file("gen.log")) == kExitOk);
  std::string voltages, report;
  for (int threads : {1, 2, 8}) {
    const std::string t = std::to_string(threads);
    // stdout only (the IR-drop report): stderr's progress and timings may differ.
    const std::string cmd = std::string("\"") + PGSIM_EXE + "\" " + netlist + " --backend cpu --threads " + t +
                            " -o " + dir.file("v" + t + ".txt") + " --json " + dir.file("r" + t + ".json") + " >" +
                            dir.file("out" + t + ".txt") + " 2>/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(nlohmann::json::parse(test::read_text(dir.file("r" + t + ".json")))["threads"] == threads);
    const std::string v = test::read_text(dir.file("v" + t + ".txt")), out = test::read_text(dir.file("out" + t + ".txt"));
    REQUIRE(v.size() > 280000 * 10);
    REQUIRE(out.find("IR drop:") != std::string::npos);
    if (threads == 1) {
      voltages = v, report = out;
      continue;
    }
    CHECK(v == voltages);
    CHECK(out == report);
  }
}

TEST_CASE("a thread count below 1 is a usage error", "[gen]") {
  test::TempDir dir;
  CHECK(test::run_pgsim("x.sp --threads 0", dir.file("log")) == kExitInput);
  CHECK(test::read_text(dir.file("log")).find("--threads") != std::string::npos);
}
