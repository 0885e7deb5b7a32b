#include "app/thread_budget.hpp"

#include "parser/netlist_input.hpp"

#include <omp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace pgsim {

int threads_for(uint64_t work, uint64_t per_thread, int cap) {
  const uint64_t wanted = per_thread > 0 ? work / per_thread + (work % per_thread != 0) : uint64_t(cap);
  return int(std::clamp<uint64_t>(wanted, 1, uint64_t(std::max(cap, 1))));
}

RankThreads rank_threads(int host_cores, int host_ranks, int allowed_cores, bool spare_core) {
  const int cores = std::max(host_cores, 1), ranks = std::max(host_ranks, 1);
  int share = std::max(cores / ranks, 1);
  if (spare_core && ranks > 1 && share > 1) --share;  // the rank's own threads' core (the header says why)
  return {std::clamp(allowed_cores, 1, share), share};
}

std::optional<uint64_t> netlist_text_bytes(const std::string& path) {
  std::error_code ec;
  if (path == "-" || !std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  char first[2];
  in.read(first, 2);
  if (gzip_magic(first, size_t(in.gcount()))) return std::nullopt;  // gzip: the text is larger than the file
  return uint64_t(bytes);
}

ThreadCountScope::ThreadCountScope() : cap_(omp_get_max_threads()) {}

ThreadCountScope::~ThreadCountScope() { omp_set_num_threads(cap_); }

int ThreadCountScope::limit_to(uint64_t work, uint64_t per_thread, int busy_cores) {
  // Without a busy core the cap alone counts: --threads may ask for more threads than cores (tests do).
  const int cap = busy_cores > 0 ? std::min(cap_, omp_get_num_procs() - busy_cores) : cap_;
  const int threads = threads_for(work, per_thread, cap);
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace pgsim
