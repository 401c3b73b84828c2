#include "schemas/yaml_json.h"

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cctype>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "schemas/json_pointer.h"

namespace plumb::schemas {

Location Marks::At(const std::string& pointer) const {
  std::string p = pointer;
  while (true) {
    auto it = value.find(p);
    if (it != value.end()) return it->second;
    if (p.empty()) return {};
    p = p.substr(0, p.rfind('/'));
  }
}

Location Marks::KeyAt(const std::string& pointer) const {
  auto it = key.find(pointer);
  return it != key.end() ? it->second : At(pointer);
}

namespace {

Location ToLocation(const std::string& file, const YAML::Mark& m) {
  // yaml-cpp marks are 0-based; -1 when unknown (e.g. a null that was never written).
  if (m.line < 0) return Location{file, 0, 0};
  return Location{file, m.line + 1, m.column + 1};
}

// [-+]?[0-9]+
bool IsInt(const std::string& s) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?  (hand-written: it runs on every scalar)
bool IsFloat(const std::string& s) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

nlohmann::json PlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s.size() <= 40 && IsInt(s)) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && end != nullptr && *end == '\0') return v;
    return s;  // out of range: keep the text, the schema will say what it wanted
  }
  if (s.size() <= 40 && IsFloat(s)) return std::strtod(s.c_str(), nullptr);
  return s;
}

class Converter {
 public:
  Converter(const std::string& file, Marks& marks, Diagnostics& diags)
      : file_(file), marks_(marks), diags_(diags) {}

  /// The value budget ran out: what was converted is a fragment, not the file.
  bool over_budget() const { return over_budget_; }
  /// Values converted so far (aliases expanded), against the budget.
  size_t converted() const { return converted_; }
  static constexpr size_t kMaxValues = 2'000'000;

  nlohmann::json Convert(const YAML::Node& node, const std::string& pointer, int depth) {
    // Aliases are expanded, so a few lines of anchors can stand for billions of values
    // ("billion laughs"); stop at a budget no real cluster file comes near.
    if (++converted_ > kMaxValues) {
      if (!over_budget_) {
        over_budget_ = true;
        diags_.Add(Diagnostic::Error(
            "yaml.too-large", fmt::format("more than {} values (after expanding aliases)", kMaxValues),
            ToLocation(file_, node.Mark()), {}, "split the file, or use fewer nested aliases"));
      }
      return nullptr;
    }
    marks_.value[pointer] = ToLocation(file_, node.Mark());
    if (depth > 64) {
      diags_.Add(Diagnostic::Error("yaml.too-deep", "nesting deeper than 64 levels",
                                   ToLocation(file_, node.Mark())));
      return nullptr;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar: {
        const std::string& tag = node.Tag();
        // "!" marks a quoted scalar; an explicit !!str also forces a string.
        if (tag == "!" || tag == "tag:yaml.org,2002:str") return node.Scalar();
        nlohmann::json v = PlainScalar(node.Scalar());
        if (!v.is_string() && !v.is_null()) marks_.scalar_text[pointer] = node.Scalar();
        return v;
      }
      case YAML::NodeType::Sequence: {
        nlohmann::json arr = nlohmann::json::array();
        size_t i = 0;
        for (const auto& item : node) {
          arr.push_back(Convert(item, PointerAppend(pointer, i), depth + 1));
          ++i;
        }
        return arr;
      }
      case YAML::NodeType::Map: {
        nlohmann::json obj = nlohmann::json::object();
        std::map<std::string, Location> seen;
        std::vector<YAML::Node> merges;
        for (const auto& kv : node) {
          const YAML::Node& k = kv.first;
          Location kloc = ToLocation(file_, k.Mark());
          if (!k.IsScalar()) {
            diags_.Add(Diagnostic::Error("yaml.bad-key", "mapping keys must be plain text", kloc,
                                         {}, "write the key as a plain word or a quoted string"));
            continue;
          }
          std::string key = k.Scalar();
          if (key == "<<" && k.Tag() != "!") {
            merges.push_back(kv.second);  // applied below: explicit keys win wherever they are
            continue;
          }
          std::string child = PointerAppend(pointer, key);
          auto [it, fresh] = seen.emplace(key, kloc);
          if (!fresh) {
            Diagnostic d = Diagnostic::Error(
                "yaml.duplicate-key", fmt::format("duplicate key '{}'", key), kloc,
                KeyPath(child, obj),
                fmt::format("'{}' is already set at line {}; a key may appear once per mapping",
                            key, it->second.line));
            diags_.Add(std::move(d));
            continue;
          }
          marks_.key[child] = kloc;
          obj[key] = Convert(kv.second, child, depth + 1);
          MarkEmptyAtKey(kv.second, child, kloc);
        }
        for (const auto& m : merges) Merge(m, obj, pointer, depth);
        return obj;
      }
    }
    return nullptr;
  }

