#pragma once
// Text output formatted on all threads (issue 13): items are cut into chunks, each thread formats
// whole chunks into its own buffer, and the buffers go to the sink in item order, while the next
// round of chunks is being formatted. The bytes are those of formatting the items one by one.
// Where the sink can take text at any offset (a regular file) and each chunk's size is known
// before it is formatted, write_in_parallel_at lets every thread hand over its own chunks.
#include <cstddef>
#include <cstdint>
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

// Receives the text that goes at `offset`; called from several threads at once, for disjoint ranges.
using PositionedSink = std::function<void(uint64_t offset, std::string_view text)>;
// The exact number of bytes the formatter gives for items [begin, end).
using ChunkSizer = std::function<uint64_t(size_t begin, size_t end)>;

// The text of write_in_parallel, each chunk handed to `sink` at `offset` plus the bytes of the
// chunks before it, by the thread that formatted it, as soon as it is formatted: no thread waits
// for another's chunk and no text is held beyond a chunk per thread. `size` must agree with
// `format`: a chunk whose text has another size throws std::logic_error (a wrong offset would
// corrupt the output silently). Returns the bytes of all chunks. An exception of the sink, the
// sizer or a formatter is rethrown here, after the threads stop; chunks after it may have been written.
uint64_t write_in_parallel_at(size_t count, size_t chunk_items, const ChunkSizer& size, const ChunkFormatter& format,
                              uint64_t offset, const PositionedSink& sink);

}  // namespace pgsim
