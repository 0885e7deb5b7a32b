// Issue 14 (output side) and issue 13's parallel write: where pgsim writes for each kind of path
// (regular file, symbolic link, FIFO, socket, character device, standard output), end to end
// through the binary inside a temporary folder; --version; tables with very long node names;
// the parallel formatters give the bytes of a serial one for any thread count.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <limits>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "app/exit_codes.hpp"
#include "app/output_file.hpp"
#include "app/voltage_file.hpp"
#include "mna/grid_matrix.hpp"
#include "mna/matrix_market.hpp"
#include "mna/parallel_text.hpp"
#include "parser/netlist.hpp"
#include "test_util.hpp"

using namespace pgsim;
namespace fs = std::filesystem;

namespace {

const std::string kNetlist = "V1 a 0 1\nR1 a b 1\nR2 b c 1\nR3 c 0 2\nI1 c 0 1m\n";

// The voltages file of a run into a plain new file: what every other kind of output must hold.
std::string plain_output(const test::TempDir& dir, const std::string& net) {
  REQUIRE(test::run_pgsim(net + " -q -o " + dir.file("plain.txt"), dir.file("plain.log")) == kExitOk);
  std::string text = test::read_text(dir.file("plain.txt"));
  REQUIRE(text.size() > 20);
  return text;
}

fs::perms mode_of(const std::string& path) { return fs::status(path).permissions(); }

bool no_temporaries_in(const test::TempDir& dir) {
  for (auto& entry : fs::recursive_directory_iterator(dir.file(".")))
    if (entry.path().filename().string().find(".tmp") != std::string::npos) return false;
  return true;
}

// Reads everything written into `path` (a FIFO) by one writer, on a thread of its own.
class FifoReader {
 public:
  explicit FifoReader(std::string path) : path_(std::move(path)), thread_([this] { text_ = test::read_text(path_); }) {}
  // Joins the reader; if no writer ever came, opens the FIFO for writing once so its open returns.
  std::string finish() {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);  // fails (ENXIO) unless the reader still waits
    if (fd >= 0) ::close(fd);
    thread_.join();
    return text_;
  }

 private:
  std::string path_, text_;
  std::thread thread_;
};

// A Unix stream socket at `path` that accepts one connection and reads it to the end.
class SocketReader {
 public:
  explicit SocketReader(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    thread_ = std::thread([this] {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 60000) != 1) return;  // no writer within a minute: the test fails on the text
      const int client = ::accept(fd_, nullptr, nullptr);
      char block[1 << 16];
      for (ssize_t n; (n = ::read(client, block, sizeof block)) > 0;) text_.append(block, static_cast<size_t>(n));
      ::close(client);
    });
  }
  std::string finish() {
    thread_.join();
    ::close(fd_);
    return text_;
  }

 private:
  int fd_;
  std::string text_;
  std::thread thread_;
};

bool root() { return ::geteuid() == 0; }

// A character device node (major, minor) at `path`, usable here: false where this process may
// not make one (not root, no CAP_MKNOD) or may not open it (a nodev mount, a device cgroup).
bool make_device(const std::string& path, unsigned major, unsigned minor) {
  if (!root() || ::mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) != 0) return false;
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

