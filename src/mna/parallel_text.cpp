#include "mna/parallel_text.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <vector>

namespace pgsim {

void write_in_parallel(size_t count, size_t chunk_items, const ChunkFormatter& format, const TextSink& sink) {
  chunk_items = std::max<size_t>(chunk_items, 1);
  const size_t chunks = (count + chunk_items - 1) / chunk_items;
  const size_t per_round = 4 * static_cast<size_t>(omp_get_max_threads());
  // `ready` holds the round formatted last, `next` the one being formatted; each buffer keeps
  // its capacity from round to round.
  std::vector<std::string> ready(per_round), next(per_round);
  std::exception_ptr error;
  for (size_t first = 0;; first += per_round) {
    const size_t n = first < chunks ? std::min(per_round, chunks - first) : 0;
#pragma omp parallel
    {
      // One thread writes the last round while the others start on this one (dynamic
      // schedule: the writer takes chunks too once it is done).
#pragma omp single nowait
      {
        try {
          for (const std::string& text : ready)
            if (!text.empty()) sink(text);
        } catch (...) {
#pragma omp critical(pgsim_parallel_text_error)
          if (!error) error = std::current_exception();
        }
      }
#pragma omp for schedule(dynamic, 1)
      for (size_t k = 0; k < n; ++k) {
        try {
          next[k].clear();
          const size_t begin = (first + k) * chunk_items;
          format(begin, std::min(begin + chunk_items, count), next[k]);
        } catch (...) {
#pragma omp critical(pgsim_parallel_text_error)
          if (!error) error = std::current_exception();
        }
      }
    }
    if (error) std::rethrow_exception(error);
    if (n == 0) return;  // the last round was written above
    for (size_t k = n; k < per_round; ++k) next[k].clear();
    std::swap(ready, next);
  }
}

}  // namespace pgsim
