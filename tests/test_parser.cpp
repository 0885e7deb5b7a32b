#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <sstream>

#include "parser/input_error.hpp"
#include "parser/netlist_part.hpp"
#include "parser/netlist.hpp"
#include "parser/spice_value.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

Netlist parse(const std::string& text) { return parse_netlist_text(text, "mem.sp"); }

// The message of the ParseError that parsing `text` throws.
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for: " << text);
  return {};
}

}  // namespace

TEST_CASE("SPICE values take scale suffixes and ignore unit letters", "[parser]") {
  CHECK(*parse_spice_value("2.5e-01") == Approx(0.25));
  CHECK(*parse_spice_value("10k") == Approx(1e4));
  CHECK(*parse_spice_value("10kohm") == Approx(1e4));
  CHECK(*parse_spice_value("1.8V") == Approx(1.8));
  CHECK(*parse_spice_value("3MEG") == Approx(3e6));
  CHECK(*parse_spice_value("3meg") == Approx(3e6));
  CHECK(*parse_spice_value("2m") == Approx(2e-3));
  CHECK(*parse_spice_value("2M") == Approx(2e-3));  // SPICE: M is milli
  CHECK(*parse_spice_value("4u") == Approx(4e-6));
  CHECK(*parse_spice_value("5n") == Approx(5e-9));
  CHECK(*parse_spice_value("6p") == Approx(6e-12));
  CHECK(*parse_spice_value("7f") == Approx(7e-15));
  CHECK(*parse_spice_value("1g") == Approx(1e9));
  CHECK(*parse_spice_value("1t") == Approx(1e12));
  CHECK(*parse_spice_value("-0.5") == Approx(-0.5));
  CHECK(*parse_spice_value("+.5") == Approx(0.5));
  CHECK(*parse_spice_value("0") == 0.0);
}

TEST_CASE("SPICE values reject non-numbers and non-finite numbers", "[parser]") {
  for (const char* bad : {"", "abc", "nan", "inf", "-inf", "1e999", "1.5.3", "1k2", "0x10", "--1", "NaN"})
    CHECK_FALSE(parse_spice_value(bad).has_value());
}

TEST_CASE("elements, ground names and case-insensitive nodes", "[parser]") {
  Netlist nl = parse("* comment\nR1 A b 2\nr2 a GND 1k\nV1 B 0 DC 1.8\nI1 b 0 1m\nC1 a 0 1p\nL1 a b 1n\n.op\n.end\n");
  REQUIRE(nl.elements.size() == 6);
  CHECK(nl.node_count() == 3);  // 0, A, b
  CHECK(nl.node_names[1] == "A");  // first spelling is kept
  CHECK(nl.node_names[2] == "b");
  CHECK(nl.elements[0].kind == ElementKind::Resistor);
  CHECK(nl.elements[0].plus == 1);
  CHECK(nl.elements[0].minus == 2);
  CHECK(nl.elements[1].minus == Netlist::ground);
  CHECK(nl.elements[1].value == Approx(1000));
  CHECK(nl.elements[2].kind == ElementKind::VoltageSource);
  CHECK(nl.elements[2].value == Approx(1.8));
  CHECK(nl.elements[3].kind == ElementKind::CurrentSource);
  CHECK(nl.elements[3].value == Approx(1e-3));
  CHECK(nl.elements[4].kind == ElementKind::Capacitor);
  CHECK(nl.elements[5].kind == ElementKind::Inductor);
  CHECK(nl.elements[5].where().line == 7);
}

TEST_CASE("continuation lines, inline comments and .end", "[parser]") {
  Netlist nl = parse("R1 a\n+ b\n+ 5 ; five ohms\nR2 b 0 7 $ seven\n$ whole-line comment\n.end\nR3 garbage here\n");
  REQUIRE(nl.elements.size() == 2);
  CHECK(nl.elements[0].value == Approx(5));
  CHECK(nl.elements[1].value == Approx(7));
  CHECK(nl.elements[1].where().line == 4);
}

