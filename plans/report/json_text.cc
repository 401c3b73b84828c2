#include "plans/report/json_text.h"

namespace plumb::plans::report {

void AppendIndented(std::string& out, const nlohmann::json& v, int depth) {
  const std::string text = v.dump(2);
  const std::string pad(static_cast<size_t>(depth) * 2, ' ');
  size_t from = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.append(text, from, nl + 1 - from);
    out += pad;
    from = nl + 1;
  }
  out.append(text, from, std::string::npos);
}

}  // namespace plumb::plans::report
