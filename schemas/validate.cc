#include "schemas/validate.h"

#include <cctype>

#include <algorithm>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "schemas/embedded.h"
#include "schemas/json_pointer.h"
#include "schemas/suggest.h"

namespace plumb::schemas {

using nlohmann::json;

namespace {

// Strings longer than this never reach std::regex (its recursion depth grows with the input);
// they are reported as too long by plumb itself. No legitimate value comes near it.
constexpr size_t kMaxChecked = 1024;

std::mutex& CacheMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::unique_ptr<json>, std::less<>>& JsonCache() {
  static std::map<std::string, std::unique_ptr<json>, std::less<>> cache;
  return cache;
}

const json* LoadSchemaJsonLocked(std::string_view name) {
  auto& cache = JsonCache();
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  auto text = FindEmbedded(name);
  std::unique_ptr<json> parsed;
  if (text) {
    json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) parsed = std::make_unique<json>(std::move(j));
  }
  const json* out = parsed.get();
  cache.emplace(std::string(name), std::move(parsed));
  return out;
}

// A schema node and the document it lives in (for resolving "#/definitions/..." refs).
struct SchemaRef {
  const json* root = nullptr;
  const json* node = nullptr;
  explicit operator bool() const { return node != nullptr; }
};

SchemaRef Deref(SchemaRef s) {
  for (int hops = 0; s && hops < 16; ++hops) {
    if (!s.node->is_object()) return s;
    auto it = s.node->find("$ref");
    if (it == s.node->end() || !it->is_string()) return s;
    std::string ref = *it;
    std::string file = ref.substr(0, ref.find('#'));
    std::string frag = ref.find('#') == std::string::npos ? "" : ref.substr(ref.find('#') + 1);
    const json* root = s.root;
    if (!file.empty()) {
      std::lock_guard<std::mutex> lock(CacheMutex());
      root = LoadSchemaJsonLocked(file);
    }
    if (root == nullptr) return {};
    s = SchemaRef{root, frag.empty() ? root : ValueAt(*root, frag)};
  }
  return s;
}

const json* Field(SchemaRef s, const char* key) {
  if (!s || !s.node->is_object()) return nullptr;
  auto it = s.node->find(key);
  return it == s.node->end() ? nullptr : &*it;
}

// The patternProperties schema whose pattern matches `key`, if any. plumb's schemas use only
// simple literal-prefix patterns ("^x-"), so a prefix test is exact for them.
SchemaRef PatternPropertySchema(SchemaRef s, const std::string& key) {
  const json* pp = Field(s, "patternProperties");
  if (pp == nullptr || !pp->is_object()) return {};
  for (auto it = pp->begin(); it != pp->end(); ++it) {
    const std::string& pat = it.key();
    if (pat.size() > 1 && pat[0] == '^' && key.compare(0, pat.size() - 1, pat, 1) == 0) {
      return Deref(SchemaRef{s.root, &it.value()});
    }
  }
  return {};
}

// The schema that governs child `token` of `parent` (an instance value) under schema `s`.
SchemaRef ChildSchema(SchemaRef s, const json& parent, const std::string& token) {
  s = Deref(s);
  if (!s) return {};
  if (parent.is_object()) {
    if (const json* props = Field(s, "properties"); props && props->contains(token)) {
      return Deref(SchemaRef{s.root, &(*props)[token]});
    }
    if (SchemaRef pp = PatternPropertySchema(s, token)) return pp;
    if (const json* ap = Field(s, "additionalProperties"); ap && ap->is_object()) {
      return Deref(SchemaRef{s.root, ap});
    }
    return {};
  }
  if (parent.is_array()) {
    if (const json* items = Field(s, "items"); items && items->is_object()) {
      return Deref(SchemaRef{s.root, items});
    }
  }
  return {};
}

SchemaRef SchemaAtPointer(SchemaRef root, const json& doc, const std::string& pointer) {
  SchemaRef s = Deref(root);
  const json* v = &doc;
  for (const auto& tok : PointerTokens(pointer)) {
    if (!s || v == nullptr) return {};
    s = ChildSchema(s, *v, tok);
    v = ValueAt(*v, PointerAppend("", tok));
  }
  return s;
}

std::string Expect(SchemaRef s) {
  if (const json* e = Field(s, "x-expect"); e && e->is_string()) return *e;
  return {};
}

std::string TypeWord(const std::string& t) {
  if (t == "string") return "text";
  if (t == "integer") return "a whole number";
  if (t == "number") return "a number";
  if (t == "boolean") return "true or false";
  if (t == "object") return "a mapping";
  if (t == "array") return "a list";
  if (t == "null") return "nothing";
  return t;
}

std::string Describe(const json& v, const std::string& written) {
  switch (v.type()) {
    case json::value_t::null: return "nothing (an empty value)";
    case json::value_t::boolean: return fmt::format("the boolean {}", written.empty() ? v.dump() : written);
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return fmt::format("the number {}", written.empty() ? v.dump() : written);
    case json::value_t::string: return fmt::format("the text \"{}\"", Printable(v.get<std::string>()));
    case json::value_t::array: return "a list";
    case json::value_t::object: return "a mapping";
    default: return "an unsupported value";
  }
}

// Why a string failed a strict pattern, in words: the first character that is never allowed.
std::string WhyRejected(const std::string& s) {
  if (s.empty()) return "it is empty";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      return fmt::format("it contains {}, a non-ASCII character (look-alikes of punctuation are "
                         "refused; only ASCII is accepted here)",
                         Printable(s.substr(i, len)));
    }
    if (c < 0x20 || c == 0x7f) {
      return fmt::format("it contains the control character {}", Printable(std::string(1, c)));
    }
    if (std::string_view(";|&`$()<>'\"\\*?!{}#~").find(static_cast<char>(c)) !=
        std::string_view::npos) {
      return fmt::format("it contains '{}', a shell metacharacter", static_cast<char>(c));
    }
  }
  if (s[0] == '-') return "it starts with '-' (it could be read as a command option)";
  if (s.find(' ') != std::string::npos) return "it contains a space";
  return {};
}

