// NetlistInput: plain and gzip-compressed bytes from files and FIFOs, read in blocks, with the
// progress() and total() of the underlying file, and every corrupt or unreadable input an
// InputError naming it. The binary's view of the same inputs (stdin, includes): test_inputs.cpp.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "gzip_test_util.hpp"
#include "parser/input_error.hpp"
#include "parser/netlist_input.hpp"
#include "test_util.hpp"

using namespace pgsim;

namespace {

// A text of `lines` numbered lines, different enough that a lost or repeated block shows.
std::string numbered_text(int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) text += "R" + std::to_string(i) + " n" + std::to_string(i) + " n" + std::to_string(i + 1) + " 1\n";
  return text;
}

// Everything `input` hands out, read in blocks of `block` bytes; progress() never falls or passes total().
std::string read_all(NetlistInput& input, size_t block) {
  std::string text, buffer(block, '\0');
  uint64_t last = input.progress();
  while (size_t n = input.read(buffer.data(), block)) {
    text.append(buffer, 0, n);
    CHECK(input.progress() >= last);
    if (input.total() != 0) CHECK(input.progress() <= input.total());
    last = input.progress();
  }
  CHECK(input.read(buffer.data(), block) == 0);  // the end stays the end
  return text;
}

// The message of the InputError that opening and reading `path` throws.
std::string input_error(const std::string& path) {
  try {
    NetlistInput input(path);
    read_all(input, 1 << 16);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no error for " << path);
  return {};
}

}  // namespace

TEST_CASE("a plain file is handed out whole, in blocks of any size, with its size as total", "[input]") {
  test::TempDir dir;
  const std::string text = numbered_text(5000);
  const std::string path = dir.write("plain.sp", text);
  for (size_t block : {size_t(1), size_t(7), size_t(4096), text.size() + 10}) {
    INFO("block " << block);
    NetlistInput input(path);
    CHECK_FALSE(input.compressed());
    CHECK(input.total() == text.size());
    CHECK(read_all(input, block) == text);
    CHECK(input.progress() == text.size());
  }
  for (const std::string& tiny : {std::string(), std::string("\x1f"), std::string("\x1f\x8a"), std::string("x")}) {
    NetlistInput input(dir.write("tiny.sp", tiny));
    CHECK_FALSE(input.compressed());
    CHECK(read_all(input, 3) == tiny);
  }
}

TEST_CASE("gzip is recognised by its magic bytes and decompressed, and progress counts compressed bytes", "[input]") {
  test::TempDir dir;
  const std::string text = numbered_text(20000);
  const std::string packed = test::gzip(text);
  REQUIRE(packed.size() < text.size() / 3);
  for (const char* name : {"grid.sp.gz", "grid.sp"}) {  // the name does not matter
    for (size_t block : {size_t(1000), size_t(1) << 20}) {
      INFO(name << ", block " << block);
      NetlistInput input(dir.write(name, packed));
      CHECK(input.compressed());
      CHECK(input.total() == packed.size());
      CHECK(read_all(input, block) == text);
      CHECK(input.progress() == packed.size());
    }
  }
}

TEST_CASE("a gzip stream of several members reads as their texts one after another", "[input]") {
  test::TempDir dir;
  const std::string a = numbered_text(300), b = "* second member\n", c = numbered_text(7);
  NetlistInput input(dir.write("multi.gz", test::gzip(a) + test::gzip(b) + test::gzip(c)));
  CHECK(read_all(input, 100) == a + b + c);
}

TEST_CASE("corrupt, truncated and trailing-garbage gzip data are input errors naming the file", "[input]") {
  test::TempDir dir;
  const std::string packed = test::gzip(numbered_text(2000));
  std::string bad_crc = packed;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // inside the CRC-32 of the trailer
  std::string bad_block = packed;
  bad_block[10] = '\xff';  // the first deflate block header: a reserved block type
  const struct {
    std::string name, bytes, message;
  } cases[] = {
      {"crc.gz", bad_crc, "corrupt gzip data (incorrect data check)"},
      {"block.gz", bad_block, "corrupt gzip data ("},
      {"cut.gz", packed.substr(0, packed.size() / 2), "truncated gzip data"},
      {"no_trailer.gz", packed.substr(0, packed.size() - 4), "truncated gzip data"},
      {"magic_only.gz", packed.substr(0, 2), "truncated gzip data"},
      {"trailing.gz", packed + "junk after the member", "corrupt gzip data ("},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = dir.write(c.name, c.bytes);
    const std::string message = input_error(path);
    CHECK_THAT(message, Catch::StartsWith("cannot read netlist '" + path + "': " + c.message));
  }
}

TEST_CASE("a FIFO is read to its end, plain or compressed, with no total", "[input]") {
  test::TempDir dir;
  const std::string text = numbered_text(3000);
  for (const std::string& bytes : {text, test::gzip(text)}) {
    const std::string fifo = dir.file("netlist.fifo");
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // The writer blocks in open() until the reader opens the FIFO, and the reader until the writer does.
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
    NetlistInput input(fifo);
    CHECK(input.total() == 0);
    CHECK(read_all(input, 4096) == text);
    CHECK(input.progress() == bytes.size());
    writer.join();
  }
}

TEST_CASE("directories and devices are refused without being read", "[input]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("adir"));
  CHECK(input_error(dir.file("adir")) == "cannot read netlist '" + dir.file("adir") + "': it is a directory");
  // /dev/zero never ends: it is only stat()ed, never opened.
  CHECK(input_error("/dev/zero") == "cannot read netlist '/dev/zero': it is a device, not a file or a pipe");
  CHECK(input_error(dir.file("none.sp")) == "cannot open netlist '" + dir.file("none.sp") + "': No such file or directory");
}
