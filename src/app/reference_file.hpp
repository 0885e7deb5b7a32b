#pragma once
// Opening a reference file that --compare reads (voltages, waveforms): one set of messages for
// a directory, a missing file or an unreadable one, whatever the file's layout.
#include <fstream>
#include <string>

namespace pgsim {

// `what` names the layout in messages ("voltage file", "waveform file"). Throws InputError.
std::ifstream open_reference_file(const std::string& path, const std::string& what);

}  // namespace pgsim