// A field marked "x-secret" in the schema may hold a password typed in by mistake: never echo it.
bool IsSecret(SchemaRef s) {
  const json* x = Field(s, "x-secret");
  return x != nullptr && x->is_boolean() && x->get<bool>();
}

std::string Quoted(const json& v) {
  if (v.is_string()) return "\"" + Printable(v.get<std::string>()) + "\"";
  return v.dump();
}

struct Context {
  const json& doc;
  const std::string& file;
  const Marks& marks;
  SchemaRef root;
  Diagnostics& diags;
  std::set<std::string> seen;  // pointer + code: one diagnostic per problem

  void Add(const std::string& code, const std::string& pointer, Location where,
           std::string key_path, std::string message, std::string hint) {
    if (!seen.insert(code + "\x01" + pointer).second) return;
    if (!where.known()) where.file = file;
    diags.Add(Diagnostic::Error(code, std::move(message), std::move(where), std::move(key_path),
                                std::move(hint)));
  }
};

bool PatternOk(SchemaRef s, const std::string& value, std::string* why_not) {
  if (const json* ml = Field(s, "maxLength"); ml && ml->is_number_unsigned()) {
    size_t chars = 0;
    for (unsigned char c : value) chars += (c & 0xc0) != 0x80;
    if (chars > ml->get<size_t>()) {
      *why_not = fmt::format("it is {} characters long (at most {})", chars, ml->get<size_t>());
      return false;
    }
  }
  if (const json* pat = Field(s, "pattern"); pat && pat->is_string()) {
    if (value.size() > kMaxChecked) {
      *why_not = fmt::format("it is {} bytes long", value.size());
      return false;
    }
    try {
      // Compiled once per pattern: a 10,000-node inventory has as many label keys.
      static std::mutex mu;
      static std::map<std::string, std::regex> compiled;
      const std::regex* re = nullptr;
      {
        std::lock_guard<std::mutex> lock(mu);
        auto it = compiled.find(pat->get<std::string>());
        if (it == compiled.end()) {
          it = compiled.emplace(pat->get<std::string>(), std::regex(pat->get<std::string>())).first;
        }
        re = &it->second;
      }
      if (!std::regex_search(value, *re)) {
        *why_not = WhyRejected(value);
        return false;
      }
    } catch (const std::exception&) {
      return true;  // a broken pattern is caught by the schema tests, not the user's problem
    }
  }
  return true;
}

