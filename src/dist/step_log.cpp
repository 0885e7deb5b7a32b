#include "dist/step_log.hpp"

#include <spdlog/spdlog.h>

#include <vector>

#include "dist/record_exchange.hpp"

namespace pgsim::dist {
namespace {

bool every_rank = false;  // share_step_log found rank 0 at debug level

}  // namespace

void share_step_log(MPI_Comm comm) {
  int verbose = spdlog::should_log(spdlog::level::debug) ? 1 : 0;
  MPI_Bcast(&verbose, 1, MPI_INT, 0, comm);
  every_rank = verbose != 0;
}

void log_step(MPI_Comm comm, const std::string& line) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (!every_rank) {
    if (rank == 0) spdlog::debug("{}", line);
    return;
  }
  const int size = record_count(line.size());
  std::vector<int> sizes(rank == 0 ? size_t(ranks) : 0);
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm);
  std::vector<int> at = rank == 0 ? displacements(sizes) : std::vector<int>();
  std::string all(rank == 0 ? size_t(at.back()) + size_t(sizes.back()) : 0, '\0');
  MPI_Gatherv(line.data(), size, MPI_CHAR, all.data(), sizes.data(), at.data(), MPI_CHAR, 0, comm);
  for (size_t q = 0; rank == 0 && q < size_t(ranks); ++q)
    spdlog::debug("{}", std::string_view(all).substr(size_t(at[q]), size_t(sizes[q])));
}

}  // namespace pgsim::dist
