// Run under mpirun by tests/test_dist_parse.cpp: the distributed parse (dist/distributed_parse.hpp)
// and the distributed voltages file (app/distributed_voltages.hpp) against one process's.
//
//   dist_parse_check parse FILE [--random N] [--at O1,O2,...] [--no-default] [--small-chunks] [--no-warnings]
//     parses FILE with the default cuts (unless --no-default), at the given offsets (one per
//     rank, the first 0; --at lists for other rank counts are skipped), and
//     at N random sets of offsets (the same on every rank: a fixed seed), and checks every time
//     that the ranks' elements, in rank order, are the serial parse's (kind, global node ids,
//     value, name, file:line), that the owned names in rank order are the serial node names
//     (each rank an equal share), that first_node and total_nodes agree, that bytes read add
//     up, and (unless --no-warnings) that rank 0's warnings are the serial parse's.
//     --small-chunks: each rank's parse in tiny blocks and chunks too. --gpu-ranks K (a build
//     with CUDA): ranks below K read their ranges on a GPU (rank r on device r mod the devices),
//     their node names left there (dist/node_names_on_device.hpp): with K = the ranks, the node
//     ids are numbered on the GPUs; with fewer, the names come down for the host's numbering.
//     --keep-elements (with --gpu-ranks): those ranks' readers leave their elements on the GPU
//     too (dist/elements_on_device.hpp), renumbered there where the ids are numbered there, else
//     brought down; the check reads them from there.
//     --failing-device: every rank's reader reads on the CPU but hands its node names and
//     elements over as if left on a device whose numbering fails on the last rank
//     (FailingDeviceNames, HostHeldElements): the parse must bring the elements down and number
//     the names on the host instead, with the same ids.
//     Prints "FAIL ..." per failed check; exit 1 on any.
//   dist_parse_check error FILE...
//     parses each FILE: every rank prints "rank R: FILE: WHAT" for an error, "rank R: FILE: no
//     error" otherwise; exit 2 when any failed.
//   dist_parse_check write FILE OUT SERIAL
//     writes made-up voltages of FILE's nodes to OUT (distributed) and, on rank 0, the same
//     values through write_voltages to SERIAL; a failure prints "rank R: write: WHAT", exit 2.
//   dist_parse_check exchange
//     exchange_bytes (dist/byte_exchange.hpp) of random sizes, in messages (and direct reads) of
//     1, 7 and the default bytes at most (then shares of up to 5 MB), with SameHost::kDirectReads
//     and kMessages: every byte arrives where it belongs; with OwnShare::kLeft, the own share's
//     place is left as it was and ReceivedView reads every byte where it is. host_peers
//     (dist/direct_reads.hpp) gives every rank's process id, and rank 0 prints whether the ranks
//     read each other directly. Then the same on a communicator where the last rank counts as
//     refused by the kernel: no rank reads directly there, and every byte still arrives.
#include <mpi.h>
#include <omp.h>
#include <unistd.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/distributed_voltages.hpp"
#include "app/voltage_file.hpp"
#include "dist/byte_exchange.hpp"
#include "dist/direct_reads.hpp"
#include "dist/distributed_parse.hpp"
#include "parser/netlist_input.hpp"
#ifdef PGSIM_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "gpu/gpu_parse.hpp"
#endif

using namespace pgsim;
using namespace pgsim::dist;

