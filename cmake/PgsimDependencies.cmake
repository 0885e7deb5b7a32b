# Third-party dependencies, all from Debian packages (see README.md, "Dependencies").
# Each falls back to plain headers on the include path, so a machine without the
# packages' CMake files (the GPU machine, which gets headers copied along) still builds.

find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)

find_package(Eigen3 3.4 CONFIG QUIET)
if(NOT TARGET Eigen3::Eigen)
  find_path(EIGEN3_INCLUDE_DIR Eigen/Core PATH_SUFFIXES eigen3 REQUIRED)
  add_library(Eigen3::Eigen INTERFACE IMPORTED)
  target_include_directories(Eigen3::Eigen INTERFACE ${EIGEN3_INCLUDE_DIR})
endif()

# fast_float (header only): correctly rounded number parsing for the netlist reader.
find_path(FAST_FLOAT_INCLUDE_DIR fast_float/fast_float.h REQUIRED)

find_package(spdlog CONFIG QUIET)
if(NOT TARGET spdlog::spdlog)
  find_path(SPDLOG_INCLUDE_DIR spdlog/spdlog.h REQUIRED)
  add_library(spdlog::spdlog INTERFACE IMPORTED)
  target_include_directories(spdlog::spdlog INTERFACE ${SPDLOG_INCLUDE_DIR})
  target_compile_definitions(spdlog::spdlog INTERFACE SPDLOG_HEADER_ONLY SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT TARGET nlohmann_json::nlohmann_json)
  find_path(NLOHMANN_INCLUDE_DIR nlohmann/json.hpp REQUIRED)
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${NLOHMANN_INCLUDE_DIR})
endif()

# CHOLMOD (SuiteSparse) is the direct reference solver when present; without it
# --solver direct uses Eigen's SimplicialLDLT, slower on large grids but exact too.
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY cholmod)
if(CHOLMOD_INCLUDE_DIR AND CHOLMOD_LIBRARY)
  add_library(pgsim_cholmod INTERFACE)
  target_include_directories(pgsim_cholmod INTERFACE ${CHOLMOD_INCLUDE_DIR})
  target_compile_definitions(pgsim_cholmod INTERFACE PGSIM_HAVE_CHOLMOD)
  set(PGSIM_HAVE_CHOLMOD ON)
  message(STATUS "pgsim: CHOLMOD found, --solver direct uses it")
else()
  message(STATUS "pgsim: CHOLMOD not found, --solver direct uses Eigen SimplicialLDLT")
endif()

# zlib reads gzip-compressed netlists (the IBM cases ship compressed).
find_package(ZLIB REQUIRED)

find_package(PNG QUIET)

# MPI (Open MPI from Debian) is optional: with it `mpirun -np P pgsim ...` solves on P ranks
# (src/dist/); without it pgsim is a plain program and refuses to run as several MPI processes.
# pgsim calls the C API only: no MPI-2 C++ bindings (their library, libmpi_cxx, is left out of the
# pgsim executable by --as-needed, src/app/CMakeLists.txt).
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX QUIET)
if(MPI_CXX_FOUND)
  set(PGSIM_HAVE_MPI ON)
  message(STATUS "pgsim: MPI found, mpirun -np P pgsim solves on P ranks")
else()
  message(STATUS "pgsim: MPI not found, pgsim runs as one process only")
endif()

# METIS partitions the distributed system (minimum edge cut); without it each rank gets an
# equal contiguous range of rows, correct but with a larger halo.
find_path(METIS_INCLUDE_DIR metis.h)
find_library(METIS_LIBRARY metis)
if(METIS_INCLUDE_DIR AND METIS_LIBRARY)
  add_library(pgsim_metis INTERFACE)
  target_include_directories(pgsim_metis INTERFACE ${METIS_INCLUDE_DIR})
  target_link_libraries(pgsim_metis INTERFACE ${METIS_LIBRARY})
  set(PGSIM_HAVE_METIS ON)
  message(STATUS "pgsim: METIS found, the distributed system is partitioned with it")
else()
  message(STATUS "pgsim: METIS not found, the distributed system is split into row ranges")
endif()

# PT-Scotch (Debian's libptscotch-dev) is optional and used only with MPI: where the parse's split
# of a distributed run cuts couplings, every rank partitions its own rows of the row graph at once
# (src/dist/scotch_partition.hpp), no rank gathering it. Without it, the repartition runs METIS (or
# row ranges, above) on blocks of consecutive rows gathered on rank 0 (src/dist/repartition.hpp).
# Debian's headers are in include/scotch (ptscotch.h includes scotch.h, of libscotch-dev).
# libptscotch holds the sequential Scotch too: libscotch is not linked (Scotch refuses both in one
# process). Its error handler is named: ptscotcherr prints and returns (ptscotcherrexit would exit).
option(PGSIM_ENABLE_PTSCOTCH "Partition the distributed row graph with PT-Scotch when it is found" ON)
if(PGSIM_HAVE_MPI AND PGSIM_ENABLE_PTSCOTCH)
  find_path(PTSCOTCH_INCLUDE_DIR ptscotch.h PATH_SUFFIXES scotch)
  find_library(PTSCOTCH_LIBRARY ptscotch)
  find_library(PTSCOTCHERR_LIBRARY ptscotcherr)
  if(PTSCOTCH_INCLUDE_DIR AND PTSCOTCH_LIBRARY AND PTSCOTCHERR_LIBRARY)
    add_library(pgsim_ptscotch INTERFACE)
    target_include_directories(pgsim_ptscotch INTERFACE ${PTSCOTCH_INCLUDE_DIR})
    target_link_libraries(pgsim_ptscotch INTERFACE ${PTSCOTCH_LIBRARY} ${PTSCOTCHERR_LIBRARY} MPI::MPI_CXX)
    set(PGSIM_HAVE_PTSCOTCH ON)
  endif()
endif()
if(PGSIM_HAVE_PTSCOTCH)
  message(STATUS "pgsim: PT-Scotch found (${PTSCOTCH_LIBRARY}), the distributed repartition partitions the row graph with it (not METIS)")
elseif(PGSIM_HAVE_MPI)
  message(STATUS "pgsim: PT-Scotch not found or PGSIM_ENABLE_PTSCOTCH=OFF, the distributed repartition partitions blocks of rows on rank 0")
endif()

# NCCL (NVIDIA's collectives, shipped with the CUDA toolkit or its own package) is optional and
# used only with both CUDA and MPI: under mpirun with --backend gpu each rank solves on its own
# GPU, halo exchange and inner products through NCCL (src/gpu/nccl_comm.hpp). Without it a
# distributed --backend gpu run is refused with a message naming what is missing.
if(PGSIM_HAVE_CUDA AND PGSIM_HAVE_MPI)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    add_library(pgsim_nccl INTERFACE)
    target_include_directories(pgsim_nccl INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(pgsim_nccl INTERFACE ${NCCL_LIBRARY})
    set(PGSIM_HAVE_NCCL ON)
    message(STATUS "pgsim: NCCL found (${NCCL_LIBRARY}), mpirun with --backend gpu solves one rank per GPU")
  else()
    message(STATUS "pgsim: NCCL not found, the distributed solve runs on the CPU back end only")
  endif()
endif()
