#pragma once
// Test helpers: read tests/data fixtures and feed them to modules as probe parts.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "modules/probe_script.h"

namespace plumb::testing {

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(PLUMB_TEST_DATA) + "/" + relative, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// One part of a module's section: a fixture file ("@dir/file.txt") or literal text.
struct PartSpec {
  std::string name;
  std::string source;
  int status = 0;
};

inline std::vector<modules::ProbePart> MakeParts(const std::vector<PartSpec>& specs) {
  std::vector<modules::ProbePart> parts;
  for (const auto& s : specs) {
    std::string text = !s.source.empty() && s.source[0] == '@' ? ReadFixture(s.source.substr(1)) : s.source;
    parts.push_back(modules::ProbePart{s.name, s.status, text});
  }
  return parts;
}

}  // namespace plumb::testing
