#pragma once
/// Colour on a terminal, as terraform does: a change's + ~ - markers green, yellow, red;
/// failures red, waits and warnings yellow, a clean verdict green. Reports are rendered as plain
/// text (plans/report) and coloured here, at the edge, only for a terminal: files, pipes and
/// JSON never get an escape code.
#include <cstdio>
#include <string>
#include <string_view>

namespace plumb::cmd {

/// --color: "always", "never", or "auto": a terminal (isatty), TERM not "dumb", and NO_COLOR
/// unset or empty (https://no-color.org).
bool ColorOn(const std::string& mode, std::FILE* stream);

/// Whether `fd` is a terminal that draws escape codes and \r (isatty, TERM is not "dumb"):
/// what colour's "auto" and the progress line both ask.
bool TerminalCanDraw(int fd);

/// A text report with its lines coloured (see above); `text` unchanged when `on` is false.
std::string ColorizeReport(std::string_view text, bool on);

/// One status word of the apply's live table: ok/done green, failed red, waits yellow.
std::string ColorizeStatus(std::string_view status, bool on);

}  // namespace plumb::cmd