namespace {

int rank = 0, ranks = 1;
int failures = 0;

template <class... Args>
void fail(const char* format, Args... args) {
  ++failures;
  std::printf("FAIL rank %d: ", rank);
  std::printf(format, args...);
  std::printf("\n");
}

std::string describe(const std::vector<uint64_t>& at) {
  std::string s;
  for (uint64_t o : at) s += (s.empty() ? "" : ",") + std::to_string(o);
  return s.empty() ? "default cuts" : "offsets " + s;
}

// One distributed parse of `path` checked against the serial `serial`.
void check_parse(const std::string& path, const Netlist& serial, const std::vector<uint64_t>& at,
                 const ParseOptions& options, bool warnings, const PartReader& reader) {
  const std::string config = describe(at) + (options.chunk_bytes ? " (small chunks)" : "") + (reader ? " (GPU reader)" : "");
  RankNetlist rn;
  try {
    rn = parse_distributed(path, MPI_COMM_WORLD, options, at, reader);
  } catch (const std::exception& e) {
    fail("%s: threw %s", config.c_str(), e.what());
    return;
  }
  const char* c = config.c_str();
  if (rn.rank != rank || rn.ranks != ranks) fail("%s: rank %d of %d", c, rn.rank, rn.ranks);
  if (rn.total_nodes != serial.node_count()) fail("%s: total_nodes %u, serial %u", c, rn.total_nodes, serial.node_count());
  // Owned runs follow each other, balanced: rank q's holds (N - 1) (q + 1) / P - (N - 1) q / P of
  // the N - 1 nodes other than ground, whichever range saw them first.
  uint32_t mine[2] = {rn.first_node, rn.owned()};
  std::vector<uint32_t> all(2 * ranks);
  MPI_Allgather(mine, 2, MPI_UINT32_T, all.data(), 2, MPI_UINT32_T, MPI_COMM_WORLD);
  uint32_t next = 1;
  const uint64_t nodes = serial.node_count() - 1;
  for (int q = 0; q < ranks; ++q) {
    if (all[2 * q] != next) fail("%s: rank %d's first_node %u, expected %u", c, q, all[2 * q], next);
    const uint64_t share = nodes * uint64_t(q + 1) / uint64_t(ranks) - nodes * uint64_t(q) / uint64_t(ranks);
    if (all[2 * q + 1] != share)
      fail("%s: rank %d owns %u nodes, expected %llu", c, q, all[2 * q + 1], static_cast<unsigned long long>(share));
    next = all[2 * q] + all[2 * q + 1];
  }
  if (next != serial.node_count()) fail("%s: owned nodes end at %u of %u", c, next, serial.node_count());
  for (uint32_t i = 0; i < rn.owned() && rn.first_node + i < serial.node_count(); ++i)
    if (rn.owned_names[i] != serial.node_names[rn.first_node + i]) {
      fail("%s: owned name %u is '%s', serial '%s'", c, i, std::string(rn.owned_names[i]).c_str(),
           std::string(serial.node_names[rn.first_node + i]).c_str());
      break;
    }
  // Elements: this rank's run of the serial list, read from the device where they were left there.
  if (rn.device_elements && !rn.elements.empty()) fail("%s: elements both on the host and on a device", c);
  FillVector<Element> held;
  if (rn.device_elements) rn.device_elements->download(held);
  const FillVector<Element>& elements = rn.device_elements ? held : rn.elements;
  uint64_t count = elements.size(), before = 0, total = 0;
  MPI_Exscan(&count, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&count, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) before = 0;
  if (total != serial.elements.size()) fail("%s: %llu elements in all, serial %zu", c, (unsigned long long)total, serial.elements.size());
  for (uint64_t k = 0; k < count && before + k < serial.elements.size(); ++k) {
    const Element& a = elements[k];
    const Element& b = serial.elements[before + k];
    const std::string wa = rn.where(a.where()), wb = serial.where(b.where());
    if (a.kind != b.kind || a.plus != b.plus || a.minus != b.minus || std::memcmp(&a.value, &b.value, sizeof a.value) != 0 ||
        wa != wb || rn.element_names[uint32_t(k)] != serial.element_names[uint32_t(before + k)]) {
      fail("%s: element %llu is %s %u %u %.17g at %s, serial %s %u %u %.17g at %s", c, (unsigned long long)(before + k),
           std::string(rn.element_names[uint32_t(k)]).c_str(), a.plus, a.minus, a.value, wa.c_str(),
           std::string(serial.element_names[uint32_t(before + k)]).c_str(), b.plus, b.minus, b.value, wb.c_str());
      break;
    }
  }
  if (rn.files.empty() || rn.files[0] != path) fail("%s: files[0] is not the netlist", c);
  uint64_t bytes = rn.bytes_read;
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (bytes != serial.bytes_read) fail("%s: %llu bytes read in all, serial %llu", c, (unsigned long long)bytes, (unsigned long long)serial.bytes_read);
  if (warnings && rank == 0 && rn.warnings != serial.warnings) {
    fail("%s: %zu warnings, serial %zu", c, rn.warnings.size(), serial.warnings.size());
    for (const std::string& w : rn.warnings) std::printf("  distributed: %s\n", w.c_str());
    for (const std::string& w : serial.warnings) std::printf("  serial: %s\n", w.c_str());
  }
  if (rank != 0 && !rn.warnings.empty()) fail("%s: warnings on a rank other than 0", c);
}

// Elements "left on a device" with FailingDeviceNames: held on the host, in local ids.
class HostHeldElements final : public ElementsOnDevice {
 public:
  explicit HostHeldElements(FillVector<Element> elements) : elements_(std::move(elements)) {}
  uint64_t count() const override { return elements_.size(); }
  Element at(uint64_t k) const override { return elements_.at(k); }
  void download(FillVector<Element>& out) const override { out = elements_; }

