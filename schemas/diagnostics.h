#pragma once
/// Located diagnostics: every problem plumb finds in user input, a node or a run is one of these,
/// collected and shown together (terraform's tfdiags, mold's checkpoint). No exception crosses a
/// library boundary; a throwing library call is caught where it is made and becomes a Diagnostic.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb {

/// A place in the user's files. `file` is relative to the cluster repo root; line and column are
/// 1-based, 0 when unknown (e.g. a whole file, or a value that came from a default).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return !file.empty(); }
  /// "stacks/h100.yaml:12:7", "stacks/h100.yaml:12", "stacks/h100.yaml" or "" as known.
  std::string ToString() const;
};

enum class Severity { kError, kWarning, kNote };

/// One problem. `code` is a stable machine-readable id ("schema.unknown-key",
/// "coherence.cuda-driver"); `key_path` names the key in the user's terms ("nodes[3].address",
/// "nvidia.driver"); `hint` says what to do about it.
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;
  Location where;
  std::string key_path;
  std::string message;
  std::string hint;

  static Diagnostic Error(std::string code, std::string message, Location where = {},
                          std::string key_path = {}, std::string hint = {});
  static Diagnostic Warning(std::string code, std::string message, Location where = {},
                            std::string key_path = {}, std::string hint = {});
  /// "file:line:col: error: message [key: k]\n  hint: ..." — the one human rendering.
  std::string ToString() const;
  nlohmann::json ToJson() const;
};

/// An ordered collection of diagnostics; the unit that validation and planning return.
class Diagnostics {
 public:
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  void Append(const Diagnostics& other);
  bool HasErrors() const;
  size_t ErrorCount() const;
  size_t WarningCount() const;
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Stable order for output: by file, line, column, then insertion order.
  void Sort();
  std::string ToText() const;
  nlohmann::json ToJson() const;

 private:
  std::vector<Diagnostic> items_;
};

const char* SeverityName(Severity s);

}  // namespace plumb
