#include "modules/firmware/simple_update.h"
#include "schemas/ascii.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace plumb::modules::firmware {
namespace {

using nlohmann::json;

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Links as BMCs match them: case-insensitive, no trailing '/'.
std::string NormUri(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Parameters plumb fills (or, for credentials of the image server, deliberately leaves out).
const std::set<std::string> kKnown = {"ImageURI", "TransferProtocol", "Targets", "UpdateComponent",
                                      "Username", "Password", "User"};

}  // namespace

Result<json> BuildSimpleUpdate(const transport::ActionSpec& spec, const std::string& image,
                               const std::vector<SimpleUpdateTarget>& targets,
                               const std::string& bmc, const std::string& component) {
  const std::string where = "firmware_images." + component;
  auto refuse = [&](const std::string& what, const std::string& hint) {
    return Diagnostic::Error("apply.firmware.simple-update", bmc + ": SimpleUpdate of " + component +
                                                                  ": " + what,
                             {}, where, hint);
  };
  json body = {{"ImageURI", image}};
  std::string scheme = schemas::AsciiUpper(image.substr(0, image.find("://")));
  if (const auto* p = spec.Find("TransferProtocol")) {
    if (!p->Allows(scheme)) {
      return refuse("the BMC takes TransferProtocol " + Joined(p->allowable) +
                        (spec.declared ? " (its ActionInfo)" : "") + ", and the image URL " + image +
                        " is " + scheme,
                    "serve the image over " + Joined(p->allowable) + ", or push it with a file: image "
                    "where the BMC has a MultipartHttpPushUri");
    }
    body["TransferProtocol"] = scheme;
  }
  bool targeted = false;
  if (spec.Accepts("Targets") && !targets.empty()) {
    const auto* p = spec.Find("Targets");
    json links = json::array();
    for (const auto& t : targets) {
      bool allowed = !p || !p->has_allowable ||
                     std::any_of(p->allowable.begin(), p->allowable.end(),
                                 [&](const std::string& a) { return NormUri(a) == NormUri(t.link); });
      if (!allowed) {
        return refuse(t.link + " is not among the Targets the BMC accepts (" + Joined(p->allowable) + ")",
                      "the BMC's SimpleUpdate ActionInfo does not offer this component for update");
      }
      links.push_back(t.link);
    }
    body["Targets"] = links;
    targeted = true;
  }
  if (const auto* p = spec.Find("UpdateComponent"); p && !targeted) {
    std::string chosen;
    for (const auto& t : targets) {
      for (const std::string& v : {t.id, t.name}) {
        if (chosen.empty() && !v.empty() && p->has_allowable && p->Allows(v)) chosen = v;
      }
    }
    if (chosen.empty()) {
      return refuse("the BMC picks the component with UpdateComponent (" + Joined(p->allowable) +
                        ") and none of them is " + component + "'s Id or Name",
                    "update this component another way (vendor tool): plumb will not let the BMC "
                    "choose what to flash");
    }
    body["UpdateComponent"] = chosen;
    targeted = true;
  }
  if (spec.declared && !targeted && targets.size() > 1) {
    return refuse("the action takes no Targets, and " + std::to_string(targets.size()) +
                      " members match: the BMC cannot be told which",
                  "pin each member by its Id");
  }
  for (const auto& p : spec.params) {
    if (p.required && !body.contains(p.name) && !kKnown.count(p.name)) {
      return refuse("the BMC requires parameter " + p.name + ", which plumb cannot fill", "");
    }
    if (p.required && !body.contains(p.name)) {
      return refuse("the BMC requires parameter " + p.name, "");
    }
  }
  return body;
}

}  // namespace plumb::modules::firmware