 private:
  FillVector<Element> elements_;
};

// Node names "left on a device" whose numbering fails on the last rank, inside the agreement
// (as a device's failure would), and come down on request: held on the host.
class FailingDeviceNames final : public NodeNamesOnDevice {
 public:
  explicit FailingDeviceNames(NameTable names) : names_(std::move(names)) {}
  uint32_t count() const override { return names_.size() - 1; }
  void download(NameTable& names) override {
    for (uint32_t k = 1; k < names_.size(); ++k) names.intern(names_[k]);
  }
  NodeNumbering number(const RankExchange& exchange, ElementsOnDevice*, uint32_t) override {
    exchange.agree([&] {
      if (exchange.rank == exchange.ranks - 1) throw std::runtime_error("a made-up device failure");
    });
    return {};
  }

 private:
  NameTable names_;  // ground first, as the part's table was
};

std::vector<uint64_t> parse_offsets(const std::string& list) {
  std::vector<uint64_t> at;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) at.push_back(std::stoull(item));
  return at;
}

int run_parse(int argc, char** argv) {
  const std::string path = argv[2];
  int random = 0;
  bool small = false, warnings = true;
  int gpu_ranks = 0;
  bool failing_device = false;
  [[maybe_unused]] bool keep_elements = false;  // --gpu-ranks only
  std::vector<std::vector<uint64_t>> configs = {{}};
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--random") random = std::stoi(argv[++i]);
    else if (a == "--at") configs.push_back(parse_offsets(argv[++i]));
    else if (a == "--small-chunks") small = true;
    else if (a == "--no-warnings") warnings = false;
    else if (a == "--no-default") configs.erase(configs.begin());
    else if (a == "--gpu-ranks") gpu_ranks = std::stoi(argv[++i]);
    else if (a == "--failing-device") failing_device = true;
    else if (a == "--keep-elements") keep_elements = true;
  }
  PartReader reader;
  if (failing_device)
    reader = [](const std::string& file, uint64_t begin, uint64_t end, const ParseOptions& options, NetlistPart& part,
                std::unique_ptr<NodeNamesOnDevice>& names, std::shared_ptr<ElementsOnDevice>& elements) {
      part = parse_netlist_part(file, begin, end, options);
      if (part.error) return true;
      names = std::make_unique<FailingDeviceNames>(std::move(part.netlist.node_names));
      part.netlist.node_names = Netlist().node_names;  // ground alone, as a reader that keeps its names leaves it
      elements = std::make_shared<HostHeldElements>(std::move(part.netlist.elements));
      FillVector<Element>().swap(part.netlist.elements);
      return true;
    };
#ifdef PGSIM_HAVE_CUDA
  int devices = 0;
  if (gpu_ranks > 0 && (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)) {
    fail("--gpu-ranks: no GPU");
    return 1;
  }
  if (rank < gpu_ranks)
    reader = [device = rank % std::max(devices, 1), keep_elements](
                 const std::string& file, uint64_t begin, uint64_t end, const ParseOptions& options, NetlistPart& part,
                 std::unique_ptr<NodeNamesOnDevice>& names, std::shared_ptr<ElementsOnDevice>& elements) {
      std::string why;
      return gpu::parse_netlist_part_on_gpu(file, begin, end, options, device, part, why, nullptr, &names,
                                            keep_elements ? &elements : nullptr);
    };
