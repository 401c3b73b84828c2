#include "modules/firmware/firmware.h"

#include <algorithm>

#include "modules/bmc_util.h"
#include "modules/module_util.h"
#include "modules/transport/bmc.h"

namespace plumb::modules::firmware {
namespace {

using nlohmann::json;

std::string Trim(std::string s) {
  auto ws = [](unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && ws(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && ws(s[i])) ++i;
  return s.substr(i);
}

std::string StrOf(const json& o, const char* k) {
  return o.is_object() && o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : "";
}

int OrderOf(const std::string& component) {
  std::string up = component;
  std::transform(up.begin(), up.end(), up.begin(), ::toupper);
  if (up == "BMC" || up.find("BMC") != std::string::npos || up.find("ILO") != std::string::npos) return 0;
  if (up == "BIOS" || up.find("BIOS") != std::string::npos || up.find("SYSTEM ROM") != std::string::npos) return 1;
  return 2;
}

bool Matches(const json& c, const std::string& key) {
  return c.value("name", "") == key || c.value("software_id", "") == key || c.value("id", "") == key;
}

}  // namespace

Facts FirmwareFacts(const std::vector<json>& members, const json& us) {
  json comps = json::array();
  for (const auto& m : members) {
    if (!m.is_object()) continue;
    comps.push_back({{"id", StrOf(m, "Id")},
                     {"name", StrOf(m, "Name")},
                     {"software_id", StrOf(m, "SoftwareId")},
                     {"version", m.contains("Version") && m["Version"].is_string()
                                     ? json(Trim(m["Version"].get<std::string>())) : json()},
                     {"updateable", m.contains("Updateable") && m["Updateable"].is_boolean()
                                        ? m["Updateable"] : json()},
                     {"link", StrOf(m, "@odata.id")}});
  }
  json svc = {{"simple_update", nullptr}, {"multipart_push", nullptr}, {"protocols", json::array()}};
  if (us.is_object()) {
    const json& act = us.value("Actions", json::object());
    if (act.is_object() && act.contains("#UpdateService.SimpleUpdate")) {
      const json& su = act["#UpdateService.SimpleUpdate"];
      if (su.contains("target")) svc["simple_update"] = su["target"];
      if (su.contains("TransferProtocol@Redfish.AllowableValues")) {
        svc["protocols"] = su["TransferProtocol@Redfish.AllowableValues"];
      }
    }
    if (us.contains("MultipartHttpPushUri") && us["MultipartHttpPushUri"].is_string()) {
      svc["multipart_push"] = us["MultipartHttpPushUri"];
    }
  }
  return {{"components", comps}, {"update_service", svc}};
}

Result<Facts> FirmwareModule::ProbeBmc(transport::Bmc& bmc) const {
  auto root = bmc.ServiceRoot();
  if (!root.ok()) return root.error();
  std::string us_link = LinkOf(root.value(), "UpdateService");
  if (us_link.empty()) {
    return Diagnostic::Error("probe.firmware", bmc.Name() + ": the service root has no UpdateService");
  }
  auto us = bmc.Get(us_link);
  if (!us.ok()) return us.error();
  std::string inv = LinkOf(us.value(), "FirmwareInventory");
  if (inv.empty()) {
    return Diagnostic::Error("probe.firmware", bmc.Name() + ": UpdateService has no FirmwareInventory");
  }
  auto members = bmc.GetCollection(inv);
  if (!members.ok()) return members.error();
  return FirmwareFacts(members.value(), us.value());
}

bool FirmwareModule::Wants(const json& desired) const {
  return desired.is_object() && desired.contains("firmware") && desired["firmware"].is_object() &&
         !desired["firmware"].empty();
}

std::vector<Action> FirmwareModule::Diff(const json& desired, const Facts& facts) const {
  std::vector<Action> out;
  if (!Wants(desired)) return out;
  const json& images = desired.value("firmware_images", json::object());
  const json& comps = facts.value("components", json::array());
  for (auto it = desired["firmware"].begin(); it != desired["firmware"].end(); ++it) {
    const std::string key = it.key();
    const std::string want = it.value().is_string() ? Trim(it.value().get<std::string>())
                                                    : it.value().dump();
    json targets = json::array(), have = json::array();
    bool in_sync = true, updateable = true, found = false;
    for (const auto& c : comps) {
      if (!Matches(c, key)) continue;
      found = true;
      std::string v = c["version"].is_string() ? c["version"].get<std::string>() : "";
      if (std::find(have.begin(), have.end(), json(v)) == have.end()) have.push_back(v);
      if (v != want) {
        in_sync = false;
        targets.push_back(c.value("link", ""));
        if (c["updateable"] == false) updateable = false;
      }
    }
    if (found && in_sync) continue;
    std::string summary;
    if (!found) {
      summary = "flash " + key + " " + want + " (no FirmwareInventory member named " + key + ")";
    } else {
      std::string h;
      for (const auto& v : have) h += (h.empty() ? "" : ", ") + v.get<std::string>();
      summary = "flash " + key + " " + want + " (have " + h + ")" +
                (updateable ? "" : " [not updateable: report only]");
    }
    json image = images.is_object() && images.contains(key) ? images[key] : json();
    out.push_back(MakeAction("firmware", "firmware." + key, "firmware." + key,
                             "/firmware/" + PointerToken(key), std::move(summary),
                             !found ? json() : have.size() == 1 ? have[0] : have, want,
                             Disruption::kFirmwareFlash,
                             {{"component", key}, {"targets", targets}, {"image", image},
                              {"order", OrderOf(key)}, {"found", found},
                              {"updateable", updateable}}));
  }
  std::stable_sort(out.begin(), out.end(), [](const Action& x, const Action& y) {
    return x.params["order"].get<int>() < y.params["order"].get<int>();
  });
  return out;
}

std::string FirmwareOutcome::Describe() const {
  std::string s = staged ? "staged via " + method + ", applies on reset (inventory still shows " +
                               version_now + ")"
                         : "updated via " + method + " to " + version_now;
  return s;
}

Result<FirmwareOutcome> ApplyFirmware(transport::Bmc& bmc, const Action& action) {
  const json& p = action.params;
  const std::string comp = p.value("component", "");
  const std::string want = action.after.is_string() ? action.after.get<std::string>() : "";
  if (!p.value("found", false)) {
    return Diagnostic::Error("apply.firmware", bmc.Name() + ": no FirmwareInventory member is named '" +
                                                   comp + "'", {}, action.key,
                             "use a Name or SoftwareId from `plumb bmc inventory`");
  }
  if (!p.value("updateable", true)) {
    return Diagnostic::Error("apply.firmware", bmc.Name() + ": " + comp +
                                                   " is not updateable through Redfish (Updateable: false)",
                             {}, action.key);
  }
  if (!p["image"].is_string() || p["image"].get<std::string>().empty()) {
    return Diagnostic::Error("apply.firmware", "no image for firmware component '" + comp + "'", {},
                             "firmware_images." + comp,
                             "set firmware_images." + comp + " to an https:// URL or file:/path");
  }
  const std::string image = p["image"].get<std::string>();
  auto root = bmc.ServiceRoot();
  if (!root.ok()) return root.error();
  auto us = bmc.Get(LinkOf(root.value(), "UpdateService"));
  if (!us.ok()) return us.error();
  Facts svc = FirmwareFacts({}, us.value())["update_service"];
  json targets = p.value("targets", json::array());

  FirmwareOutcome out;
  Result<transport::TaskOutcome> task = Diagnostic::Error("apply.firmware", "not started");
  if (image.rfind("https://", 0) == 0 || image.rfind("http://", 0) == 0) {
    if (!svc["simple_update"].is_string()) {
      return Diagnostic::Error("apply.firmware", bmc.Name() + ": no SimpleUpdate action; use a file: image for a push update",
                               {}, "firmware_images." + comp);
    }
    json body = {{"ImageURI", image}, {"Targets", targets}};
    // Older services require TransferProtocol; send it only where they list the values.
    std::string proto = image.rfind("https", 0) == 0 ? "HTTPS" : "HTTP";
    if (!svc["protocols"].empty()) body["TransferProtocol"] = proto;
    out.method = "SimpleUpdate";
    task = bmc.PostAction(svc["simple_update"].get<std::string>(), body);
  } else {
    std::string file = image.rfind("file:", 0) == 0 ? image.substr(5) : image;
    if (!svc["multipart_push"].is_string()) {
      return Diagnostic::Error("apply.firmware", bmc.Name() + ": no MultipartHttpPushUri; serve the image over https for SimpleUpdate",
                               {}, "firmware_images." + comp);
    }
    json params = {{"Targets", targets}, {"@Redfish.OperationApplyTime", "Immediate"}};
    out.method = "multipart";
    task = bmc.PostMultipart(svc["multipart_push"].get<std::string>(), params, file);
  }
  if (!task.ok()) return task.error();
  out.messages = task.value().messages;
  if (!task.value().Succeeded()) {
    std::string msgs;
    for (const auto& m : out.messages) msgs += "; " + m;
    return Diagnostic::Error("apply.firmware", bmc.Name() + ": update of " + comp + " ended " +
                                                   task.value().state + msgs, {}, action.key);
  }
  // Verify: every target must now show the version, else it is staged for the next reset.
  out.version_now = want;
  for (const auto& t : targets) {
    auto m = bmc.Get(t.get<std::string>());
    if (!m.ok()) return m.error();
    std::string v = Trim(StrOf(m.value(), "Version"));
    if (v != want) {
      out.staged = true;
      out.version_now = v;
    }
  }
  return out;
}

Status FirmwareModule::Apply(NodeContext& ctx, const Action& action) const {
  if (!ctx.bmc) return NoBmc(Name(), action.id);
  auto r = ApplyFirmware(*ctx.bmc, action);
  if (!r.ok()) return r.error();
  return OkStatus();
}

}  // namespace plumb::modules::firmware