TEST_CASE("a line's end and its comments as the tokenizer meets them", "[parser]") {
  // The tokenizer finds a line's end in the scan that splits it: CR LF ends, a last line without
  // '\n', a '$' inside a token, control bytes in a comment (not read) and in a '*' line (only NUL refused).
  Netlist nl = parse(std::string("R1 a$b c 1 ; \x02 not read\r\n* a \x03 comment\r\nR2 C 0 2 $ \x04\nR3 c\n+ 0 ; \x05\n+ 3"));
  REQUIRE(nl.elements.size() == 3);
  CHECK(nl.node_names[1] == "a$b");
  CHECK(nl.node_names[2] == "c");
  CHECK(nl.elements[1].plus == 2);
  CHECK(nl.elements[1].value == 2.0);
  CHECK(nl.elements[2].value == 3.0);
  CHECK(nl.elements[2].where().line == 4);
  CHECK_THAT(parse_error(std::string("R1 a b 1\nR2 a b 1 \x02\n")), Catch::Contains("mem.sp:2:") && Catch::Contains("0x02"));
  CHECK_THAT(parse_error(std::string("R1 a b 1\nR2 a\n+ b\x7f 1\n")), Catch::Contains("mem.sp:2:") && Catch::Contains("0x7f"));
  CHECK_THAT(parse_error(std::string("R1 a b 1\n* x\0y\n", 15)), Catch::Contains("mem.sp:2:") && Catch::Contains("0x00"));
}


