#pragma once
// The voltages file of a distributed run (issue 17): one file, byte for byte what write_voltages
// (app/voltage_file.hpp) writes for the same values in one process, written by every rank at
// once, no rank holding more than its own nodes' lines.
//
// How: each rank formats its owned nodes' lines (format_voltage_lines, on its threads) once to
// count their bytes; an MPI_Exscan gives each its offset. A regular target (app/output_file.hpp:
// new, existing, or behind symbolic links) gets one temporary beside it, made by rank 0; every
// rank formats its lines again and writes them at its offset (pwrite), flushes its part to disk,
// and once every rank has, rank 0 renames the temporary over the target. Any other target (a
// device, a FIFO, a socket, standard output) is written by rank 0 alone, in order: its own
// lines, then each other rank's, sent to it a chunk (about a megabyte) at a time.
//
// Failures: a failure on any rank (a full disk, a path that cannot be written, memory) throws
// the same exception on every rank (dist/collective_error.hpp) and leaves no output: the
// temporary is removed and the target untouched. A device or stream may have received part of
// the file (as in one process: it cannot be taken back).
//
// The temporary is written by several processes through their own descriptors: on one host, or
// on a file system that keeps writes of several hosts to disjoint byte ranges of one file
// (Lustre, GPFS; NFS does not promise it).
#include <mpi.h>

#include <string>
#include <vector>

#include "dist/rank_netlist.hpp"

namespace pgsim {

// Collective. owned_voltages[i] is the voltage of owned node i (global id netlist.first_node + i).
void write_voltages_distributed(const std::string& path, const dist::RankNetlist& netlist,
                                const std::vector<double>& owned_voltages, MPI_Comm comm);

}  // namespace pgsim
