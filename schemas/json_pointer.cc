#include "schemas/json_pointer.h"

#include "schemas/suggest.h"

namespace plumb::schemas {

std::string PointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string PointerAppend(const std::string& pointer, const std::string& token) {
  return pointer + "/" + PointerToken(token);
}

std::string PointerAppend(const std::string& pointer, size_t index) {
  return pointer + "/" + std::to_string(index);
}

std::vector<std::string> PointerTokens(const std::string& pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  std::string cur;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(cur);
      cur.clear();
      continue;
    }
    char c = pointer[i];
    if (c == '~' && i + 1 < pointer.size()) {
      cur += pointer[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      cur += c;
    }
  }
  return tokens;
}

static const nlohmann::json* Child(const nlohmann::json* v, const std::string& tok) {
  if (v == nullptr) return nullptr;
  if (v->is_object()) {
    auto it = v->find(tok);
    return it == v->end() ? nullptr : &*it;
  }
  if (v->is_array()) {
    if (tok.empty() || tok.size() > 9 || tok.find_first_not_of("0123456789") != std::string::npos)
      return nullptr;
    size_t i = std::stoul(tok);
    return i < v->size() ? &(*v)[i] : nullptr;
  }
  return nullptr;
}

const nlohmann::json* ValueAt(const nlohmann::json& doc, const std::string& pointer) {
  const nlohmann::json* v = &doc;
  for (const auto& tok : PointerTokens(pointer)) {
    v = Child(v, tok);
    if (v == nullptr) return nullptr;
  }
  return v;
}

std::string KeyPath(const std::string& pointer, const nlohmann::json& doc) {
  std::string out;
  const nlohmann::json* v = &doc;
  for (const auto& tok : PointerTokens(pointer)) {
    // Keys are user text: printed escaped, so a hostile key cannot forge output.
    if (v != nullptr && v->is_array()) {
      out += "[" + Printable(tok, 128) + "]";
    } else {
      if (!out.empty()) out += '.';
      out += Printable(tok, 128);
    }
    v = Child(v, tok);
  }
  return out;
}

bool PointerUnder(std::string_view pointer, std::string_view prefix) {
  if (pointer.size() < prefix.size() || pointer.substr(0, prefix.size()) != prefix) return false;
  return pointer.size() == prefix.size() || pointer[prefix.size()] == '/';
}

std::string PointerToKey(std::string_view pointer) {
  std::string out;
  out.reserve(pointer.size());
  for (size_t i = 0; i < pointer.size(); ++i) {
    char c = pointer[i];
    if (c == '/') {
      if (i != 0) out += '.';
    } else if (c == '~' && i + 1 < pointer.size()) {
      out += pointer[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

std::string StringMember(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace plumb::schemas