TEST_CASE("an existing regular file is replaced atomically and keeps its mode (and owner as root)", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  const std::string out = dir.write("v.txt", "earlier\n");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  if (root()) REQUIRE(::chown(out.c_str(), 65534, 65534) == 0);
  REQUIRE(test::run_pgsim(net + " -o " + out, dir.file("log")) == kExitOk);
  CHECK(test::read_text(out) == expected);
  CHECK(mode_of(out) == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  if (root()) {
    struct stat st {};
    REQUIRE(::stat(out.c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
    CHECK(st.st_gid == 65534);
  }
  CHECK(no_temporaries_in(dir));
}

TEST_CASE("a file of many write-back rounds comes out whole, and nothing shows before commit", "[output]") {
  test::TempDir dir;
  const std::string out = dir.write("big.txt", "earlier\n");
  std::string piece(size_t(3) << 20, '\0');  // 3 MB pieces, 70 MB: two writes back started early
  std::string expected;
  {
    OutputFile file(out);
    for (int k = 0; k < 23; ++k) {
      for (size_t i = 0; i < piece.size(); ++i) piece[i] = char('a' + (i * 7 + size_t(k)) % 26);
      file.write(piece);
      expected += piece;
    }
    CHECK(test::read_text(out) == "earlier\n");  // the target is untouched until commit
    file.commit();
  }
  CHECK(test::read_text(out) == expected);
  CHECK(no_temporaries_in(dir));
}

namespace {

// Whether this process holds a descriptor of the file (dev, ino), deleted or not.
bool holds_file(dev_t dev, ino_t ino) {
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a replaced file is released after the rename on a thread of its own; a second link keeps it", "[output]") {
  test::TempDir dir;
  const std::string out = dir.write("v.txt", std::string(size_t(1) << 20, 'x'));
  struct stat old {};
  REQUIRE(::stat(out.c_str(), &old) == 0);
  SECTION("its last link: no descriptor of it stays") {
    {
      OutputFile file(out);
      file.write("new\n");
      file.commit();
    }
    CHECK(test::read_text(out) == "new\n");
    bool held = true;  // the release runs beside the caller: give it a few seconds
    for (int k = 0; k < 500 && held; ++k) {
      held = holds_file(old.st_dev, old.st_ino);
      if (held) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK_FALSE(held);
  }
  SECTION("another link: that link still reads the earlier bytes") {
    const std::string other = dir.file("kept.txt");
    REQUIRE(::link(out.c_str(), other.c_str()) == 0);
    {
      OutputFile file(out);
      file.write("new\n");
      file.commit();
    }
    CHECK(test::read_text(out) == "new\n");
    CHECK(test::read_text(other) == std::string(size_t(1) << 20, 'x'));
    CHECK_FALSE(holds_file(old.st_dev, old.st_ino));  // not held at all: the rename frees nothing
  }
  CHECK(no_temporaries_in(dir));
}

TEST_CASE("symbolic links are written through: the link stays, its final target is replaced", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  fs::create_directories(dir.file("sub"));
  const std::string target = dir.write("sub/target.txt", "earlier\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);

  SECTION("one link, relative") {
    fs::create_symlink("sub/target.txt", dir.file("link.txt"));
    REQUIRE(test::run_pgsim(net + " -o " + dir.file("link.txt"), dir.file("log")) == kExitOk);
    CHECK(fs::is_symlink(dir.file("link.txt")));
    CHECK(fs::read_symlink(dir.file("link.txt")) == "sub/target.txt");
  }
  SECTION("a chain: absolute, then relative to the second link's own folder") {
    fs::create_symlink("target.txt", dir.file("sub/second"));
    fs::create_symlink(dir.file("sub/second"), dir.file("first"));
    REQUIRE(test::run_pgsim(net + " -o " + dir.file("first"), dir.file("log")) == kExitOk);
    CHECK(fs::is_symlink(dir.file("first")));
    CHECK(fs::is_symlink(dir.file("sub/second")));
  }
  SECTION("--json and --export-system through links as well") {
    fs::create_symlink("sub/target.txt", dir.file("run.json"));
    fs::create_symlink("sub/target.txt", dir.file("p.b.mtx"));
    REQUIRE(test::run_pgsim(net + " -q --json " + dir.file("run.json") + " --export-system " + dir.file("p") +
                                " --export-only", dir.file("log")) == kExitOk);
    CHECK(fs::is_symlink(dir.file("run.json")));
    CHECK(fs::is_symlink(dir.file("p.b.mtx")));
    // --json is written last: the target holds the summary.
    CHECK(nlohmann::json::parse(test::read_text(target))["nodes"] == 3);
    return;
  }
  INFO(test::read_text(dir.file("log")));
  CHECK(test::read_text(target) == expected);
  CHECK(mode_of(target) == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  CHECK(no_temporaries_in(dir));
}

TEST_CASE("a dangling symbolic link: its target is created", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  fs::create_symlink("new.txt", dir.file("dangling"));
  REQUIRE(test::run_pgsim(net + " -o " + dir.file("dangling"), dir.file("log")) == kExitOk);
  CHECK(fs::is_symlink(dir.file("dangling")));
  CHECK(test::read_text(dir.file("new.txt")) == expected);
  // A link into a missing folder is the missing folder's error.
  fs::create_symlink("nothere/new.txt", dir.file("into_nothing"));
  CHECK(test::run_pgsim(net + " -o " + dir.file("into_nothing"), dir.file("log")) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")),
             Catch::Contains("cannot write '" + dir.file("into_nothing") + "': No such file or directory"));
  CHECK(fs::is_symlink(dir.file("into_nothing")));
  // A loop of links.
  fs::create_symlink("loop_b", dir.file("loop_a"));
  fs::create_symlink("loop_a", dir.file("loop_b"));
  CHECK(test::run_pgsim(net + " -o " + dir.file("loop_a"), dir.file("log")) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("Too many levels of symbolic links"));
  CHECK(no_temporaries_in(dir));
}

TEST_CASE("a FIFO is written directly, and the early check neither blocks nor ends the reader's input", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  FifoReader reader(fifo);
  const int code = test::run_pgsim(net + " -o " + fifo, dir.file("log"));
  INFO(test::read_text(dir.file("log")));
  CHECK(code == kExitOk);
  CHECK(reader.finish() == expected);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));

  // The reader leaves before the end: a write error (EPIPE), exit 4, not a silent death by SIGPIPE.
  // The voltages (about 1.6 MB) exceed any pipe's capacity (at most 1 MB on Linux), so pgsim is
  // still writing when the reader has gone, whichever of the two runs first after the open.
  std::string ladder = "V1 n0 0 1\nI1 n60000 0 1m\n";
  for (int i = 0; i < 60000; ++i)
    ladder += "R" + std::to_string(i) + " n" + std::to_string(i) + " n" + std::to_string(i + 1) + " 1\n";
  const std::string long_net = dir.write("ladder.sp", ladder);
  std::thread quitter([&] { ::close(::open(fifo.c_str(), O_RDONLY)); });
  CHECK(test::run_pgsim(long_net + " -o " + fifo, dir.file("log")) == kExitSystem);
  quitter.join();
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("cannot write '" + fifo + "': Broken pipe"));
}

TEST_CASE("a Unix socket is connected to and written directly", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  SocketReader reader(dir.file("sock"));
  CHECK(test::run_pgsim(net + " -o " + dir.file("sock"), dir.file("log")) == kExitOk);
  CHECK(reader.finish() == expected);
}

TEST_CASE("'-' is standard output, which then holds that file alone", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist), expected = plain_output(dir, net);
  const std::string out = dir.file("out"), err = dir.file("err");
  REQUIRE(test::run_pgsim(net + " -o - --profile --compare " + dir.file("plain.txt"), out, err) == kExitOk);
  CHECK(test::read_text(out) == expected);
  CHECK_THAT(test::read_text(err), Catch::Contains("IR drop:") && Catch::Contains("compare: 3 nodes matched") &&
                                       Catch::Contains("phase"));

  REQUIRE(test::run_pgsim(net + " --json - -o " + dir.file("v.txt"), out, err) == kExitOk);
  CHECK(nlohmann::json::parse(test::read_text(out))["nodes"] == 3);
  CHECK_THAT(test::read_text(err), Catch::Contains("IR drop:"));
  CHECK(test::read_text(dir.file("v.txt")) == expected);

  // /proc/self/fd/1 names the descriptor, not a file to replace.
  REQUIRE(test::run_pgsim(net + " -q -o /proc/self/fd/1", out, err) == kExitOk);
  CHECK(test::read_text(out) == expected);

  CHECK(test::run_pgsim(net + " -o - --json -", out, err) == kExitInput);
  CHECK_THAT(test::read_text(err), Catch::Contains("only one output can go to standard output"));
}

TEST_CASE("a character device is written, never replaced: null accepts, full is an error", "[output][root]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist);
  const std::string null = dir.file("null"), full = dir.file("full");
  if (!make_device(null, 1, 3) || !make_device(full, 1, 7)) {
    WARN("skipped: character devices cannot be made and opened here (needs root and device access)");
    return;
  }
  CHECK(test::run_pgsim(net + " -o " + null + " --json " + null, dir.file("log")) == kExitOk);
  CHECK(is_char_device(null));
  CHECK(test::run_pgsim(net + " -o " + full, dir.file("log")) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("cannot write '" + full + "': No space left on device"));
  CHECK(is_char_device(full));
  CHECK(no_temporaries_in(dir));
}

TEST_CASE("a read-only folder is exit 4 and the earlier file stays", "[output]") {
  test::TempDir dir;
  const std::string net = dir.write("a.sp", kNetlist);
  fs::create_directories(dir.file("ro"));
  const std::string kept = dir.write("ro/v.txt", "earlier result\n");
  fs::permissions(dir.file("ro"), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // Root writes anywhere: run pgsim as nobody then (util-linux setpriv), else skip.
  std::string as_user;
  if (root()) {
    if (std::system("command -v setpriv >/dev/null") != 0) {
      WARN("skipped: running as root without setpriv");
      return;
    }
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  const std::string cmd = as_user + "\"" + PGSIM_EXE + "\" " + net + " -o " + kept + " >" + dir.file("log") + " 2>&1";
  const int status = std::system(cmd.c_str());
  CHECK((WIFEXITED(status) ? WEXITSTATUS(status) : -1) == kExitSystem);
  CHECK_THAT(test::read_text(dir.file("log")), Catch::Contains("cannot write '" + kept + "': Permission denied"));
  CHECK(test::read_text(kept) == "earlier result\n");
  fs::permissions(dir.file("ro"), fs::perms::owner_all);
}

TEST_CASE("pgsim --version names the version, commit, build type, CUDA and OpenMP threads", "[output]") {
  test::TempDir dir;
  REQUIRE(test::run_pgsim("--version", dir.file("out"), dir.file("err")) == kExitOk);
  const std::string text = test::read_text(dir.file("out"));
  INFO(text);
  CHECK(std::regex_search(text, std::regex("^pgsim [0-9]+\\.[0-9]+\\.[0-9]+\n")));
  CHECK(std::regex_search(text, std::regex("\ncommit: +([0-9a-f]{12}(-dirty)?|unknown)\n")));
  CHECK(std::regex_search(text, std::regex("\nbuild type: +[A-Za-z]+\n")));
  CHECK(std::regex_search(text, std::regex("\nCUDA: +(not built|runtime [0-9]+\\.[0-9]+, driver [^;]+; .+)\n")));
  // The thread count is the one this run would use.
  REQUIRE(::setenv("OMP_NUM_THREADS", "3", 1) == 0);
  REQUIRE(test::run_pgsim("--version", dir.file("out"), dir.file("err")) == kExitOk);
  ::unsetenv("OMP_NUM_THREADS");
  CHECK_THAT(test::read_text(dir.file("out")), Catch::EndsWith("\nOpenMP:     3 threads\n"));
}

TEST_CASE("a 2 MB node name is cut in every table, whose columns stay aligned", "[output]") {
  test::TempDir dir;
  const std::string name = "n" + std::string(2 << 20, 'x');  // 2097153 characters
  // The long-named node has the worst drop (0.5 V; b's is 1/11 V).
  const std::string net = dir.write("long.sp", "V1 a 0 1\nR1 a " + name + " 1\nR2 " + name + " 0 1\nR3 a b 1\nR4 b 0 10\n");
  // A reference that gets the long node wrong (so it is among the worst) and lacks node b.
  const std::string ref = dir.write("ref.txt", "a 1\n" + name + " 0.4\n" + name + "y 0\n");
  REQUIRE(test::run_pgsim(net + " --compare " + ref + " --profile", dir.file("out"), dir.file("err")) == kExitOk);
  const std::string out = test::read_text(dir.file("out"));
  CHECK_THAT(out, Catch::Contains("n" + std::string(59, 'x') + "... (2097153 characters)"));
  CHECK_THAT(out, Catch::Contains("... (2097154 characters) (not in the netlist)"));
  std::istringstream lines(out);
  size_t table_width = 0;
  for (std::string line; std::getline(lines, line);) {
    INFO(line.substr(0, 200));
    CHECK(line.size() < 200);  // the fixed columns and a cut name (at most 85 bytes)
    // The IR-drop layer table: its header and every row have one width.
    if (line.rfind("layer ", 0) == 0 || line.rfind("all ", 0) == 0 || line.rfind("other ", 0) == 0) {
      if (table_width == 0) table_width = line.size();
      CHECK(line.size() == table_width);
      if (line.rfind("layer ", 0) != 0) CHECK_THAT(line, Catch::Contains("... (2097153 characters)"));
    }
  }
  CHECK(table_width > 0);
}

TEST_CASE("write_in_parallel hands over the serial text, in order, for any thread count", "[output][parallel]") {
  const int threads_before = omp_get_max_threads();
  auto format = [](size_t begin, size_t end, std::string& out) {
    for (size_t i = begin; i < end; ++i) out += std::to_string(i * i) + (i % 7 ? " " : "\n");
  };
  constexpr size_t kItems = 20000;
  std::string serial;
  format(0, kItems, serial);
  for (int threads : {1, 2, 8})
    for (size_t chunk : {size_t(3), size_t(7), size_t(4096), size_t(1000000)}) {
      INFO("threads " << threads << ", chunk " << chunk);
      omp_set_num_threads(threads);
      std::string text;
      size_t pieces = 0;
      write_in_parallel(kItems, chunk, format, [&](std::string_view piece) { text += piece, ++pieces; });
      CHECK(text == serial);
      CHECK(pieces == (kItems + chunk - 1) / chunk);
    }
  // A failing sink stops the writing and its exception comes out.
  omp_set_num_threads(4);
  size_t calls = 0;
  CHECK_THROWS_WITH(write_in_parallel(kItems, 100, format,
                                      [&](std::string_view) {
                                        if (++calls == 3) throw std::runtime_error("disk full");
                                      }),
                    "disk full");
  omp_set_num_threads(threads_before);
}

TEST_CASE("write_in_parallel_at places every chunk at its offset, and refuses a wrong size", "[output][parallel]") {
  const int threads_before = omp_get_max_threads();
  auto format = [](size_t begin, size_t end, std::string& out) {
    for (size_t i = begin; i < end; ++i) out += std::to_string(i * i) + (i % 7 ? " " : "\n");
  };
  auto size = [](size_t begin, size_t end) {
    uint64_t bytes = 0;
    for (size_t i = begin; i < end; ++i) bytes += std::to_string(i * i).size() + 1;
    return bytes;
  };
  constexpr size_t kItems = 20000;
  constexpr uint64_t kOffset = 5;
  std::string serial;
  format(0, kItems, serial);
  for (int threads : {1, 2, 8})
    for (size_t chunk : {size_t(3), size_t(4096), size_t(1000000)}) {
      INFO("threads " << threads << ", chunk " << chunk);
      omp_set_num_threads(threads);
      std::string text(kOffset + serial.size(), '#');
      std::mutex mutex;
      size_t pieces = 0;
      const uint64_t bytes = write_in_parallel_at(kItems, chunk, size, format, kOffset, [&](uint64_t at, std::string_view piece) {
        std::lock_guard<std::mutex> lock(mutex);
        REQUIRE(at + piece.size() <= text.size());
        text.replace(at, piece.size(), piece);
        ++pieces;
      });
      CHECK(bytes == serial.size());
      CHECK(text == std::string(kOffset, '#') + serial);
      CHECK(pieces == (kItems + chunk - 1) / chunk);
    }
  // A sizer that disagrees with its formatter would misplace every later chunk: an error instead.
  omp_set_num_threads(4);
  auto short_by_one = [&](size_t begin, size_t end) { return size(begin, end) - (begin == 300 ? 1 : 0); };
  CHECK_THROWS_AS(write_in_parallel_at(kItems, 100, short_by_one, format, 0, [](uint64_t, std::string_view) {}),
                  std::logic_error);
  omp_set_num_threads(threads_before);
}

TEST_CASE("write_voltages and the MatrixMarket writers give the same bytes on 1, 2 and 8 threads", "[output][parallel]") {
  const int threads_before = omp_get_max_threads();
  // A chain of 300k nodes (many chunks and rounds) with awkward values.
  constexpr size_t kNodes = 300000;
  std::string text = "V1 n1 0 1\n";
  for (size_t i = 1; i < kNodes; ++i) text += "R" + std::to_string(i) + " n" + std::to_string(i) + " N" + std::to_string(i + 1) + " 1\n";
  const Netlist netlist = parse_netlist_text(text, "chain.sp");
  REQUIRE(netlist.node_count() == kNodes + 1);
  std::vector<double> v = test::random_vector(netlist.node_count(), 7);
  // Values whose text is not 18 or 19 bytes (exponents beyond +-99, inf, nan) and ones near
  // those edges: voltage_lines_bytes sizes them without formatting.
  const double awkward[] = {0.0, -0.0, 1e-300, 4.9e-324, -1.7976931348623157e308, 1.0 / 3, 1.799829147142, -2.5e-7,
                            9.99999999999999e99, 1e100, 1e-90, 9.9999999999999e-91, -1e-99, 1e-100,
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::quiet_NaN()};
  for (size_t k = 0; k < std::size(awkward); ++k) v[1 + 1000 * k] = awkward[k];
  std::string serial;  // the format, one node after the other
  char number[64];
  for (uint32_t i = 1; i < netlist.node_count(); ++i) {
    serial += std::string(netlist.node_names[i]) + " ";
    serial.append(number, std::to_chars(number, number + sizeof number, v[i], std::chars_format::scientific, 12).ptr);
    serial += "\n";
  }
  CHECK_THAT(serial, Catch::Contains("n1 0.000000000000e+00\n"));
  const CsrMatrix G = grid_matrix(400, 300, 3);
  std::string matrix_serial, column_serial;
  test::TempDir dir;
  for (int threads : {1, 2, 8}) {
    INFO("threads " << threads);
    omp_set_num_threads(threads);
    write_voltages(dir.file("v.txt"), netlist, v);  // a regular file: lines placed by offset
    CHECK(test::read_text(dir.file("v.txt")) == serial);
    std::string ordered;  // what a device, FIFO or standard output gets
    format_voltage_lines(netlist.node_names, v.data(), 1, kNodes, [&](std::string_view t) { ordered += t; });
    CHECK(ordered == serial);
    CHECK(voltage_lines_bytes(netlist.node_names, v.data(), 1, 0, kNodes) == serial.size());
    std::string matrix, column;
    write_matrix_market(G, [&](std::string_view t) { matrix += t; });
    write_matrix_market(v, [&](std::string_view t) { column += t; });
    if (threads == 1) matrix_serial = matrix, column_serial = column;
    CHECK(matrix == matrix_serial);
    CHECK(column == column_serial);
  }
  omp_set_num_threads(threads_before);
}
