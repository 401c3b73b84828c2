#pragma once
/// Colour on a terminal, as terraform does: a change's + ~ - markers green, yellow, red;
/// failures red, waits and warnings yellow, a clean verdict green. Reports are rendered as plain
/// text and coloured only for a terminal: files, pipes and JSON never get an escape code. The
/// decision takes what cmd/ reads from the process (the --color flag, $NO_COLOR, $TERM,
/// isatty) as parameters.
#include <functional>
#include <string>
#include <string_view>

namespace plumb::plans::report {

/// Whether a stream draws escape codes and \r: it is a terminal and $TERM (`term`, null when
/// unset) is not "dumb". What colour's "auto" and the progress lines both ask.
bool TerminalDraws(bool is_terminal, const char* term);

/// --color: "always", "never", or "auto": the stream draws (TerminalDraws) and $NO_COLOR
/// (`no_color`, null when unset) is unset or empty (https://no-color.org).
bool ColourWanted(std::string_view mode, const char* no_color, bool stream_draws);

/// A text report with its lines coloured (see above); `text` unchanged when `on` is false.
std::string ColorizeReport(std::string_view text, bool on);
/// ColorizeReport with --color's choice bound, as the renderers take a style.
std::function<std::string(std::string)> ReportStyle(bool on);

/// One status word of the apply's live table: ok/done green, failed red, waits yellow.
std::string ColorizeStatus(std::string_view status, bool on);

}  // namespace plumb::plans::report