#else
  if (gpu_ranks > 0) {
    fail("--gpu-ranks: a build without CUDA");
    return 1;
  }
#endif
  const Netlist serial = parse_netlist(path);
  const uint64_t size = FileRangeInput(path, 0, 0).file_size();
  // Random offsets, the same on every rank; some repeat (empty ranges), some at the ends.
  std::mt19937_64 rng(12345);
  for (int k = 0; k < random; ++k) {
    std::vector<uint64_t> at(ranks);
    for (int q = 1; q < ranks; ++q) {
      const uint64_t pick = rng() % 8;
      at[q] = pick == 0 ? 0 : pick == 1 ? size : pick == 2 && q > 1 ? at[q - 1] : rng() % (size + 1);
    }
    std::sort(at.begin(), at.end());
    configs.push_back(at);
  }
  for (size_t k = 0; k < configs.size(); ++k) {
    if (!configs[k].empty() && configs[k].size() != size_t(ranks)) continue;
    check_parse(path, serial, configs[k], {}, warnings, reader);
    if (small) {
      ParseOptions tiny;
      tiny.block_bytes = 97;
      tiny.chunk_bytes = 13;
      check_parse(path, serial, configs[k], tiny, warnings, reader);
    }
  }
  return 0;
}

int run_error(int argc, char** argv) {
  int code = 0;
  for (int i = 2; i < argc; ++i) try {
      parse_distributed(argv[i], MPI_COMM_WORLD);
      std::printf("rank %d: %s: no error\n", rank, argv[i]);
    } catch (const std::exception& e) {
      std::printf("rank %d: %s: %s\n", rank, argv[i], e.what());
      code = 2;
    }
  return code;
}

// Made-up voltages: signs, zeros and exponents of every size.
double value_of(uint32_t id) {
  if (id % 11 == 0) return 0;
  return std::sin(id * 0.7) * std::pow(10.0, int(id % 9) - 4);
}

int run_write(char** argv) {
  try {
    const RankNetlist rn = parse_distributed(argv[2], MPI_COMM_WORLD);
    std::vector<double> v(rn.owned());
    for (uint32_t i = 0; i < rn.owned(); ++i) v[i] = value_of(rn.first_node + i);
    write_voltages_distributed(argv[3], rn, v, MPI_COMM_WORLD);
  } catch (const std::exception& e) {
    std::printf("rank %d: write: %s\n", rank, e.what());
    return 2;
  }
  if (rank == 0) {
    const Netlist serial = parse_netlist(argv[2]);
    std::vector<double> v(serial.node_count());
    for (uint32_t id = 0; id < serial.node_count(); ++id) v[id] = value_of(id);
    write_voltages(argv[4], serial, v);
  }
  return 0;
}

// exchange_bytes' cases on comm (the same sizes and bytes on every call: rng's seed).
void check_exchanges(MPI_Comm comm);

