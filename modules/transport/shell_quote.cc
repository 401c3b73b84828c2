#include "modules/transport/shell.h"

namespace plumb::transport {

std::string ShellQuote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += "'";
  return out;
}

}  // namespace plumb::transport
