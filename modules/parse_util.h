#pragma once
/// Small, total text helpers shared by the probe parsers. Nothing here throws or allocates more
/// than its input; every parser in modules/<name>/parse.* is built from these.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schemas/diagnostics.h"

namespace plumb::modules {

/// One line of tool output and its 1-based number. `text` never contains '\n' (a trailing '\r'
/// is dropped too).
struct Line {
  int number = 0;
  std::string_view text;
};

/// Splits `text` into lines. A final line without '\n' is kept (`truncated` tells the caller).
std::vector<Line> SplitLines(std::string_view text, bool* truncated = nullptr);

std::string_view Trim(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
/// Splits on runs of spaces/tabs; no empty fields.
std::vector<std::string_view> SplitWhitespace(std::string_view s);
/// Splits on every occurrence of `sep` (empty fields kept).
std::vector<std::string_view> Split(std::string_view s, std::string_view sep);
/// A non-negative decimal integer (no sign, no spaces), or nullopt.
std::optional<long long> ParseNonNegative(std::string_view s);
/// The whole of `s` as a number, as std::from_chars reads it (no spaces, no "+", no "0x"; a
/// minus sign only for ParseSigned), or nullopt. ParseDouble refuses inf and nan. Over-long
/// text (leading zeros past 20 digits, 40 characters for a double) is refused, not truncated.
std::optional<unsigned long long> ParseUnsigned(std::string_view s);
std::optional<long long> ParseSigned(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);
/// For messages: `s` cut to `max` characters (then "...") with non-printable bytes shown as '?'.
std::string Excerpt(std::string_view s, size_t max = 60);

/// The located parse error every parser returns:
///   code "probe.<module>", message "<tool>: <what> in line <n>: '<excerpt>'".
Diagnostic ParseError(std::string_view module, std::string_view tool, std::string_view what,
                      const Line* line = nullptr);

}  // namespace plumb::modules
