#pragma once
// Human and machine-readable summaries of a run.
#include <string>

#include "app/run.hpp"

namespace pgsim {

std::string profile_table(const RunReport& report);
std::string comparison_text(const Comparison& comparison);
void write_json(const std::string& path, const RunReport& report);

}  // namespace pgsim