void run_exchange() {
  const HostPeers& peers = host_peers(MPI_COMM_WORLD);
  std::vector<int64_t> pids(size_t(ranks), 0);
  const int64_t pid = getpid();
  MPI_Allgather(&pid, 1, MPI_INT64_T, pids.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  for (int q = 0; q < ranks; ++q)
    if (peers.pid[size_t(q)] != pids[size_t(q)])
      fail("host_peers: rank %d's process id %lld, not %lld", q, (long long)peers.pid[size_t(q)], (long long)pids[size_t(q)]);
  if (!peers.local[size_t(rank)]) fail("host_peers: this rank is not on its own host");
  if (rank == 0) std::printf("direct reads between ranks of one host: %s\n", peers.readable ? "yes" : "no");
  check_exchanges(MPI_COMM_WORLD);
  // One rank refused: no rank reads directly, and the exchanges go through messages.
  MPI_Comm refused;
  MPI_Comm_dup(MPI_COMM_WORLD, &refused);
  if (host_peers(refused, rank != ranks - 1).readable) fail("host_peers: direct reads with rank %d refused", ranks - 1);
  check_exchanges(refused);
  MPI_Comm_free(&refused);
}

void check_exchanges(MPI_Comm comm) {
  std::mt19937_64 rng(777);
  for (SameHost same_host : {SameHost::kDirectReads, SameHost::kMessages}) {
    for (uint64_t max_message : {uint64_t(1), uint64_t(7), kMaxMessageBytes}) {
      // sizes[p][q]: bytes from p to q, the same table on every rank; byte i of p's data for q is (p, q, i) hashed.
      // With the default size, shares of several MB: direct reads of several pieces (1 MB) each.
      const uint64_t largest = max_message == kMaxMessageBytes ? 5000000 : 3000;
      std::vector<std::vector<uint64_t>> sizes(ranks, std::vector<uint64_t>(ranks));
      for (auto& row : sizes)
        for (uint64_t& s : row) s = rng() % 4 == 0 ? 0 : rng() % largest;
      const auto byte = [](int p, int q, uint64_t i) { return char((p * 131 + q * 17 + i * 7) % 251); };
      std::vector<uint64_t> send_counts(sizes[rank]);
      std::string send;
      for (int q = 0; q < ranks; ++q)
        for (uint64_t i = 0; i < sizes[rank][q]; ++i) send += byte(rank, q, i);
      const std::vector<uint64_t> recv_counts = exchange_counts(send_counts, comm);
      uint64_t total = 0;
      for (int p = 0; p < ranks; ++p) {
        if (recv_counts[p] != sizes[p][rank]) fail("exchange_counts: %llu from %d, expected %llu", (unsigned long long)recv_counts[p], p, (unsigned long long)sizes[p][rank]);
        total += recv_counts[p];
      }
      for (OwnShare own : {OwnShare::kCopied, OwnShare::kLeft}) {
        // A byte no sender writes ((p * 131 + q * 17 + i * 7) % 251 < 251): with kLeft, the own share's place keeps it.
        const char unwritten = char(251);
        std::string recv(total, unwritten);
        exchange_bytes(send.data(), send_counts, recv.data(), recv_counts, comm, own, max_message, same_host);
        const ReceivedView<char> view(send.data(), send_counts, recv.data(), recv_counts, rank);
        const char* name = own == OwnShare::kLeft ? "left" : "copied";
        const char* how = same_host == SameHost::kDirectReads ? "direct reads" : "messages";
        uint64_t at = 0;
        for (int p = 0; p < ranks; ++p)
          for (uint64_t i = 0; i < sizes[p][rank]; ++i, ++at) {
            const char want = own == OwnShare::kLeft && p == rank ? unwritten : byte(p, rank, i);
            if (recv[at] != want || view[at] != byte(p, rank, i)) {
              fail("exchange_bytes (%s of %llu, own share %s): byte %llu from rank %d", how, (unsigned long long)max_message,
                   name, (unsigned long long)i, p);
              p = ranks;
              break;
            }
          }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  spdlog::set_level(spdlog::level::off);  // warnings are compared through Netlist::warnings
  const std::string mode = argc > 1 ? argv[1] : "";
  int code = 0;
  try {
  if (mode == "parse" && argc > 2) code = run_parse(argc, argv);
  else if (mode == "error" && argc > 2) code = run_error(argc, argv);
  else if (mode == "write" && argc > 4) code = run_write(argv);
  else if (mode == "exchange") run_exchange();
  else {
    if (rank == 0) std::printf("usage: dist_parse_check parse|error|write|exchange ...\n");
    code = 2;
  }
  } catch (const std::exception& e) {  // of the serial side: the check itself cannot go on
    fail("%s", e.what());
  }
  int failed = failures;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (failed) code = 1;
  else if (rank == 0 && code == 0) std::printf("%s checks passed\n", mode.c_str());
  std::fflush(stdout);
  MPI_Finalize();
  return code;
}
