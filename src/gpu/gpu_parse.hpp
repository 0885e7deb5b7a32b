#pragma once
// A netlist read on the GPU (issue 13): for large plain netlists whose run solves on the GPU,
// where the host's parse is bound by memory traffic on all cores. The text goes to the device
// once; every line is parsed by its own thread; node names are interned in a device hash table
// and numbered by first appearance; the Netlist comes back exactly as parse_netlist() makes it:
// the same elements (ids, values, lines), node and element names, warnings and bytes_read.
//
// Contract: it reads only the plain form of large grids, and declines anything else for the CPU
// parser to read, which then gives the answer and any error: never another answer, only the
// CPU's slower one. It takes one regular file of plain text (no gzip, no UTF-8 byte-order mark)
// whose every line before the first .end is
//   - blank, a '*' comment (without a NUL byte), or a comment after ';' or a '$' token;
//   - an element line of exactly four fields, `R|V|I<name> <node> <node> <number>`, split as the
//     CPU parser splits them (blanks, ',', '\r', '\f' and '\v' separate), whose number is the plain
//     form digits[.digits][e[+-]digits] that one multiplication or division by a power of ten
//     reads exactly (parser/spice_value.cpp's read_plain_number; no unit suffix), and that the
//     CPU parser accepts as it is (a value in range, no negative resistance, no voltage source
//     forcing a voltage across one node);
//   - `.end`, or a control line that the CPU parser ignores without a warning (.op, .options, ...).
// A '+' continuation line, an .include, .tran or .print line, an unknown control line, a C or L
// element, a control byte, a line of 64 KiB or more, or a netlist without elements makes it
// decline. So does a lack of device memory for the text and its tables (about 5 bytes a text byte).
//
// Node names come back without a hash index (as after NameTable::drop_index()): a caller that
// looks names up (--compare) parses on the CPU.
#include <cstdint>
#include <memory>
#include <string>

#include "dist/elements_on_device.hpp"
#include "dist/node_names_on_device.hpp"
#include "parser/netlist.hpp"
#include "parser/netlist_part.hpp"

namespace pgsim::gpu {

// Where the time of a GPU parse went, in seconds (for -v).
struct GpuParseTimes {
  double upload = 0;    // the text read and copied to the device
  double lines = 0;     // lines found and parsed
  double names = 0;     // node and element names interned, ids given, arrays built (copies excluded)
  double download = 0;  // the netlist copied back to the host
  double finish = 0;    // the warnings of duplicate element names (found on the device) logged

  // "text read and copied 0.101 s, lines ...": the -v line's account of them.
  std::string text() const;
};

// Parses the regular file `path` (called `name` in messages) into `netlist`, a new Netlist.
// Returns false, with `why` saying what it met, when it declines; `netlist` is then unusable and
// must be replaced. Throws GpuError for a device failure. Of `options`, the progress callback
// counts (it is called with the bytes copied to the device so far) and dc_names_only: then only
// the names of the elements that merges_at_dc() and of the duplicates' later elements come back
// (names_thinned): on a generated grid, whose vias are 0 V sources, about a quarter of them.
bool parse_netlist_on_gpu(const std::string& path, const std::string& name, const ParseOptions& options,
                          Netlist& netlist, std::string& why, GpuParseTimes* times = nullptr);

// The byte range [begin, end) of the regular file `path` into `part`, as parse_netlist_part
// (parser/netlist_part.hpp) reads it for the distributed parse (dist/distributed_parse.hpp): the
// same netlist, lines, .end, warnings and duplicates, for a range whose every line is plain as
// above (a range is not a whole netlist: it may lack elements only where the CPU reads it). On
// device `device` (a rank's), which becomes the calling thread's. Declines, failures and
// dc_names_only as above. With `keep_names`, the part's node names stay on the device, given there
// (gpu/gpu_node_ids.hpp): the part's table then holds ground alone, its elements' local ids
// naming the kept names. With `keep_elements` too (not alone: std::logic_error), its elements
// stay there as well (gpu::DeviceElements, gpu/device_stamp.hpp; the part's array then empty),
// unless the range has duplicate element names, whose warnings read their lines: then they come
// back as without it, and *keep_elements stays null.
bool parse_netlist_part_on_gpu(const std::string& path, uint64_t begin, uint64_t end, const ParseOptions& options,
                               int device, NetlistPart& part, std::string& why, GpuParseTimes* times = nullptr,
                               std::unique_ptr<dist::NodeNamesOnDevice>* keep_names = nullptr,
                               std::shared_ptr<dist::ElementsOnDevice>* keep_elements = nullptr);

// The same for text in memory (tests).
bool parse_netlist_text_on_gpu(const std::string& text, const std::string& name, Netlist& netlist, std::string& why,
                               const ParseOptions& options = {});

}  // namespace pgsim::gpu
