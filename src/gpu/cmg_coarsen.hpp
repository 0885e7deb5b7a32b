#pragma once
// CMG levels coarsened on the device: the clustering (cmg/clustering.hpp) and the Galerkin product
// (cmg/galerkin.hpp) of a level, level 0 being the Laplacian of G extended by the ground vertex,
// made by kernels from G's device copy. The whole hierarchy's build on the device
// (gpu/cmg_build.hpp) coarsens every level so; coarsen_level0_on_device returns level 0's to the
// host, where the builder makes the coarser levels from them (CmgOptions::coarsen_level0,
// cmg/builder.hpp: the Gauss-Seidel hierarchy, a CSR copy of its own where the SpMV keeps none).
// Bit for bit the host's:
//  - every sum (a row's excess and weighted degree, a forest weight, a coarse entry, a coarse
//    diagonal) is one thread's, in the host's order;
//  - the clustering's decisions depend only on the values, not on the order threads take them
//    (the tall trees are cut in rounds of ready vertices, leaves first, as on the host);
//  - the coarse entries are gathered in the host's order (clusters' members ascending, each
//    member's columns ascending) and sorted stably, so equal columns sum in the same order.
// On the H100 machine (benchmarks/ibmpg/README.md, session 13) this took the hierarchy's build
// from 0.192 to 0.156 s on the 7.2M-node grid (level 0's host clustering and Galerkin product,
// 0.077 s on 16 cores, became 0.032 s: 12 ms of kernels, 16 ms copying the result back) and from
// 1.61 to 0.94 s on the 50M-node grid.
#include <cstdint>

#include "cmg/builder.hpp"
#include "gpu/device_buffer.hpp"

namespace pgsim::gpu {

// Host wall time of coarsen_level0_on_device's steps in seconds (each ends with the device idle).
struct DeviceCoarsenTimes {
  double laplacian = 0;   // level 0's off-diagonals made from G
  double clustering = 0;  // the clustering, `rounds` of it cutting the tall trees
  double galerkin = 0;    // the next level
  double copy = 0;        // both to the host
  int rounds = 0;
};

// Level 0 of the hierarchy of the SDD matrix G on the device: the Laplacian of G extended by the
// ground vertex (G.rows + 1 rows, the ground last), each row's off-diagonals in column order and
// no diagonal stored (the builder's GroundedSdd, cmg/laplacian.hpp, made explicit).
DeviceCsr grounded_laplacian_on_device(const DeviceCsrView& G);

// A level's coarsening left on the device: each row's cluster (numbered in the order of its first
// row) and the next level in that numbering (a Laplacian, diagonal stored).
struct DeviceCoarsening {
  DeviceBuffer<int32_t> cluster_of;
  int32_t clusters = 0;
  DeviceCsr coarse;
};

// cluster_vertices and galerkin_coarse (cmg/clustering.hpp, cmg/galerkin.hpp) of a level: the
// off-diagonals of `level`'s rows (a stored diagonal is passed over), bit for bit the host's.
// Adds to times' clustering, galerkin and rounds when not null. Throws as
// coarsen_level0_on_device.
DeviceCoarsening coarsen_on_device(const DeviceCsrView& level, DeviceCoarsenTimes* times = nullptr);

// Level 0's coarsening for the SDD matrix G (CmgOptions::coarsen_level0's contract): the
// clustering of its grounded Laplacian (G.rows + 1 vertices) and the next level. Throws GpuError
// on a CUDA failure; std::logic_error where the host's clustering would (a cycle in the forest).
// times: filled when not null.
LevelCoarsening coarsen_level0_on_device(const DeviceCsrView& G, DeviceCoarsenTimes* times = nullptr);

// Loads the kernels above into the current context (the warm-up's,
// gpu/warm_up.hpp; launch.cuh load_kernels). Never throws.
void load_coarsen_kernels();

}  // namespace pgsim::gpu
