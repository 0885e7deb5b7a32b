#pragma once
// The netlist read by every rank of an MPI job at once, each rank its own byte range, no rank
// holding the whole netlist (issue 17). The result is each rank's RankNetlist
// (dist/rank_netlist.hpp: the contract with the distributed reduction): together the ranks hold
// exactly what parse_netlist (parser/netlist.hpp) gives in one process, split.
//
// How:
// 1. Ranges. The top file (a regular, uncompressed file: standard input, pipes and gzip are
//    refused with an InputError) is cut at P - 1 places: rank r's range begins at the first
//    legal cut at or after r * size / P (a line start whose line is not a '+' continuation:
//    next_cut, parser/chunk_parser.hpp; 0 for rank 0) and ends where rank r + 1's begins. A
//    range may be empty. Each rank reads its range alone (pread) and parses it on all its
//    threads with the whole-file parser's code (parser/netlist_part.hpp), .include lines
//    included; or, where the caller's PartReader takes the range, on its GPU (a plain range of
//    a GPU run: app/distributed_run.cpp).
// 2. The first stop in file order: the lowest rank whose range holds an error or an .end line
//    (one MPI_Allreduce). Ranks after it contribute nothing. A first error is thrown on every
//    rank with the serial parse's text (file:line, the line counted in the whole file: an
//    MPI_Exscan of the ranges' line counts), after the warnings before it are logged.
// 3. Warnings: gathered to rank 0 in rank order and logged there by the serial parse's rules
//    (WarningRules: each unknown control line once, the first kMaxDuplicateWarnings duplicate
//    element names, then a summary), so rank 0 logs what one process would, except duplicates
//    whose two elements lie in different ranges (not detected: rank_netlist.hpp).
// 4. A netlist with no elements, or transient input (.tran, PULSE/PWL sources, .print: the
//    distributed run is DC only), is an InputError on every rank.
// 5. Node ids, as the serial parse numbers them (first appearance in file order): each rank
//    sends its names (in its first-appearance order) to their owners (rank hash % P, with
//    NameTable::hash); an owner keeps, per name, the first sender in rank order, which is the
//    first appearance; ranks count the names they see first (their owned nodes), an MPI_Exscan
//    numbers them, and each name's id goes back through its owner. Four all-to-all exchanges
//    (names to their owners, a first-appearance flag back, owned ids to the owners, every id
//    back), by dist/byte_exchange.hpp (64-bit counts); a rank's share for itself stays where it
//    is (OwnShare::kLeft), and every buffer is written on all threads, so that what runs on one
//    thread is MPI's copying of other ranks' shares. "0" and "gnd" are ground, id 0, sent
//    nowhere. Where every rank's reader left its names on its GPU, this step and the next run
//    there instead (dist/node_names_on_device.hpp), giving the same ids and names; and where
//    a reader left its elements there too, they are renumbered there and stay there
//    (dist/elements_on_device.hpp).
// 6. Ownership balanced: rank r owns ids [1 + r (N - 1) / P, 1 + (r + 1) (N - 1) / P) of the N
//    ids, and each rank sends the names of its first appearances to their owners (one slice of
//    its table per owner, in id order). First appearances are far from balanced (pgsim-gen writes
//    each net layer after layer, and later layers name nodes of earlier ones: on its 50M-node grid
//    rank 0 of 2 saw 63% of the nodes first), and a rank's nodes are its share of the reduction's
//    rows and of the voltages file, which the slowest rank's share bounds.
//
// Errors: every failure (a bad netlist, an unreadable file, memory) ends every rank with the same
// exception (dist/collective_error.hpp); no rank is left in a collective call.
//
// Memory: a rank holds its range's netlist (elements and element names as a one-process parse
// holds them for its whole file), its owned names, and while step 5 runs the exchange's buffers
// (freed before returning, with the local node table and its hash index): docs/distributed.md
// gives the bytes per node measured.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/node_names_on_device.hpp"
#include "dist/rank_netlist.hpp"
#include "parser/netlist.hpp"
#include "parser/netlist_part.hpp"

namespace pgsim::dist {

// Reads a rank's range [begin, end) into `part` as parse_netlist_part would, where it can (the
// GPU reader, gpu/gpu_parse.hpp); false leaves the range to parse_netlist_part. Must not throw.
// It may leave the part's node names on its device (`names`; the part's table then holds ground
// alone): step 5 numbers them there where every rank's are (dist/node_names_on_device.hpp), else
// brings them to the host. With its names it may leave the part's elements there too
// (`elements`; the part's array then empty): step 5 renumbers them there and the RankNetlist
// keeps them there (device_elements), or where the names come to the host, they do too.
using PartReader = std::function<bool(const std::string& path, uint64_t begin, uint64_t end,
                                      const ParseOptions& options, NetlistPart& part,
                                      std::unique_ptr<NodeNamesOnDevice>& names,
                                      std::shared_ptr<ElementsOnDevice>& elements)>;

// Collective over `comm`. `options` applies to each rank's parse (block and chunk sizes, and
// progress, called with the rank's bytes read and its range's size). `split_at` is for tests:
// when not empty, one byte offset per rank, non-decreasing, the first 0: rank r's range
// begins at the first legal cut at or after split_at[r] instead of r * size / P. `read_part`,
// when given, is asked first for each rank's range (step 1).
RankNetlist parse_distributed(const std::string& path, MPI_Comm comm, const ParseOptions& options = {},
                              const std::vector<uint64_t>& split_at = {}, const PartReader& read_part = {});

}  // namespace pgsim::dist
