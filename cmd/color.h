#pragma once
/// Colour at the edge (plans/report/colour.h): what the process says (--color, $NO_COLOR, $TERM,
/// isatty) read here, the styling there.
#include <cstdio>
#include <string>

#include "plans/report/colour.h"

namespace plumb::cmd {

using plans::report::ColorizeReport;
using plans::report::ColorizeStatus;

/// --color for `stream`: plans::report::ColourWanted with this process's $NO_COLOR and terminal.
bool ColorOn(const std::string& mode, std::FILE* stream);

/// Whether `fd` is a terminal that draws escape codes and \r (plans::report::TerminalDraws).
bool TerminalCanDraw(int fd);

}  // namespace plumb::cmd
