#pragma once
/// What an action accepts (DSP0266 "Actions", ActionInfo.v1): the parameters an
/// @Redfish.ActionInfo resource lists (Name, Required, AllowableValues) merged with the inline
/// `<Parameter>@Redfish.AllowableValues` annotations of the action. Requests are built from this
/// rather than from what most BMCs happen to accept: a BMC that enforces its ActionInfo answers
/// 400 to a parameter it does not list (AMI's SimpleUpdate has no Targets).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::transport {

class Bmc;

struct ActionParameter {
  std::string name;
  bool required = false;
  bool has_allowable = false;             ///< an allowable list was advertised (may be empty)
  std::vector<std::string> allowable;     ///< AllowableValues (strings only)
  bool Allows(const std::string& value) const;   ///< true when no list, or `value` is in it
};

struct ActionSpec {
  std::string target;                     ///< the action's target, verbatim
  std::string action_info;                ///< the @Redfish.ActionInfo link ("" when none)
  bool declared = false;                  ///< an ActionInfo listed the parameters
  std::vector<ActionParameter> params;
  /// The parameter named `name`, or nullptr when neither the ActionInfo nor an inline
  /// annotation mentions it.
  const ActionParameter* Find(const std::string& name) const;
  /// Whether a request may carry `name`: listed, or nothing is declared (no ActionInfo).
  bool Accepts(const std::string& name) const { return !declared || Find(name) != nullptr; }
};

/// Pure: `action` is one entry of a resource's Actions ({"target", "@Redfish.ActionInfo",
/// "X@Redfish.AllowableValues"...}); `action_info` the ActionInfo resource or null.
ActionSpec ParseActionSpec(const nlohmann::json& action, const nlohmann::json& action_info);

/// ParseActionSpec, after reading the action's ActionInfo through `bmc` when it names one.
Result<ActionSpec> ReadActionSpec(Bmc& bmc, const nlohmann::json& action);

}  // namespace plumb::transport
