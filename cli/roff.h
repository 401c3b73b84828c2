#pragma once
/// roff text for man(7) pages (cli/man_page.h): what every page's text goes through.
#include <string>

namespace plumb::cli {

/// Text for roff: a backslash is \e, a hyphen \- (so option names copy and paste as ASCII), and
/// a line may not start with a control character ('.' or '\'').
std::string Roff(const std::string& text);

/// The .TH line of page `name`(section). No date: the pages are generated at every build and
/// must be byte-identical across builds.
std::string ManHeader(const std::string& name, int section, const std::string& version);

/// Text as it is, in a no-fill block: examples and tables keep their columns.
std::string Verbatim(const std::string& text);

}  // namespace plumb::cli
