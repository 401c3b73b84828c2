#pragma once
/// Case mapping of ASCII letters, byte by byte (protocol words: Redfish enum values, Slurm
/// states, link layers). Other bytes are kept as they are.
#include <string>
#include <string_view>

namespace plumb::schemas {

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace plumb::schemas
