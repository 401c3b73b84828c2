#include "schemas/diagnostics.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace plumb {

std::string Location::ToString() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

Diagnostic Diagnostic::Error(std::string code, std::string message, Location where,
                             std::string key_path, std::string hint) {
  return Diagnostic{Severity::kError, std::move(code), std::move(where), std::move(key_path),
                    std::move(message), std::move(hint)};
}

Diagnostic Diagnostic::Warning(std::string code, std::string message, Location where,
                               std::string key_path, std::string hint) {
  return Diagnostic{Severity::kWarning, std::move(code), std::move(where), std::move(key_path),
                    std::move(message), std::move(hint)};
}

std::string Diagnostic::ToString() const {
  std::string out;
  std::string loc = where.ToString();
  if (!loc.empty()) out += loc + ": ";
  out += fmt::format("{}: {}", SeverityName(severity), message);
  if (!key_path.empty()) out += fmt::format(" [key: {}]", key_path);
  if (!hint.empty()) out += fmt::format("\n  hint: {}", hint);
  return out;
}

nlohmann::json Diagnostic::ToJson() const {
  nlohmann::json j = {{"severity", SeverityName(severity)}, {"code", code}, {"message", message}};
  if (where.known()) {
    j["file"] = where.file;
    if (where.line > 0) j["line"] = where.line;
    if (where.column > 0) j["column"] = where.column;
  }
  if (!key_path.empty()) j["key"] = key_path;
  if (!hint.empty()) j["hint"] = hint;
  return j;
}

void Diagnostics::Append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::HasErrors() const { return ErrorCount() > 0; }

size_t Diagnostics::ErrorCount() const {
  return std::count_if(items_.begin(), items_.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

size_t Diagnostics::WarningCount() const {
  return std::count_if(items_.begin(), items_.end(),
                       [](const Diagnostic& d) { return d.severity == Severity::kWarning; });
}

void Diagnostics::Sort() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.where.file, a.where.line, a.where.column) <
           std::tie(b.where.file, b.where.line, b.where.column);
  });
}

std::string Diagnostics::ToText() const {
  std::string out;
  for (const auto& d : items_) out += d.ToString() + "\n";
  return out;
}

nlohmann::json Diagnostics::ToJson() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : items_) arr.push_back(d.ToJson());
  return arr;
}

}  // namespace plumb