 private:
  // YAML merge key (`<<: *anchor` or `<<: [*a, *b]`): the anchored mapping's entries that the
  // mapping does not set itself; among several sources the earlier wins. Values keep the
  // location where the anchor defined them, so provenance points at the real text.
  void Merge(const YAML::Node& src, nlohmann::json& obj, const std::string& pointer, int depth) {
    std::vector<YAML::Node> sources;
    if (src.IsMap()) {
      sources.push_back(src);
    } else if (src.IsSequence()) {
      for (const auto& item : src) sources.push_back(item);
    }
    if (sources.empty() || std::any_of(sources.begin(), sources.end(),
                                       [](const YAML::Node& n) { return !n.IsMap(); })) {
      diags_.Add(Diagnostic::Error("yaml.bad-merge", "'<<' must name a mapping or a list of mappings",
                                   ToLocation(file_, src.Mark()), {},
                                   "write <<: *anchor, where &anchor marks a mapping"));
      return;
    }
    if (depth > 64) return;
    for (const auto& m : sources) {
      std::vector<YAML::Node> nested;
      for (const auto& kv : m) {
        if (!kv.first.IsScalar()) continue;
        std::string key = kv.first.Scalar();
        if (key == "<<") {
          nested.push_back(kv.second);
          continue;
        }
        if (obj.contains(key)) continue;
        std::string child = PointerAppend(pointer, key);
        Location kloc = ToLocation(file_, kv.first.Mark());
        marks_.key[child] = kloc;
        obj[key] = Convert(kv.second, child, depth + 1);
        MarkEmptyAtKey(kv.second, child, kloc);
      }
      for (const auto& n : nested) Merge(n, obj, pointer, depth + 1);
    }
  }

  // `kernel:` with nothing after it is a null that yaml-cpp marks where the next token starts
  // (the next key's line, or past the end of the file): a problem with it is the key's line's.
  void MarkEmptyAtKey(const YAML::Node& value, const std::string& pointer, const Location& key) {
    if (!value.IsNull() || key.line <= 0) return;
    Location& at = marks_.value[pointer];
    if (at.line == 0 || at.line > key.line) at = key;
  }

  const std::string& file_;
  Marks& marks_;
  Diagnostics& diags_;
  size_t converted_ = 0;
  bool over_budget_ = false;
};

// The first line whose indentation (the whitespace before its first other character)
// holds a tab: line and column of that tab, 1-based.
std::optional<Location> FirstTabIndent(std::string_view text) {
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (size_t i = start; i < end && (text[i] == ' ' || text[i] == '\t'); ++i) {
      if (text[i] == '\t') {
        // A line of only whitespace is no indentation of anything.
        size_t first = text.find_first_not_of(" \t\r", i);
        if (first != std::string_view::npos && first < end)
          return Location{"", line, static_cast<int>(i - start) + 1};
        break;
      }
    }
    if (end == text.size()) break;
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

// The first line, up to `last_line`, that opens a quoted value and does not close it on the
// same line (legal in YAML, but the usual cause when the parser fails further down). A quote
// opens a value only where a value starts: after ": ", "- ", "[", "{", "," or at the start.
// With `across_lines`, a quote may close on a later line (YAML allows it) and the answer is a
// quote still open at the end of the text: yaml-cpp accepts that and reads the rest of the
// file into the one value.
std::optional<Location> FirstUnclosedQuote(std::string_view text, int last_line,
                                           bool across_lines = false) {
  int line = 1;
  size_t start = 0;
  char open = 0;
  Location opened;
  int block_parent = -1;   // inside a block scalar (| or >): the indentation of its key's line
  while (start < text.size() && line <= last_line) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view row = text.substr(start, end - start);
    const size_t indent = row.find_first_not_of(' ');
    if (!open && block_parent >= 0) {
      // Block scalar text is taken as written: quotes there open nothing.
      if (indent == std::string_view::npos || static_cast<int>(indent) > block_parent) {
        start = end + 1;
        ++line;
        continue;
      }
      block_parent = -1;
    }
    if (!across_lines) open = 0;
    char prev = 0;   // the last non-space character outside quotes
    for (size_t i = start; i < end; ++i) {
      const char c = text[i];
      if (open == '"') {
        if (c == '\\') ++i;
        else if (c == '"') open = 0, prev = '"';
        continue;
      }
      if (open == '\'') {
        if (c == '\'' && i + 1 < end && text[i + 1] == '\'') ++i;
        else if (c == '\'') open = 0, prev = '\'';
        continue;
      }
      if (c == '#' && (i == start || text[i - 1] == ' ')) break;   // a comment
      if ((c == '"' || c == '\'') &&
          (prev == 0 || prev == ':' || prev == '-' || prev == '[' || prev == '{' || prev == ',')) {
        open = c;
        opened = Location{"", line, static_cast<int>(i - start) + 1};
        continue;
      }
      if (c != ' ' && c != '\t') prev = c;
    }
    if (open && !across_lines) return opened;
    if (!open) {
      // A line ending in a block indicator (|, >, |-, >+, |2 ...) starts a block scalar.
      std::string_view t = row.substr(0, row.find(" #"));
      while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.remove_suffix(1);
      while (!t.empty() && (t.back() == '-' || t.back() == '+' || std::isdigit(
                                                   static_cast<unsigned char>(t.back()))))
        t.remove_suffix(1);
      if (!t.empty() && (t.back() == '|' || t.back() == '>') && t.size() >= 2 &&
          (t[t.size() - 2] == ' ' || t[t.size() - 2] == ':'))
        block_parent = indent == std::string_view::npos ? 0 : static_cast<int>(indent);
    }
    start = end + 1;
    ++line;
  }
  if (open && across_lines) return opened;
  return std::nullopt;
}

