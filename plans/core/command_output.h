#pragma once
/// The tail every read-only command shares (plan, drift, gather, health, show): its report, in
/// the format asked for, to stdout or to --out (atomically), a one-line verdict on stderr when
/// the output is for a machine (a file, or a format other than text), then its exit code. The
/// streams come in as arguments, so the tail is tested on string streams.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::plans {

/// Writes a report piece by piece to the stream it is given.
using WriteReport = std::function<void(std::ostream&)>;

/// `write` into `path` (atomically: temp file + rename), or into `std_out` when `path` is empty
/// or "-"; a failed `std_out` (a closed pipe, a full disk) is an error: the report did not get out.
Status WriteOutputTo(const std::string& path, std::ostream& std_out, const WriteReport& write);
/// WriteOutputTo for a report that is one text already.
Status WriteTextTo(const std::string& path, std::ostream& std_out, const std::string& text);

/// Where a command's report goes: --out (empty: stdout) and --format.
struct OutputTarget {
  std::string path;
  std::string format = "text";
  /// For machines: written to a file, or in a format other than text.
  bool ForMachine() const { return !path.empty() || format != "text"; }
};

/// What a read-only command found, ready to be written.
struct CommandOutcome {
  WriteReport render;     ///< the report in the requested format
  std::string verdict;    ///< one line for stderr when the report is for a machine ("": none)
  int exit_code = 0;      ///< ExitCodeFor(verb, ...) of what was found
};

/// Renders `o` to `to` (`out` stands for stdout). A write that fails is said on `err` and exits
/// with `verb`'s error code; otherwise the verdict goes to `err` when the report is for a
/// machine, and the outcome's exit code is returned.
int EmitOutcome(std::string_view verb, const CommandOutcome& o, const OutputTarget& to,
                std::ostream& out, std::ostream& err);

/// `j` as indented JSON text and a newline, never throwing on bytes a tool printed (invalid
/// UTF-8 becomes U+FFFD, as the digests' canonical form does).
std::string JsonText(const nlohmann::json& j);

}  // namespace plumb::plans
