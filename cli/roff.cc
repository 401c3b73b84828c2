// roff text for the man pages (cli/roff.h).
#include "cli/roff.h"

#include <fmt/format.h>

#include "schemas/ascii.h"

namespace plumb::cli {

std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string ManHeader(const std::string& name, int section, const std::string& version) {
  return fmt::format(".TH {} {} \"\" \"plumb {}\" \"plumb manual\"\n", Roff(schemas::AsciiUpper(name)),
                     section, version);
}

std::string Verbatim(const std::string& text) { return ".nf\n" + Roff(text) + "\n.fi\n"; }

}  // namespace plumb::cli