// plumb's own pass over keys: every unknown key (valijson stops at the first) and every key
// that fails `propertyNames` (valijson reports those without any message).
void CheckKeys(Context& cx, SchemaRef s, const json& value, const std::string& pointer, int depth) {
  s = Deref(s);
  if (!s || depth > 64) return;
  if (value.is_object()) {
    const json* props = Field(s, "properties");
    const json* ap = Field(s, "additionalProperties");
    SchemaRef names = Deref(SchemaRef{s.root, Field(s, "propertyNames")});
    std::vector<std::string> allowed;
    if (props && props->is_object()) {
      for (auto it = props->begin(); it != props->end(); ++it) allowed.push_back(it.key());
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string& key = it.key();
      std::string child = PointerAppend(pointer, key);
      if (props && props->contains(key)) {
        CheckKeys(cx, SchemaRef{s.root, &(*props)[key]}, it.value(), child, depth + 1);
        continue;
      }
      if (SchemaRef pp = PatternPropertySchema(s, key)) {
        CheckKeys(cx, pp, it.value(), child, depth + 1);
        continue;
      }
      if (ap && ap->is_boolean() && !ap->get<bool>()) {
        std::string hint = SuggestHint(key, allowed);
        cx.Add("schema.unknown-key", child, cx.marks.KeyAt(child), KeyPath(child, cx.doc),
               fmt::format("unknown key '{}'", Printable(key)), hint);
        continue;
      }
      if (names) {
        std::string why;
        if (!PatternOk(names, key, &why)) {
          std::string expect = Expect(names);
          std::string hint = expect.empty() ? why : fmt::format("expected {}{}", expect,
                                                                why.empty() ? "" : "; " + why);
          cx.Add("schema.bad-key", child, cx.marks.KeyAt(child), KeyPath(child, cx.doc),
                 fmt::format("invalid key \"{}\"", Printable(key)), hint);
          continue;
        }
      }
      if (ap && ap->is_object()) CheckKeys(cx, SchemaRef{s.root, ap}, it.value(), child, depth + 1);
    }
  } else if (value.is_array()) {
    if (const json* items = Field(s, "items"); items && items->is_object()) {
      for (size_t i = 0; i < value.size(); ++i) {
        CheckKeys(cx, SchemaRef{s.root, items}, value[i], PointerAppend(pointer, i), depth + 1);
      }
    }
  }
}

// Replaces strings too long to match safely with "" (reporting them) so valijson never runs a
// regex over them. Returns the pointers replaced.
void TrimLong(Context& cx, json& v, const std::string& pointer, std::set<std::string>& trimmed) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() > kMaxChecked) {
      cx.Add("schema.length", pointer, cx.marks.At(pointer), KeyPath(pointer, cx.doc),
             fmt::format("value is too long ({} bytes)", s.size()),
             "no value plumb accepts is longer than 256 characters");
      trimmed.insert(pointer);
      v = "";
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      TrimLong(cx, it.value(), PointerAppend(pointer, it.key()), trimmed);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) TrimLong(cx, v[i], PointerAppend(pointer, i), trimmed);
  }
}

