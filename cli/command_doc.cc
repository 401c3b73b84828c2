// Text helpers over the described command tree (cli/command_doc.h).
#include "cli/command_doc.h"

#include <sstream>

namespace plumb::cli {

std::vector<std::string> FooterParagraphs(const std::string& footer) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream in(footer);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += cur.empty() ? line : "\n" + line;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string FirstLineOf(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string ManPageName(const std::string& path) {
  std::string out;
  std::stringstream in(path);
  std::string word;
  for (int i = 0; i < 2 && in >> word; ++i) out += out.empty() ? word : "-" + word;
  return out;
}

std::string CommandName(const CommandDoc& c) { return c.path.substr(c.path.rfind(' ') + 1); }

}  // namespace plumb::cli
