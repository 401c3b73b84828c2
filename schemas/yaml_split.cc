#include "schemas/yaml_split.h"

namespace plumb::schemas {
namespace {

struct Line {
  size_t start = 0, end = 0;   // [start, end) without the '\n' (a '\r' stays in)
  int number = 0;
};

bool Blank(std::string_view row) { return row.find_first_not_of(" \r") == std::string_view::npos; }

// A comment line: spaces, then '#'.
bool Comment(std::string_view row) {
  const size_t at = row.find_first_not_of(' ');
  return at != std::string_view::npos && row[at] == '#';
}

// `key:` at column 0 with nothing after it but spaces or a comment: the key, else "".
std::string BareKey(std::string_view row) {
  const size_t colon = row.find(':');
  if (colon == 0 || colon == std::string_view::npos) return "";
  for (size_t i = 0; i < colon; ++i) {
    const char c = row[i];
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
    if (!word) return "";
  }
  std::string_view rest = row.substr(colon + 1);
  const size_t at = rest.find_first_not_of(" \r");
  if (at != std::string_view::npos && !(rest[at] == '#' && at > 0)) return "";
  return std::string(row.substr(0, colon));
}

// "- " (or a lone "-") at exactly `indent`.
bool ItemAt(std::string_view row, size_t indent) {
  if (row.size() <= indent || row.find_first_not_of(' ') != indent || row[indent] != '-') return false;
  return row.size() == indent + 1 || row[indent + 1] == ' ' || row[indent + 1] == '\r';
}

}  // namespace

std::optional<LongSequence> FindLongSequence(std::string_view text, size_t min_items) {
  std::vector<Line> lines;
  for (size_t start = 0, number = 1; start < text.size(); ++number) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back({start, end, static_cast<int>(number)});
    start = end + 1;
  }
  auto row = [&](size_t i) { return text.substr(lines[i].start, lines[i].end - lines[i].start); };
  for (size_t i = 0; i < lines.size(); ++i)
    if (!row(i).empty() && row(i)[0] == '%') return std::nullopt;
  std::optional<LongSequence> best;
  for (size_t k = 0; k < lines.size(); ++k) {
    std::string key = BareKey(row(k));
    if (key.empty()) continue;
    size_t i = k + 1;
    while (i < lines.size() && (Blank(row(i)) || Comment(row(i)))) ++i;
    if (i == lines.size()) continue;
    const size_t indent = row(i).find_first_not_of(' ');
    if (!ItemAt(row(i), indent)) continue;
    LongSequence seq;
    seq.key = std::move(key);
    seq.key_line = lines[k].number;
    seq.indent = static_cast<int>(indent);
    seq.begin = lines[i].start;
    bool clean = true;
    for (; i < lines.size(); ++i) {
      const std::string_view r = row(i);
      if (!r.empty() && r[0] == '\t') {   // a tab in an indentation: the whole read names it
        clean = false;
        break;
      }
      if (ItemAt(r, indent)) {
        seq.item_starts.push_back(lines[i].start);
        seq.item_lines.push_back(lines[i].number);
        continue;
      }
      if (Blank(r) || Comment(r)) continue;
      const size_t at = r.find_first_not_of(' ');
      if (at > indent) continue;   // more of the item above
      if (at != 0) clean = false;   // ends at an indentation of its own: not offered
      break;
    }
    if (!clean) continue;
    // The sequence ends where line i starts (a column-0 line: the next key, a document marker
    // the whole read will judge) or at the text's end.
    seq.end = i < lines.size() ? lines[i].start : text.size();
    // The pieces end on a line of their own after the items (yaml_json.cc): a last line with
    // no newline would put that line somewhere the whole read has none.
    if (seq.end == text.size() && !text.empty() && text.back() != '\n') continue;
    if (seq.item_starts.size() >= min_items &&
        (!best || seq.item_starts.size() > best->item_starts.size()))
      best = std::move(seq);
    k = i - 1;
  }
  return best;
}

}  // namespace plumb::schemas
