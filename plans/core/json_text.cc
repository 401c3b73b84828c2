#include "plans/core/json_text.h"

#include <algorithm>

namespace plumb::plans {

void AppendIndented(std::string& out, const nlohmann::json& v, int depth) {
  const std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string pad(static_cast<size_t>(depth) * 2, ' ');
  size_t from = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.append(text, from, nl + 1 - from);
    out += pad;
    from = nl + 1;
  }
  out.append(text, from, std::string::npos);
}

void AppendIndentedCompact(std::string& out, std::string_view compact, int depth) {
  // dump(2)'s layout: a non-empty object or array opens a line per member, indented 2 spaces a
  // level, and closes on a line of its own; "{}" and "[]" stay as they are; ':' is followed by
  // a space. Bytes inside strings are copied as they are (dump escapes every control
  // character, so a string never holds a raw newline or an unescaped quote).
  const size_t n = compact.size();
  out.reserve(out.size() + n + n / 2);
  auto newline = [&out](int level) {
    out += '\n';
    out.append(static_cast<size_t>(level) * 2, ' ');
  };
  int level = depth;
  size_t i = 0;
  while (i < n) {
    const char c = compact[i];
    switch (c) {
      case '"': {
        size_t j = i + 1;
        while (j < n && compact[j] != '"') j += compact[j] == '\\' ? 2 : 1;
        j = std::min(j + 1, n);
        out.append(compact, i, j - i);
        i = j;
        continue;
      }
      case '{':
      case '[':
        out += c;
        if (i + 1 < n && (compact[i + 1] == '}' || compact[i + 1] == ']')) {
          out += compact[i + 1];
          i += 2;
          continue;
        }
        newline(++level);
        break;
      case '}':
      case ']':
        newline(--level);
        out += c;
        break;
      case ',':
        out += ',';
        newline(level);
        break;
      case ':':
        out += ": ";
        break;
      default: {
        // A number or a literal: copied up to the next structural character.
        size_t j = i;
        while (j < n && compact[j] != ',' && compact[j] != '}' && compact[j] != ']') ++j;
        out.append(compact, i, j - i);
        i = j;
        continue;
      }
    }
    ++i;
  }
}

}  // namespace plumb::plans
