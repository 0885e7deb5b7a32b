// The GPU reader's line grammar (parser/plain_line.hpp), held to the CPU parser line by line on
// the CPU, so that CI (no GPU) checks what the GPU reader takes: every line it reads as an
// element, skips or takes for .end must be read so by the CPU parser too; every line the CPU
// parser rejects must be declined. Lines are mutated at random from plain ones.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <string_view>

#include "parser/netlist.hpp"
#include "parser/plain_line.hpp"
#include "plain_mutation.hpp"

using namespace pgsim;
using namespace pgsim::plain_line;

namespace {

std::string_view field(const std::string& line, uint16_t at, uint16_t length) {
  return std::string_view(line).substr(at, length);
}

// `line` judged by parse_plain_line() and read by the CPU parser between two plain elements.
void require_agreement(const std::string& line) {
  INFO("line: " << line);
  const LineFields f = parse_plain_line(line.data(), int64_t(line.size()), kPowersOfTen);
  const std::string text = "Rfirst a0 b0 1\n" + line + "\nRlast a1 b1 2\n";
  Netlist cpu;
  bool failed = false;
  try {
    cpu = parse_netlist_text(text, "t.sp");
  } catch (const std::exception&) {
    failed = true;
  }
  if (f.status == kDecline) return;  // the CPU parser reads it, whatever it makes of it
  REQUIRE_FALSE(failed);
  REQUIRE(cpu.warnings.empty());
  if (f.status == kSkip || f.status == kEnd) {
    REQUIRE(cpu.elements.size() == (f.status == kEnd ? 1u : 2u));
    return;
  }
  REQUIRE(f.status == kElement);
  REQUIRE(cpu.elements.size() == 3);
  const Element& e = cpu.elements[1];
  REQUIRE(e.kind == ElementKind(f.kind));
  REQUIRE(std::memcmp(&e.value, &f.value, sizeof(double)) == 0);
  REQUIRE(cpu.element_name(1) == field(line, f.name_at, f.name_len));
  const auto same_node = [&](uint32_t id, bool ground, uint16_t at, uint16_t length) {
    if (ground) return id == 0;
    return id != 0 && NameTable::same(cpu.node_names[id], field(line, at, length));  // the first spelling kept
  };
  REQUIRE(same_node(e.plus, f.ground & 1, f.plus_at, f.plus_len));
  REQUIRE(same_node(e.minus, f.ground & 2, f.minus_at, f.minus_len));
}

}  // namespace

TEST_CASE("plain lines: each form read as the CPU parser reads it", "[parser]") {
  for (const char* line :
       {"R1 a b 1.5", "r2 N1 n2 2", "V1 n1 0 1.8", "I1 n2 GND 1e-3", "R3 gnd 0 3", "R4\tc\td\t4", "R5,e,f,5\r",
        "R6 g h 6 ; comment", "I2 i 0 -2.5 $ comment", "V2 j 0 -0", "R7 k l 0.000", "R8 m n 123456789.125",
        "R9 o p 4e-22", "R10 q r 3e22", "", "   ", "* comment", "  * comment \x01", "; all comment", "$ too",
        ".op", ".OPTIONS post=1", ".title a, b", ".end", ".END trailing", "R11 \xc3\xa9 \xff 1"})
    require_agreement(line);
}

TEST_CASE("plain lines: what the CPU parser rejects or acts on is declined", "[parser]") {
  for (const char* line :
       {"+ 1", "R1 a b 1k", "R1 a b R=1", "V1 a 0 DC 1.8", "C1 a 0 1e-12", "L1 a 0 1n", "R1 a b -1", "R1 a b 1e31",
        "V1 a A 1", "V1 0 gnd 1", "R1 a b", "X1 a b c", "R1 a b .5", "R1 a b 1e-23", ".include x.sp", ".tran 1n 10n",
        ".param x=1", ".foo", "R1 a b 1\x01"}) {
    const LineFields f = parse_plain_line(line, int64_t(std::strlen(line)), kPowersOfTen);
    INFO(line);
    REQUIRE(f.status == kDecline);
    require_agreement(line);
  }
  const std::string long_line(70000, 'a');
  REQUIRE(parse_plain_line(long_line.data(), int64_t(long_line.size()), kPowersOfTen).kind == kLongLine);
}

TEST_CASE("plain lines: mutated lines are declined or read as the CPU parser reads them", "[parser]") {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> pick(0, 1 << 20);
  const char* seeds[] = {"R12 n1_2_3 N1_2_5 1.950737e-01", "V7 pad_1 0 1.8", "i3 n4 gnd 2.5e-3", "R1 a b 0",
                         ".end", ".options x", "* c", "R2,x,y,3 ; c"};
  int read = 0, declined = 0;
  for (int round = 0; round < 100000; ++round) {
    std::string line = seeds[size_t(pick(rng)) % std::size(seeds)];
    test::mutate_plain_text(line, rng, false);
    const LineFields f = parse_plain_line(line.data(), int64_t(line.size()), kPowersOfTen);
    (f.status == kDecline ? declined : read) += 1;
    require_agreement(line);
  }
  REQUIRE(read > 10000);  // both outcomes met often enough for the comparison to mean something
  REQUIRE(declined > 10000);
}