TEST_CASE("a token ends at the first blank, ',', ';' or control byte, at any place in a long token", "[parser]") {
  // The tokenizer scans a token 16 (or 8) bytes at a time, the bytes left before the text's end
  // one at a time: each byte that ends a token, at every offset in and past those words, with a
  // byte >= 0x80 (plain) in the token, and the token at the very end of the text too.
  for (size_t length = 1; length <= 40; ++length) {
    std::string name(length, 'n');
    name[length / 2] = '\xe9';
    for (const char* stop : {" ", "\t", ",", "\r", "\v", "\f", ";x"}) {
      INFO("length " << length << ", stop byte " << int(stop[0]));
      if (stop[0] == ';') {  // a comment: the line has no value
        CHECK_THAT(parse_error("V1 0 " + name + stop + " 1\n"), Catch::Contains("has no voltage value"));
        continue;
      }
      const Netlist nl = parse("V1 0 " + name + stop + " 1\nR1 " + name + " 0 2\n");
      REQUIRE(nl.elements.size() == 2);
      CHECK(nl.node_names[1] == name);
      CHECK(nl.elements[1].plus == 1);
    }
    for (const char control : {'\x01', '\x1f', '\x7f'})
      CHECK_THAT(parse_error("R1 0 " + name + control + name + " 1\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("control character"));
    const Netlist last = parse("R1 0 1 " + std::string(length, '0') + "7");  // the value ends the text
    REQUIRE(last.elements.size() == 1);
    CHECK(last.elements[0].value == 7.0);
  }
}
TEST_CASE(".include is read relative to the including file", "[parser]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("sub"));
  dir.write("sub/part.sp", "R2 b 0 3\n.include 'deeper.sp'\n");
  dir.write("sub/deeper.sp", "V1 a 0 1\n");
  std::string top = dir.write("top.sp", "R1 a b 1\n.include \"sub/part.sp\"\n.end\n");
  Netlist nl = parse_netlist(top);
  REQUIRE(nl.elements.size() == 3);
  CHECK(nl.files.size() == 3);
  CHECK(nl.where(nl.elements[2].where()) == dir.file("sub/deeper.sp") + ":1");
}

TEST_CASE("parse errors carry file:line and the offending text", "[parser]") {
  CHECK_THAT(parse_error("R1 a b 1\nR2 a b\n"), Catch::Contains("mem.sp:2:") && Catch::Contains("'R2'"));
  CHECK_THAT(parse_error("R1 a b 1\n\nR2 a b x1\n"), Catch::Contains("mem.sp:3:") && Catch::Contains("'x1'"));
  CHECK_THAT(parse_error("R1 a b -5\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("negative"));
  CHECK_THAT(parse_error("R1 a b nan\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("'nan'"));
  CHECK_THAT(parse_error("R1 a b 1e999\n"), Catch::Contains("'1e999'"));
  CHECK_THAT(parse_error("R1 a b 1\nQ1 a b c mod\n"), Catch::Contains("mem.sp:2:") && Catch::Contains("'Q1'"));
  CHECK_THAT(parse_error("R1 a b 1\n#1 a b 1\n"), Catch::Contains("mem.sp:2:") && Catch::Contains("unknown element"));
  CHECK_THAT(parse_error("R1 a b 1 2\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("'2'"));
  CHECK_THAT(parse_error("V1 a 0\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("no voltage value"));
  CHECK_THAT(parse_error("+ R1 a b 1\n"), Catch::Contains("mem.sp:1:") && Catch::Contains("continuation"));
  CHECK_THAT(parse_error("R1 a b 1\n.include missing.sp\n"), Catch::Contains("mem.sp:2:") && Catch::Contains("missing.sp"));
  CHECK_THAT(parse_error("R1 a b 1\n.subckt foo a b\n"), Catch::Contains("mem.sp:2:") && Catch::Contains("not supported"));
  CHECK_THAT(parse_error(std::string("R1 a b 1\nR2 a\x01 b 1\n")), Catch::Contains("mem.sp:2:") && Catch::Contains("0x01"));
  CHECK_THAT(parse_error("* nothing\n.end\n"), Catch::Contains("no elements"));
}

TEST_CASE("a missing netlist file is an input error naming it", "[parser]") {
  try {
    parse_netlist("/nonexistent/x.sp");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/nonexistent/x.sp"));
  }
}

TEST_CASE("a file that includes itself stops with an error", "[parser]") {
  test::TempDir dir;
  std::string top = dir.write("loop.sp", "R1 a 0 1\n.include loop.sp\n");
  CHECK_THROWS_WITH(parse_netlist(top), Catch::Contains("nested"));
}

TEST_CASE("a netlist reads at most Netlist::kMaxFiles files (an element's file index is 16 bits)", "[parser]") {
  test::TempDir dir;
  dir.write("part.sp", "R1 a 0 1\n");
  std::string includes;
  for (size_t i = 1; i < Netlist::kMaxFiles; ++i) includes += ".include part.sp\n";
  // The top file and kMaxFiles - 1 includes: the last file's elements keep their index.
  const Netlist nl = parse_netlist(dir.write("most.sp", includes + "V1 a 0 1\n"));
  REQUIRE(nl.files.size() == Netlist::kMaxFiles);
  CHECK(nl.where(nl.elements[Netlist::kMaxFiles - 2].where()) == dir.file("part.sp") + ":1");
  CHECK(nl.elements[Netlist::kMaxFiles - 2].file == Netlist::kMaxFiles - 1);
  CHECK(nl.where(nl.elements.back().where()) == dir.file("most.sp") + ":" + std::to_string(Netlist::kMaxFiles));
  // One more include is refused at its line.
  const std::string top = dir.write("over.sp", includes + ".include part.sp\n");
  CHECK_THROWS_WITH(parse_netlist(top), top + ":" + std::to_string(Netlist::kMaxFiles) +
                                            ": .include: more than 65536 files in one netlist");
}

TEST_CASE("very long tokens are shortened in messages", "[parser]") {
  std::string longname(100000, 'x');
  std::string msg = parse_error("R1 a b " + longname + "\n");
  CHECK(msg.size() < 400);
  CHECK_THAT(msg, Catch::Contains("100000 characters"));
}

TEST_CASE("a name's last partial word holds its bytes in order, zero-padded, at every length", "[parser]") {
  // NameTable::tail reads a short name by two overlapping loads: each byte must land in its place.
  std::mt19937 rng(7);
  for (size_t len = 1; len <= 23; ++len) {
    if (len % 8 == 0) continue;  // no partial word: hash() and same() do not ask for one
    for (int trial = 0; trial < 200; ++trial) {
      std::string s(len, '\0');
      for (char& ch : s) ch = static_cast<char>(1 + rng() % 255);
      uint64_t expected = 0;
      for (size_t j = len - len % 8; j < len; ++j) expected |= uint64_t(static_cast<unsigned char>(s[j])) << (8 * (j % 8));
      INFO(len);
      REQUIRE(NameTable::tail(s) == expected);
    }
  }
}

TEST_CASE("name hashing and matching ignore ASCII case only, at every length", "[parser]") {
  // Every byte value at every position of names of 1..20 bytes (the hash and the compare
  // work eight bytes at a time, so lengths around 8 and 16 matter).
  for (size_t len = 1; len <= 20; ++len)
    for (int c = 1; c < 256; ++c) {
      std::string a(len, 'q');
      a[len / 2] = static_cast<char>(c);
      std::string b = a;
      for (char& ch : b)
        if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
      REQUIRE(NameTable::hash(a) == NameTable::hash(b));
      NameTable t;
      uint32_t id = t.intern(a);
      REQUIRE(t.find(b) == id);
      // Bytes that only differ in bit 0x20 outside A-Z/a-z are different names.
      std::string d = a;
      d[len / 2] = static_cast<char>(c ^ 0x20);
      const bool letter = (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
      if (!letter && d[len / 2] != 0) REQUIRE(t.find(d) == NameTable::npos);
      // A byte differing in any other bit, beside letters of the other case (same() tells most
      // mismatches by such a bit before it folds case).
      for (int bit : {0x01, 0x10, 0x40, 0x80}) {
        std::string e = b;
        e[len / 2] = static_cast<char>(c ^ bit);
        if (e[len / 2] != 0) REQUIRE(t.find(e) == NameTable::npos);
      }
    }
}

TEST_CASE("a name table keeps every name across growth", "[parser]") {
  NameTable t;
  for (uint32_t i = 0; i < 100000; ++i) REQUIRE(t.intern("node_" + std::to_string(i)) == i);
  for (uint32_t i = 0; i < 100000; ++i) REQUIRE(t.find("NODE_" + std::to_string(i)) == i);
  CHECK(t.find("node_100000") == NameTable::npos);
  CHECK(t[4711] == "node_4711");
}

TEST_CASE("names appended whole are read by id after the interned ones", "[parser]") {
  NameTable t;
  t.intern("0");
  t.intern("a1");
  const std::string text = "bbcccZ";  // "bb", "ccc", "Z"
  const NameTable::Appended to = t.append_whole(3, text.size());
  std::copy(text.begin(), text.end(), to.text);
  const uint64_t base = 3;  // "0a1"
  to.ends[0] = base + 2, to.ends[1] = base + 5, to.ends[2] = base + 6;
  t.drop_index();
  REQUIRE(t.size() == 5);
  CHECK(t[0] == "0");
  CHECK(t[1] == "a1");
  CHECK(t[2] == "bb");
  CHECK(t[3] == "ccc");
  CHECK(t[4] == "Z");
  CHECK(t.arena_bytes() == 9);
  CHECK_THROWS_AS(t.find("bb"), std::logic_error);  // the index never learnt them, and is gone
}

TEST_CASE("numbers equal std::from_chars bit for bit", "[parser]") {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-30, 30), precision(0, 20), style(0, 2);
  char text[64];
  for (int i = 0; i < 200000; ++i) {
    double x = mantissa(rng) * std::pow(10.0, exponent(rng));
    const int p = precision(rng);
    const int s = style(rng);
    std::snprintf(text, sizeof text, s == 0 ? "%.*e" : s == 1 ? "%.*f" : "%.*g", p, x);
    double expected = 0;
    auto r = std::from_chars(text, text + std::strlen(text), expected);
    REQUIRE(r.ec == std::errc());
    if (*r.ptr) continue;  // from_chars stopped early: not a plain number
    auto got = parse_spice_value(text);
    REQUIRE(got.has_value());
    INFO(text);
    REQUIRE(std::memcmp(&*got, &expected, sizeof expected) == 0);
  }
}

TEST_CASE("numbers at the edges of the plain-number path equal std::from_chars bit for bit", "[parser]") {
  // parse_spice_value reads digits[.digits][e[+-]digits] with at most 19 digits, at most 2^53,
  // and a power of ten within 22 by itself, and any other number with fast_float: both sides of
  // each of those limits, and forms that path leaves to fast_float.
  for (const char* text : {"9007199254740992", "9007199254740993", "9007199254740991e-22", "9007199254740993e-22",
                           "1234567890123456789", "12345678901234567890", "0.0000000000000000001", "1.0000000000000000001",
                           "4.9e22", "4.9e23", "4.9e-22", "4.9e-23", "1e22", "1e23", "1e-22", "1e-23", "123.456e20",
                           "123.456e21", "0.1", "0.3", "-0", "-0.0e5", "0e-400", "1.", ".5", "1.e5", "-.5e-3", "1E+05",
                           "00000000000000000001", "7.000000e-01", "1e0000000000000000003", "2.5e-01", "1.950737e-01"}) {
    double expected = 0;
    const auto r = std::from_chars(text, text + std::strlen(text), expected);
    INFO(text);
    REQUIRE(r.ec == std::errc());
    REQUIRE(*r.ptr == '\0');
    const auto got = parse_spice_value(text);
    REQUIRE(got.has_value());
    CHECK(std::memcmp(&*got, &expected, sizeof expected) == 0);
  }
  // An exponent mark with no exponent is a unit letter, as fast_float reads it; a scale follows the number.
  CHECK(*parse_spice_value("1e") == 1.0);
  CHECK(*parse_spice_value("2.5ex") == 2.5);
  CHECK(*parse_spice_value("1.5e-3k") == 1.5);
  CHECK_FALSE(parse_spice_value("1e-").has_value());
  CHECK_FALSE(parse_spice_value("1e+x").has_value());
}

TEST_CASE("elements and node ids keep netlist order across includes and many lines", "[parser]") {
  // The parser enters elements a few lines after reading them (to overlap table look-ups):
  // the result must be as if each were entered at once.
  test::TempDir dir;
  std::string part, top;
  for (int i = 0; i < 30; ++i) part += "Rp" + std::to_string(i) + " p" + std::to_string(i) + " n" + std::to_string(i) + " 1\n";
  dir.write("part.sp", part);
  for (int i = 0; i < 40; ++i) {
    top += "R" + std::to_string(i) + " n" + std::to_string(i) + " n" + std::to_string(i + 1) + " 1\n";
    if (i == 20) top += ".include part.sp\n";
  }
  top += "R0 n0 0 5\n";  // a duplicate name after the include
  const Netlist nl = parse_netlist(dir.write("top.sp", top));
  REQUIRE(nl.elements.size() == 71);
  std::vector<std::string> first_seen{"0"};
  auto see = [&](const std::string& name) {
    if (std::find(first_seen.begin(), first_seen.end(), name) == first_seen.end()) first_seen.push_back(name);
  };
  for (int i = 0; i < 40; ++i) {
    see("n" + std::to_string(i)), see("n" + std::to_string(i + 1));
    if (i == 20)
      for (int k = 0; k < 30; ++k) see("p" + std::to_string(k)), see("n" + std::to_string(k));
  }
  REQUIRE(nl.node_count() == first_seen.size());
  for (uint32_t id = 0; id < nl.node_count(); ++id) CHECK(nl.node_names[id] == first_seen[id]);
  CHECK(nl.where(nl.elements[20].where()) == dir.file("top.sp") + ":21");
  CHECK(nl.where(nl.elements[21].where()) == dir.file("part.sp") + ":1");
  CHECK(nl.where(nl.elements[51].where()) == dir.file("top.sp") + ":23");
  // Element names are not merged: a duplicate keeps its own entry (and spelling), named by its index.
  CHECK(nl.element_names[70] == "R0");
  CHECK(nl.element_names.size() == nl.elements.size());
  CHECK(nl.elements[70].value == 5);
}

TEST_CASE("warnings met before an error are still given, in file order, before it", "[parser]") {
  // Duplicate element names are found after the parse (parser/duplicate_names.hpp): a parse that
  // stops at an error must still give those before it, between the unknown control lines.
  test::TempDir dir;
  const std::string path = dir.write("bad.sp", "V1 a 0 1\nR1 a 0 1\n.x\nr1 a 0 2\n.y\nR1 a 0 3\nR2 a\nR1 a 0 4\n");
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  sink->set_pattern("%v");
  auto logger = spdlog::default_logger();
  logger->sinks().push_back(sink);
  CHECK_THROWS_WITH(parse_netlist(path), Catch::Contains(path + ":7: element 'R2' needs two nodes"));
  logger->sinks().pop_back();
  CHECK(log.str() == path + ":3: ignoring unknown control line '.x'\n" +
                         path + ":4: duplicate element name 'r1' (first at " + path + ":2); both elements are kept\n" +
                         path + ":5: ignoring unknown control line '.y'\n" +
                         path + ":6: duplicate element name 'R1' (first at " + path + ":2); both elements are kept\n");
  // A part of a file keeps them, with its error.
  const NetlistPart part = parse_netlist_part(path, 0, std::filesystem::file_size(path));
  REQUIRE(part.error);
  CHECK(part.error->where.line == 7);
  REQUIRE(part.warnings.size() == 4);
  CHECK(part.warnings[1].kind == ParseWarning::Kind::DuplicateName);
  CHECK(part.warnings[1].where.line == 4);
  CHECK(part.warnings[1].first.line == 2);
  CHECK(part.warnings[2].kind == ParseWarning::Kind::UnknownControl);
  CHECK(part.duplicates == 2);
}