std::string ContextToPointer(const std::vector<std::string>& context) {
  std::string p;
  for (size_t i = 0; i < context.size(); ++i) {
    const std::string& c = context[i];
    if (i == 0 && c == "<root>") continue;
    if (c.size() >= 2 && c.front() == '[' && c.back() == ']') {
      p = PointerAppend(p, c.substr(1, c.size() - 2));
    } else {
      p = PointerAppend(p, c);
    }
  }
  return p;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Turns one valijson error into a located diagnostic in plain words, or drops it when it only
// restates a child's error ("Failed to validate against schema associated with property...").
void Translate(Context& cx, const std::string& pointer, const std::string& raw) {
  static constexpr std::string_view kNoise[] = {
      "Failed to validate against schema associated with",
      "Failed to validate item #",
      "Failed to validate against additional properties schema",
      "Object contains a property that could not be validated",  // CheckKeys reports all of them
      "Failed to validate against child schema",
      "Failed to validate against any",
      "Cannot validate item",
  };
  for (auto n : kNoise) {
    if (StartsWith(raw, n)) return;
  }
  const json* value = ValueAt(cx.doc, pointer);
  SchemaRef s = SchemaAtPointer(cx.root, cx.doc, pointer);
  std::string expect = Expect(s);
  std::string key = KeyPath(pointer, cx.doc);
  Location where = cx.marks.At(pointer);
  const bool secret = IsSecret(s);
  auto shown = [&](const json& v) {
    return secret ? std::string("(not shown: this field must not hold a secret)") : Quoted(v);
  };
  std::string written;
  if (auto it = cx.marks.scalar_text.find(pointer); it != cx.marks.scalar_text.end())
    written = it->second;

  if (StartsWith(raw, "Missing required property '")) {
    std::string name = raw.substr(27, raw.rfind('\'') - 27);
    std::string child = PointerAppend(pointer, name);
    cx.Add("schema.required", child, where, KeyPath(pointer, cx.doc).empty()
                                                ? name
                                                : KeyPath(pointer, cx.doc) + "." + name,
           fmt::format("missing required key '{}'", name),
           fmt::format("add '{}: ...' to this {}", name, pointer.empty() ? "file" : "entry"));
    return;
  }
  if (value == nullptr) {
    cx.Add("schema.invalid", pointer, where, key, raw, {});
    return;
  }
  if (StartsWith(raw, "Value type not permitted")) {
    std::string want = expect;
    if (want.empty()) {
      if (const json* t = Field(s, "type")) {
        if (t->is_string()) {
          want = TypeWord(*t);
        } else if (t->is_array()) {
          for (const auto& x : *t) want += (want.empty() ? "" : " or ") + TypeWord(x);
        }
      }
    }
    std::string hint;
    const json* t = Field(s, "type");
    bool wants_string = t && ((t->is_string() && *t == "string") ||
                              (t->is_array() && std::find(t->begin(), t->end(), "string") != t->end()));
    if (wants_string && !secret && (value->is_number() || value->is_boolean())) {
      hint = fmt::format("YAML read this as a {}; quote it to keep it text: \"{}\"",
                         value->is_boolean() ? "boolean" : "number",
                         written.empty() ? value->dump() : written);
    } else if (t && t->is_string() && *t == "boolean") {
      const bool quoted_bool = value->is_string() && (*value == "true" || *value == "false");
      hint = quoted_bool ? fmt::format("remove the quotes: {}", value->get<std::string>())
                         : "write true or false (yes, no, on and off are text in YAML 1.2)";
    } else if (t && t->is_string() && (*t == "integer" || *t == "number") && !secret &&
               value->is_string()) {
      // "2" (quoted) where a number belongs: YAML kept it text because of the quotes.
      const std::string text = value->get<std::string>();
      const bool numeric = !text.empty() && text.find_first_not_of("0123456789.-") == std::string::npos &&
                           std::isdigit(static_cast<unsigned char>(text.back()));
      if (numeric) hint = fmt::format("remove the quotes: {}", text);
    }
    cx.Add("schema.type", pointer, where, key,
           fmt::format("wrong type: expected {}, got {}", want.empty() ? "another type" : want,
                       secret ? std::string("another type") : Describe(*value, written)),
           hint);
    return;
  }
  if (StartsWith(raw, "Failed to match regex")) {
    std::string why = value->is_string() && !secret ? WhyRejected(value->get<std::string>()) : "";
    std::string hint = expect.empty() ? why
                                      : fmt::format("expected {}{}", expect, why.empty() ? "" : "; " + why);
    cx.Add("schema.pattern", pointer, where, key,
           fmt::format("invalid value {}", shown(*value)), hint);
    return;
  }
  if (StartsWith(raw, "Failed to match against any enum values")) {
    std::vector<std::string> allowed;
    if (const json* e = Field(s, "enum"); e && e->is_array()) {
      for (const auto& x : *e) allowed.push_back(x.is_string() ? x.get<std::string>() : x.dump());
    }
    std::string text = value->is_string() ? value->get<std::string>() : value->dump();
    std::string best = DidYouMean(text, allowed);
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    std::string hint = best.empty() ? fmt::format("expected one of: {}", list)
                                    : fmt::format("did you mean '{}'? (one of: {})", best, list);
    cx.Add("schema.enum", pointer, where, key, fmt::format("invalid value {}", Quoted(*value)),
           hint);
    return;
  }
  if (StartsWith(raw, "String should be no more than")) {
    size_t max = 0;
    if (const json* ml = Field(s, "maxLength"); ml && ml->is_number_unsigned()) max = *ml;
    cx.Add("schema.length", pointer, where, key,
           fmt::format("value {} is too long (at most {} characters)", shown(*value), max),
           expect.empty() ? "" : "expected " + expect);
    return;
  }
  if (StartsWith(raw, "String should be no fewer than")) {
    cx.Add("schema.length", pointer, where, key, fmt::format("value {} is too short", shown(*value)),
           expect.empty() ? "" : "expected " + expect);
    return;
  }
  if (StartsWith(raw, "Expected number greater than or equal to") ||
      StartsWith(raw, "Expected number less than or equal to") ||
      StartsWith(raw, "Expected number greater than") || StartsWith(raw, "Expected number less than")) {
    std::string range;
    const json* mn = Field(s, "minimum");
    const json* mx = Field(s, "maximum");
    if (mn && mx) {
      range = fmt::format("between {} and {}", mn->dump(), mx->dump());
    } else if (mn) {
      range = fmt::format("at least {}", mn->dump());
    } else if (mx) {
      range = fmt::format("at most {}", mx->dump());
    }
    cx.Add("schema.range", pointer, where, key,
           fmt::format("value {} is out of range", Quoted(*value)),
           range.empty() ? expect : "must be " + range);
    return;
  }
  if (StartsWith(raw, "Array should contain no fewer than")) {
    cx.Add("schema.range", pointer, where, key, "list is empty",
           expect.empty() ? "add at least one item" : "expected " + expect);
    return;
  }
  cx.Add("schema.invalid", pointer, where, key, raw, expect.empty() ? "" : "expected " + expect);
}

struct ParsedSchema {
  std::unique_ptr<valijson::Schema> schema;
  std::string error;
};

const ParsedSchema& GetParsed(std::string_view name) {
  static std::map<std::string, ParsedSchema, std::less<>> cache;
  std::lock_guard<std::mutex> lock(CacheMutex());
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  ParsedSchema ps;
  const json* doc = LoadSchemaJsonLocked(name);
  if (doc == nullptr) {
    ps.error = fmt::format("schema {} is not built into this plumb", name);
  } else {
    try {
      auto schema = std::make_unique<valijson::Schema>();
      valijson::SchemaParser parser;
      valijson::adapters::NlohmannJsonAdapter adapter(*doc);
      // Cross-file refs ("stack.schema.json") resolve to the embedded copies; the cache owns them.
      auto fetch = [](const std::string& uri) -> const json* {
        std::string base = uri.substr(uri.rfind('/') == std::string::npos ? 0 : uri.rfind('/') + 1);
        base = base.substr(0, base.find('#'));
        const json* j = LoadSchemaJsonLocked(base);
        return j == nullptr ? nullptr : new json(*j);
      };
      auto free_doc = [](const json* j) { delete j; };
      parser.populateSchema(adapter, *schema, fetch, free_doc);
      ps.schema = std::move(schema);
    } catch (const std::exception& e) {
      ps.error = fmt::format("schema {} could not be loaded: {}", name, e.what());
    }
  }
  return cache.emplace(std::string(name), std::move(ps)).first->second;
}

}  // namespace

