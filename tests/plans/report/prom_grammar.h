#pragma once
// A strict reader of the Prometheus text exposition format (0.0.4), for tests of what plumb
// renders: every sample's family was announced by HELP then TYPE first, each family once,
// names and labels well-formed, label values escaped, values numbers, no duplicate series,
// the text ends with a newline.
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace plumb::testing {

struct PromCheck {
  std::vector<std::string> problems;   ///< "line 12: ..." each; empty when the text is good
  int samples = 0;
};

inline PromCheck CheckPromText(const std::string& p) {
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$)");
  static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  static const std::regex type(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter|untyped)$)");
  PromCheck out;
  std::set<std::string> helped, typed, series;
  std::string current;
  size_t start = 0;
  int line_no = 0;
  auto problem = [&](const std::string& what, const std::string& line) {
    out.problems.push_back("line " + std::to_string(line_no) + ": " + what + ": " + line);
  };
  while (start < p.size()) {
    ++line_no;
    size_t end = p.find('\n', start);
    if (end == std::string::npos) {
      problem("no newline at the end", p.substr(start));
      break;
    }
    std::string line = p.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      if (!helped.insert(m[1]).second) problem("family announced twice", line);
      current = m[1];
    } else if (std::regex_match(line, m, type)) {
      if (m[1] != current) problem("TYPE without its HELP", line);
      if (!typed.insert(m[1]).second) problem("family typed twice", line);
    } else if (std::regex_match(line, m, sample)) {
      if (m[1] != current || !typed.count(m[1])) problem("sample outside its family", line);
      if (!series.insert(line.substr(0, line.rfind(' '))).second) problem("duplicate series", line);
      ++out.samples;
    } else {
      problem("not HELP, TYPE or a sample", line);
    }
  }
  return out;
}

}  // namespace plumb::testing
