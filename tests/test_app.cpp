#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "app/compare.hpp"
#include "app/exit_codes.hpp"
#include "app/parked_names.hpp"
#include "app/parked_offsets.hpp"
#include "app/run.hpp"
#include "app/voltage_file.hpp"
#include "parser/netlist.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(test::read_text(path)); }

}  // namespace

TEST_CASE("ibmpg1 matches the reference solution", "[app][ibmpg1]") {
  test::TempDir dir;
  const std::string netlist = test::shared_data("ibmpg1.spice"), solution = test::shared_data("ibmpg1.solution");
  SECTION("default solver within 1e-6 V") {
    REQUIRE(test::run_pgsim(netlist + " -o " + dir.file("v.txt") + " --compare " + solution + " --json " +
                                dir.file("r.json"),
                            dir.file("log")) == kExitOk);
    auto j = read_json(dir.file("r.json"));
    CHECK(j["nodes"] == 30635);
    CHECK(j["compare"]["matched"] == 30635);
    CHECK(j["compare"]["missing"] == 0);
    CHECK(j["compare"]["max_abs_error"].get<double>() <= 1e-6);
    CHECK(j["solver"]["converged"] == true);
    CHECK(j["solver"]["relative_residual"].get<double>() <= 1e-10);
    for (const char* phase : {"parse", "reduce", "setup", "upload", "solve", "write", "total"})
      CHECK(j["timing"][phase].is_number());
    CHECK(j["levels"].is_array());
    // The output file holds every node but ground and re-compares to the same error.
    auto written = read_voltages(dir.file("v.txt"));
    CHECK(written.size() == 30635);
  }
  SECTION("direct solver within 1e-9 V") {
    REQUIRE(test::run_pgsim(netlist + " --solver direct --compare " + solution + " --json " + dir.file("r.json"),
                            dir.file("log")) == kExitOk);
    auto j = read_json(dir.file("r.json"));
    CHECK(j["solver"]["method"] == "direct");
    CHECK(j["compare"]["max_abs_error"].get<double>() <= 1e-9);
  }
}

TEST_CASE("a failed run leaves an earlier output file untouched", "[app]") {
  test::TempDir dir;
  const std::string out = dir.write("v.txt", "earlier result\n");
  SECTION("bad netlist") {
    std::string bad = dir.write("bad.sp", "V1 a 0 1\nR1 a 0 -1\n");
    CHECK(test::run_pgsim(bad + " -o " + out, dir.file("log")) == kExitInput);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("bad.sp:2:"));
  }
  SECTION("no convergence") {
    // A chain: without --no-eliminate, chain elimination would solve it exactly before PCG.
    std::string ok = dir.write("ok.sp", "V1 a 0 1\nR1 a b 1\nR2 b c 1\nR3 c d 1\nR4 d 0 1\nI1 c 0 1m\n");
    CHECK(test::run_pgsim(ok + " -o " + out + " --precond none --no-eliminate --max-iter 1", dir.file("log")) ==
          kExitNotConverged);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("did not converge"));
  }
  CHECK(test::read_text(out) == "earlier result\n");
  for (auto& entry : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("exit codes for usage and missing files", "[app]") {
  test::TempDir dir;
  CHECK(test::run_pgsim("", dir.file("log")) == kExitInput);
  CHECK(test::run_pgsim("/nonexistent.sp", dir.file("log")) == kExitInput);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("/nonexistent.sp"));
  CHECK(test::run_pgsim("--help", dir.file("log")) == kExitOk);
}

TEST_CASE("the netlist read where --parse says, with the same voltages", "[app]") {
  test::TempDir dir;
  const std::string net = dir.write("g.sp", "R1 n1 n2 1\nR2 n2 n3 2\nV1 n1 0 1.8\nI1 n3 0 1m\n.end\n");
  CHECK(test::run_pgsim(net + " --parse somewhere", dir.file("log")) == kExitInput);
  REQUIRE(test::run_pgsim(net + " -q --parse cpu -o " + dir.file("cpu.txt") + " --json " + dir.file("cpu.json"),
                          dir.file("log")) == kExitOk);
  CHECK(read_json(dir.file("cpu.json"))["parse_on"] == "cpu");
  // A CUDA build reads it on the GPU (or, without a usable one, warns and reads it on the CPU);
  // a build without CUDA refuses the request.
  const int code = test::run_pgsim(net + " -q --parse gpu -o " + dir.file("gpu.txt"), dir.file("log"));
  if (code == kExitOk) {
    CHECK(test::read_text(dir.file("gpu.txt")) == test::read_text(dir.file("cpu.txt")));
  } else {
    CHECK(code == kExitInput);
    CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("--parse gpu: this pgsim was built without CUDA"));
  }
}

TEST_CASE("compare matches names case-insensitively and counts missing nodes", "[app]") {
  Netlist nl = parse_netlist_text("V1 a 0 1\nR1 a B 1\nR2 B c 1\nR3 c 0 1\n", "mem.sp");
  std::vector<double> v(nl.node_count(), 0.0);
  v[nl.node_names.find("a")] = 1.0;
  v[nl.node_names.find("b")] = 2.0 / 3;
  v[nl.node_names.find("c")] = 1.0 / 3;
  std::vector<NamedValue> ref{{"A", 1.0}, {"b", 2.0 / 3 + 1e-3}, {"zz", 5.0}};
  const MatchedReference matched = match_reference(nl, ref);
  nl.node_names.drop_index();  // as run() does: the comparison reads names by id only
  Comparison c = compare_voltages(nl, v, matched);
  CHECK(c.matched == 2);
  CHECK(c.missing_in_result == 1);
  CHECK(c.missing_in_reference == 1);
  CHECK(c.max_abs_error == Approx(1e-3));
  CHECK(c.mean_abs_error == Approx(0.5e-3));
  REQUIRE(c.worst.size() == 2);
  CHECK(c.worst[0].name == "B");
  CHECK(c.worst[0].value == Approx(-1e-3));
  REQUIRE(c.missing_examples.size() == 2);
  CHECK(c.missing_examples[0] == "zz (not in the netlist)");
  CHECK(c.missing_examples[1] == "c (not in the reference)");
}

