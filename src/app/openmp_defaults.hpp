#pragma once
// pgsim's default OpenMP wait policy (openmp_defaults.cpp says why and how).

namespace pgsim {

// The wait policy libgomp was started with, for -v: "passive (pgsim's default)", or what the
// user's OMP_WAIT_POLICY / GOMP_SPINCOUNT said.
const char* openmp_wait_policy();

}  // namespace pgsim