const json* SchemaJson(std::string_view name) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  return LoadSchemaJsonLocked(name);
}

bool ValidateJson(const json& value, std::string_view schema_name, const std::string& file,
                  const Marks& marks, Diagnostics& diags) {
  size_t before = diags.ErrorCount();
  const ParsedSchema& ps = GetParsed(schema_name);
  const json* schema_doc = SchemaJson(schema_name);
  if (!ps.schema || schema_doc == nullptr) {
    diags.Add(Diagnostic::Error("schema.internal", ps.error, Location{file, 0, 0}));
    return false;
  }
  Context cx{value, file, marks, SchemaRef{schema_doc, schema_doc}, diags, {}};
  try {
    json copy = value;
    std::set<std::string> trimmed;
    TrimLong(cx, copy, "", trimmed);
    CheckKeys(cx, cx.root, value, "", 0);
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(copy);
    validator.validate(*ps.schema, target, &results);
    valijson::ValidationResults::Error err;
    while (results.popError(err)) {
      std::string pointer = ContextToPointer(err.context);
      bool under_trimmed = false;
      for (const auto& t : trimmed) under_trimmed |= PointerUnder(pointer, t);
      if (under_trimmed) continue;
      Translate(cx, pointer, err.description);
    }
  } catch (const std::exception& e) {
    diags.Add(Diagnostic::Error("schema.internal",
                                fmt::format("validation failed unexpectedly: {}", e.what()),
                                Location{file, 0, 0}));
  }
  return diags.ErrorCount() == before;
}

bool ValidateDocument(const YamlDocument& doc, std::string_view schema_name, Diagnostics& diags) {
  return ValidateJson(doc.json, schema_name, doc.file, doc.marks, diags);
}

}  // namespace plumb::schemas