// yaml-cpp reads a quote never closed as a value running to the end of the file; said as an
// error (true) rather than pins vanishing into a string.
bool QuoteOpenToTheEnd(std::string_view text, const std::string& file, Diagnostics& diags) {
  auto quote = FirstUnclosedQuote(text, 1 << 30, /*across_lines=*/true);
  if (!quote) return false;
  diags.Add(Diagnostic::Error("yaml.quote", "a quoted value opened here is never closed",
                              Location{file, quote->line, quote->column}, {},
                              "close the quote (the rest of the file would be read into it)"));
  return true;
}

}  // namespace

std::optional<YamlDocument> ParseYaml(std::string_view text, const std::string& file,
                                      Diagnostics& diags) {
  YamlDocument doc;
  doc.file = file;
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (QuoteOpenToTheEnd(text, file, diags)) return std::nullopt;
    if (docs.size() > 1) {
      // yaml-cpp's Load would keep the first and drop the rest without a word: pins would vanish.
      diags.Add(Diagnostic::Error(
          "yaml.documents",
          fmt::format("more than one YAML document ({}); plumb reads one per file", docs.size()),
          ToLocation(file, docs[1].Mark()), {},
          "remove the extra '---' line (a '---' is only allowed before the first line)"));
      return std::nullopt;
    }
    YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
    Converter conv(file, doc.marks, diags);
    doc.json = conv.Convert(root, "", 0);
    // A cut-off document would only add false errors (missing keys) after the real one.
    if (conv.over_budget()) return std::nullopt;
    if (doc.marks.value[""].line <= 0) doc.marks.value[""] = Location{file, 1, 1};
  } catch (const YAML::Exception& e) {
    // yaml-cpp's words are about its parser ("illegal map value"); a tab in the indentation,
    // the most common cause there is, is named when the error sits on or after it.
    if (auto tab = FirstTabIndent(text); tab && (e.mark.line < 0 || tab->line <= e.mark.line + 1)) {
      diags.Add(Diagnostic::Error("yaml.tab", "a tab is used for indentation; YAML allows spaces only",
                                  Location{file, tab->line, tab->column}, {},
                                  "replace the tab(s) at the start of this line with spaces"));
      return std::nullopt;
    }
    const int error_line = e.mark.line < 0 ? 1 << 30 : e.mark.line + 1;
    if (auto quote = FirstUnclosedQuote(text, error_line); quote && quote->line < error_line) {
      diags.Add(Diagnostic::Error(
          "yaml.quote",
          fmt::format("a quoted value opened here is not closed on its line; the YAML parser "
                      "gave up at line {} ({})", error_line, e.msg),
          Location{file, quote->line, quote->column}, {},
          "close the quote on the same line (or check for a stray quote character)"));
      return std::nullopt;
    }
    const bool anchor = e.msg.find("anchor is not defined") != std::string::npos;
    diags.Add(Diagnostic::Error("yaml.syntax", fmt::format("YAML syntax error: {}", e.msg),
                                ToLocation(file, e.mark), {},
                                anchor ? "an alias (*name) must come after its anchor (&name) in "
                                         "the same file; check the spelling of both"
                                       : "check indentation, colons and quotes on this line"));
    return std::nullopt;
  } catch (const std::exception& e) {
    diags.Add(Diagnostic::Error("yaml.syntax", fmt::format("could not read YAML: {}", e.what()),
                                Location{file, 0, 0}));
    return std::nullopt;
  }
  return doc;
}

}  // namespace plumb::schemas
