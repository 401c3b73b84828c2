#pragma once
/// Facts of a module whose probe runs several commands ("parts"), read part by part.
///
/// Why: one tool printing something unexpected (nvidia-smi garbage, a systemctl error) must not
/// discard what the other tools of the same module said (the driver version in /proc, modinfo,
/// the fabric manager). Each part is read on its own; a part that cannot be read leaves the
/// facts it would have given at their "not read" value (null, never guessed) and is listed,
/// with its located error, under kPartErrorsKey (modules/module.h). ModuleProblems then makes
/// every verb treat the module as not fully read, while the facts that were read are kept.
///
/// A module with a single part keeps returning that part's error: there is nothing to keep.
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::modules {

class PartFacts {
 public:
  /// `facts`: the module's facts with every field at its "not read" value. `module` codes the
  /// errors ("probe.<module>").
  PartFacts(std::string_view module, nlohmann::json facts);

  /// The facts being filled.
  nlohmann::json& facts() { return facts_; }

  /// Runs `read`, which reads part `part` into facts() and returns why it could not. A failure
  /// is recorded against `part` (re-coded "probe.<module>"); `read` must leave the facts of that
  /// part unset when it fails. Returns whether the part was read.
  bool Read(std::string_view part, const std::function<Status()>& read);
  /// Records that `part` could not be read, for a reason found outside a parser (e.g. the tool
  /// was killed by the probe's timeout).
  void Fail(std::string_view part, Diagnostic why);

  /// The facts; with kPartErrorsKey when some part failed (absent otherwise, so a node read
  /// whole has the same facts, and digest, as before parts were read one by one).
  nlohmann::json Finish() &&;

 private:
  std::string module_;
  nlohmann::json facts_;
  nlohmann::json errors_ = nlohmann::json::array();
};

}  // namespace plumb::modules
