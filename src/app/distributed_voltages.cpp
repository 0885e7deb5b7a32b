#include "app/distributed_voltages.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "app/output_file.hpp"
#include "app/voltage_file.hpp"
#include "dist/collective_error.hpp"
#include "dist/step_log.hpp"
#include "mna/stopwatch.hpp"

namespace pgsim {
namespace {

constexpr int kTag = 1718;
constexpr size_t kMaxMessage = size_t(1) << 30;

// Rank 0 writes every rank's lines in rank order: its own, then what each other rank sends (its
// chunks, then an empty message). A failed write stops the writing but not the receiving, so
// that no rank is left in a send.
void write_through_rank0(OutputFile* out, const std::function<void(const TextSink&)>& lines, MPI_Comm comm) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  std::exception_ptr error;
  if (rank == 0) {
    try {
      lines([&](std::string_view text) { out->write(text); });
    } catch (...) {
      error = std::current_exception();
    }
    std::vector<char> buffer;
    for (int q = 1; q < ranks; ++q)
      for (;;) {
        MPI_Status status;
        MPI_Probe(q, kTag, comm, &status);
        int n = 0;
        MPI_Get_count(&status, MPI_BYTE, &n);
        buffer.resize(static_cast<size_t>(n));
        MPI_Recv(buffer.data(), n, MPI_BYTE, q, kTag, comm, MPI_STATUS_IGNORE);
        if (n == 0) break;
        if (!error) try {
            out->write(std::string_view(buffer.data(), buffer.size()));
          } catch (...) {
            error = std::current_exception();
          }
      }
    if (!error) try {
        out->commit();
      } catch (...) {
        error = std::current_exception();
      }
  } else {
    try {
      lines([&](std::string_view text) {
        for (size_t at = 0; at < text.size(); at += kMaxMessage)
          MPI_Send(text.data() + at, static_cast<int>(std::min(kMaxMessage, text.size() - at)), MPI_BYTE, 0, kTag, comm);
      });
    } catch (...) {
      error = std::current_exception();
    }
    MPI_Send(nullptr, 0, MPI_BYTE, 0, kTag, comm);
  }
  const int root = dist::lowest_rank_where(error != nullptr, comm);
  if (root < ranks) dist::throw_everywhere(comm, root, error);
}

}  // namespace

void write_voltages_distributed(const std::string& path, const dist::RankNetlist& netlist,
                                const std::vector<double>& owned_voltages, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const auto lines = [&](const TextSink& sink) {
    format_voltage_lines(netlist.owned_names, owned_voltages.data(), 0, netlist.owned(), sink);
  };
  std::unique_ptr<OutputFile> out;  // rank 0's; its destructor removes the temporary unless committed
  std::string temporary;
  dist::agree_on_failure(comm, [&] {
    if (owned_voltages.size() != netlist.owned())
      throw std::logic_error("write_voltages_distributed: " + std::to_string(owned_voltages.size()) + " voltages for " +
                             std::to_string(netlist.owned()) + " owned nodes");
    if (rank == 0) {
      out = std::make_unique<OutputFile>(path);
      temporary = out->temporary();
    }
  });
  uint64_t size = temporary.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  temporary.resize(size);
  MPI_Bcast(temporary.data(), static_cast<int>(size), MPI_CHAR, 0, comm);
  if (temporary.empty()) return write_through_rank0(out.get(), lines, comm);

  const NameTable& names = netlist.owned_names;
  Stopwatch watch;  // -v
  double seconds[4] = {};  // bytes counted, lines formatted and written, flushed (other ranks), committed (rank 0)
  uint64_t bytes = 0, offset = 0;
  dist::agree_on_failure(comm, [&] { bytes = voltage_lines_bytes(names, owned_voltages.data(), 0, 0, netlist.owned()); });
  MPI_Exscan(&bytes, &offset, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (rank == 0) offset = 0;  // MPI_Exscan leaves rank 0's result undefined
  seconds[0] = watch.lap();
  dist::agree_on_failure(comm, [&] {
    if (rank == 0) {
      format_voltage_lines_at(names, owned_voltages.data(), 0, netlist.owned(), offset,
                              [&](uint64_t at, std::string_view text) { out->write_at(at, text); });
      seconds[1] = watch.lap();
      return;
    }
    OutputFilePart part(path, temporary);
    format_voltage_lines_at(names, owned_voltages.data(), 0, netlist.owned(), offset,
                            [&](uint64_t at, std::string_view text) { part.write_at(at, text); });
    seconds[1] = watch.lap();
    part.flush();
    seconds[2] = watch.lap();
  });
  watch.lap();  // the wait for the slowest rank: in neither figure
  dist::agree_on_failure(comm, [&] {
    if (rank == 0) out->commit();
  });
  seconds[3] = watch.lap();
  dist::log_step(comm, fmt::format("voltages file on rank {}: {} bytes at offset {}, counted {:.3f} s, formatted and "
                                   "written {:.3f} s, flushed {:.3f} s, committed {:.3f} s (rank 0: flush to disk, "
                                   "rename)", rank, bytes, offset, seconds[0], seconds[1], seconds[2], seconds[3]));
}

}  // namespace pgsim
