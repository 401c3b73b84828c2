#pragma once
/// Combined probe script and its section splitter. Stand-in used by gather until
/// modules/probe_script (branch probes) lands; same job: one script, one marker pair per module.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "modules/module.h"
#include "schemas/result.h"

namespace plumb::plans {

struct ProbeSection {
  std::string out;       ///< exactly what the module's snippet printed on stdout
  int exit_status = 0;   ///< the snippet's exit status
};

/// One POSIX sh script running each module's snippet in its own subshell between markers
/// "@@plumb:<nonce>:begin:<module>" / "@@plumb:<nonce>:end:<module>:<status>".
std::string BuildProbeScript(const std::vector<const modules::Module*>& modules,
                             std::string_view nonce);

/// Splits the script's stdout back into sections by module. Lines outside sections are ignored;
/// a begin without its end is an error ("probe.output"), so is output with no markers at all.
Result<std::map<std::string, ProbeSection>> SplitProbeOutput(std::string_view out,
                                                             std::string_view nonce);

}  // namespace plumb::plans