TEST_CASE("run() keeps its largest data in the caller's RunData when given one", "[app]") {
  test::TempDir dir;
  Options opt;
  opt.netlist = dir.write("g.sp", "R1 n1 n2 1\nR2 n2 n3 1\nV1 n1 0 1.0\nI1 n3 0 1m\n.end\n");
  opt.backend = "cpu";
  opt.quiet = true;
  RunData data;
  const RunReport r = run(opt, &data);
  CHECK(r.nodes == 3);
  REQUIRE(data.netlist.node_count() == 4);
  CHECK(data.system.b.size() == 2);  // n1 is fixed by V1
  // G, read only by the residual check after the solve, was packed, not held as it is.
  REQUIRE(data.packed_G.has_value());
  CHECK(data.packed_G->rows == 2);
  CHECK(data.system.G.nnz() == 0);
  REQUIRE(data.voltages.size() == 4);
  // Node names are kept readable by id; their index is dropped after the parse (no lookups by name).
  CHECK_THROWS_AS(data.netlist.node_names.find("n1"), std::logic_error);
  const auto node = [&](std::string_view name) {
    for (uint32_t v = 0; v < data.netlist.node_count(); ++v)
      if (data.netlist.node_names[v] == name) return v;
    FAIL("no node " << name);
    return NameTable::npos;
  };
  CHECK(data.voltages[node("n1")] == Approx(1.0));
  CHECK(data.voltages[node("n3")] == Approx(1.0 - 2e-3).margin(1e-12));
  CHECK(data.deviations.value.size() == 4);
}

TEST_CASE("node names parked share bytes with the name before and come back byte for byte", "[app]") {
  // Names sharing prefixes, suffixes, both or nothing, an empty name, one longer than a one-byte
  // varint (128 bytes), mixed case (kept as spelled), over several blocks of kParkedNamesBlock.
  std::vector<std::string> spelled = {"0", "n1_6996_1234", "n1_6998_1234", "N1_6998_1234", "", "x", std::string(300, 'q'),
                                      std::string(299, 'q') + "r", "abc", "abcabc", "bc"};
  for (int i = 0; spelled.size() < 3 * kParkedNamesBlock + 7; ++i)
    spelled.push_back("n1_" + std::to_string(1000 + i * 2) + "_" + std::to_string(i / 50));
  NameTable names;
  for (const std::string& name : spelled) names.intern(name);
  REQUIRE(names.size() == spelled.size() - 1);  // "N1_6998_1234" is "n1_6998_1234" ignoring case
  spelled.erase(spelled.begin() + 3);
  names.drop_index();
  ParkedNames parked = park_names(names);
  CHECK(names.size() == 0);
  CHECK(parked.count == spelled.size());
  CHECK(parked.block_at.size() == 5);  // 4 blocks
  size_t chars = 0;
  for (const std::string& name : spelled) chars += name.size();
  CHECK(parked.block_char.back() == chars);
  CHECK(parked.bytes.size() < chars / 2);  // the numbered names share most of their bytes
  restore_names(parked, names);
  CHECK(parked.count == 0);
  CHECK(parked.bytes.empty());
  REQUIRE(names.size() == spelled.size());
  for (uint32_t id = 0; id < names.size(); ++id) CHECK(names[id] == spelled[id]);
  CHECK(names.arena_bytes() == chars);
  CHECK_THROWS_AS(names.find("x"), std::logic_error);  // no index
}

TEST_CASE("node offsets parked keep only their non-zero entries and come back bit for bit", "[app]") {
  // Over a block of the parallel passes (65,536 entries): offsets in several blocks.
  FillVector<double> offsets(200000, 0.0);
  offsets[3] = 1.8;
  offsets[70000] = -0.0;  // not +0.0: kept, with its sign
  offsets[199999] = -1e-300;
  const FillVector<double> before = offsets;
  ParkedOffsets parked = park_offsets(offsets);
  CHECK(offsets.empty());
  CHECK(parked.size == 200000);
  CHECK(parked.index == std::vector<uint32_t>{3, 70000, 199999});
  restore_offsets(parked, offsets);
  CHECK(parked.index.empty());
  REQUIRE(offsets.size() == before.size());
  CHECK(std::memcmp(offsets.data(), before.data(), before.size() * sizeof(double)) == 0);
}

TEST_CASE("a right-hand side parked keeps its non-zero entries and comes back bit for bit", "[app]") {
  // More kept entries than a block (65,536): the restore's scatter runs on all threads.
  std::vector<double> b(200000, 0.0);
  for (size_t i = 1; i < b.size(); i += 3) b[i] = -1.0 / double(i);
  b[0] = -0.0;
  const std::vector<double> before = b;
  ParkedOffsets parked = park_offsets(b);
  CHECK(b.empty());
  CHECK(b.capacity() == 0);
  REQUIRE(parked.index.size() == 66667 + 1);
  CHECK(parked.index[0] == 0);
  CHECK(parked.index[1] == 1);
  CHECK(parked.index.back() == 199999);
  restore_offsets(parked, b);
  CHECK(parked.value.empty());
  REQUIRE(b.size() == before.size());
  CHECK(std::memcmp(b.data(), before.data(), before.size() * sizeof(double)) == 0);
}
