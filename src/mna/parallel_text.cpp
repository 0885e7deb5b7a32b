#include "mna/parallel_text.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
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

uint64_t write_in_parallel_at(size_t count, size_t chunk_items, const ChunkSizer& size, const ChunkFormatter& format,
                              uint64_t offset, const PositionedSink& sink) {
  chunk_items = std::max<size_t>(chunk_items, 1);
  const size_t chunks = (count + chunk_items - 1) / chunk_items;
  const auto items = [&](size_t c) { return std::make_pair(c * chunk_items, std::min((c + 1) * chunk_items, count)); };
  std::vector<uint64_t> at(chunks + 1, 0);  // chunk c's bytes, then (prefix sum) its offset
  std::exception_ptr error;
  const auto record = [&error] {
#pragma omp critical(pgsim_parallel_text_error)
    if (!error) error = std::current_exception();
  };
#pragma omp parallel for schedule(static)
  for (size_t c = 0; c < chunks; ++c) {
    try {
      const auto [begin, end] = items(c);
      at[c + 1] = size(begin, end);
    } catch (...) {
      record();
    }
  }
  if (error) std::rethrow_exception(error);
  at[0] = offset;
  for (size_t c = 0; c < chunks; ++c) at[c + 1] += at[c];
#pragma omp parallel
  {
    std::string text;  // this thread's buffer, reused chunk after chunk
#pragma omp for schedule(dynamic, 1)
    for (size_t c = 0; c < chunks; ++c) {
      try {
        const auto [begin, end] = items(c);
        text.clear();
        text.reserve(at[c + 1] - at[c]);
        format(begin, end, text);
        if (text.size() != at[c + 1] - at[c])
          throw std::logic_error("write_in_parallel_at: items " + std::to_string(begin) + ".." + std::to_string(end) +
                                 " formatted to " + std::to_string(text.size()) + " bytes, sized as " +
                                 std::to_string(at[c + 1] - at[c]));
        sink(at[c], text);
      } catch (...) {
        record();
      }
    }
  }
  if (error) std::rethrow_exception(error);
  return at[chunks] - offset;
}

}  // namespace pgsim
