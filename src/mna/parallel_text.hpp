#pragma once
// Text output formatted on all threads (issue 13): items are cut into chunks, each thread formats
// whole chunks into its own buffer, and the buffers go to the sink in item order, while the next
// round of chunks is being formatted. The bytes are those of formatting the items one by one.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace pgsim {

// Receives the text in order, a chunk (about a megabyte) at a time; may throw.
using TextSink = std::function<void(std::string_view)>;
// Appends the text of items [begin, end) to `out`; must depend on nothing but those items.
using ChunkFormatter = std::function<void(size_t begin, size_t end, std::string& out)>;

// Items per chunk that give chunks of about a megabyte, for lines of about `line_bytes`.
constexpr size_t chunk_items_for(size_t line_bytes) { return ((size_t{1} << 20) + line_bytes - 1) / line_bytes; }

// Formats items [0, count) in chunks of `chunk_items` on omp_get_max_threads() threads and
// hands the text to `sink` in order. At most two rounds of 4 chunks per thread are held at
// once. An exception of the sink or of a formatter is rethrown here, after the threads stop.
void write_in_parallel(size_t count, size_t chunk_items, const ChunkFormatter& format, const TextSink& sink);

}  // namespace pgsim
