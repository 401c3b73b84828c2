#include "modules/firmware/firmware.h"

#include <fmt/format.h>

#include <algorithm>

#include "modules/bmc_util.h"
#include "modules/firmware/simple_update.h"
#include "modules/firmware/version_match.h"
#include "modules/module_util.h"
#include "modules/transport/action_info.h"
#include "modules/transport/bmc.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::firmware {

const ModuleInfo& FirmwareModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "firmware",
      .owns = {"/firmware", "/firmware_images"},
      .channel = Channel::kBmc,
      .after = {},
      .reads = "Redfish FirmwareInventory and SoftwareInventory",
      .changes = "Redfish SimpleUpdate (or a multipart push)",
      .disruption = Disruption::kFirmwareFlash,
      .disruption_by_key = {{"/firmware_images", Disruption::kNone}},   // where an image comes from changes nothing
      .firmware_inventory_key = "components"};
  return kInfo;
}

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
  return c.value("name", "") == key || c.value("software_id", "") == key || c.value("id", "") == key ||
         (c.contains("short_id") && c["short_id"].is_string() && c["short_id"] == key);
}

const char* ScopeName(ItemScope s) { return s == ItemScope::kOwn ? "system" : "shared"; }

}  // namespace

Facts FirmwareFacts(const FirmwareSources& src) {
  json comps = json::array();
  for (const auto& item : src.items) {
    const json& m = item.member;
    if (!m.is_object()) continue;
    json scope = nullptr, short_id = nullptr;
    if (src.systems) {
      Scoped s = ScopeOf(m, *src.systems);
      if (s.scope == ItemScope::kOther) continue;   // another node's device
      // With one system there is nothing to scope; a prefixed Id still has its short name.
      if (!src.systems->others.empty()) scope = ScopeName(s.scope);
      if (!s.short_id.empty()) short_id = s.short_id;
    }
    comps.push_back({{"id", StrOf(m, "Id")},
                     {"name", StrOf(m, "Name")},
                     {"software_id", StrOf(m, "SoftwareId")},
                     {"version", m.contains("Version") && m["Version"].is_string()
                                     ? json(Trim(m["Version"].get<std::string>())) : json()},
                     {"updateable", m.contains("Updateable") && m["Updateable"].is_boolean()
                                        ? m["Updateable"] : json()},
                     {"link", StrOf(m, "@odata.id")},
                     {"collection", item.collection},
                     {"scope", scope},
                     {"short_id", short_id}});
  }
  const json& us = src.update_service;
  json svc = {{"simple_update", nullptr}, {"simple_update_info", nullptr},
              {"multipart_push", nullptr}, {"protocols", json::array()}};
  if (us.is_object()) {
    const json& act = us.value("Actions", json::object());
    if (act.is_object() && act.contains("#UpdateService.SimpleUpdate")) {
      const json& su = act["#UpdateService.SimpleUpdate"];
      if (su.contains("target")) svc["simple_update"] = su["target"];
      if (su.contains("@Redfish.ActionInfo") && su["@Redfish.ActionInfo"].is_string()) {
        svc["simple_update_info"] = su["@Redfish.ActionInfo"];
      }
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
  FirmwareSources src;
  auto us = bmc.Get(us_link);
  if (!us.ok()) return us.error();
  src.update_service = us.value();
  auto items = ReadInventory(bmc, src.update_service);
  if (!items.ok()) return items.error();
  src.items = std::move(items.value());
  auto view = ReadSystemsView(bmc);
  if (!view.ok()) return view.error();
  src.systems = std::move(view.value());
  return FirmwareFacts(src);
}


std::vector<Action> FirmwareModule::Diff(const json& desired, const Facts& facts) const {
  std::vector<Action> out;
  if (!Wants(desired)) return out;
  const json& images = desired.value("firmware_images", json::object());
  const json& comps = facts.value("components", json::array());
  // Wants() is true for firmware_images alone too: images without a version pin change nothing.
  const json pins = desired.contains("firmware") && desired["firmware"].is_object()
                        ? desired["firmware"] : json::object();
  for (auto it = pins.begin(); it != pins.end(); ++it) {
    const std::string key = it.key();
    const std::string want = it.value().is_string() ? Trim(it.value().get<std::string>())
                                                    : it.value().dump();
    // A pin by Id names that member alone; otherwise every member of that Name, SoftwareId or
    // short_id (iLO's four "Power Supply Firmware" are four devices that all need the version).
    std::vector<const json*> matched;
    for (const auto& c : comps) {
      if (c.value("id", "") == key) matched.push_back(&c);
    }
    if (matched.empty()) {
      for (const auto& c : comps) {
        if (Matches(c, key)) matched.push_back(&c);
      }
    }
    // Several SoftwareInventory members of one name are alternatives (active and backup images),
    // not devices that all need the version.
    bool software = std::any_of(matched.begin(), matched.end(), [](const json* c) {
      return c->value("collection", "") == "SoftwareInventory";
    });
    json ambiguous = json::array();
    if (matched.size() > 1 && software) {
      for (const json* c : matched) ambiguous.push_back(c->value("id", ""));
    }
    json targets = json::array(), target_ids = json::array(), target_names = json::array(),
         have = json::array();
    bool in_sync = true, updateable = true, found = !matched.empty();
    for (const json* c : matched) {
      std::string v = (*c)["version"].is_string() ? (*c)["version"].get<std::string>() : "";
      if (std::find(have.begin(), have.end(), json(v)) == have.end()) have.push_back(v);
      if (!VersionMatches(want, v)) {   // "2.70" is in iLO's "2.70 May 16 2022"
        in_sync = false;
        targets.push_back(c->value("link", ""));
        target_ids.push_back(c->value("id", ""));
        target_names.push_back(c->value("name", ""));
        if ((*c)["updateable"] == false) updateable = false;
      }
    }
    if (found && in_sync) continue;
    std::string summary;
    if (!found) {
      summary = "flash " + key + " " + want + " (no firmware inventory member named " + key + ")";
    } else {
      std::string h;
      for (const auto& v : have) h += (h.empty() ? "" : ", ") + v.get<std::string>();
      summary = "flash " + key + " " + want + " (have " + h + ")" +
                (updateable ? "" : " [not updateable: report only]");
      if (!ambiguous.empty()) {
        std::string ids;
        for (const auto& i : ambiguous) ids += (ids.empty() ? "" : ", ") + i.get<std::string>();
        summary += " [" + std::to_string(ambiguous.size()) + " SoftwareInventory members share this name: pin by Id (" + ids + ")]";
      }
    }
    json image = images.is_object() && images.contains(key) ? images[key] : json();
    out.push_back(MakeAction("firmware", "firmware." + key, "firmware." + key,
                             "/firmware/" + schemas::PointerToken(key), std::move(summary),
                             !found ? json() : have.size() == 1 ? have[0] : have, want,
                             Disruption::kFirmwareFlash,
                             {{"component", key}, {"targets", targets}, {"target_ids", target_ids},
                              {"target_names", target_names}, {"image", image},
                              {"order", OrderOf(key)}, {"found", found},
                              {"updateable", updateable}, {"ambiguous", ambiguous}}));
  }
  std::stable_sort(out.begin(), out.end(), [](const Action& x, const Action& y) {
    return x.params["order"].get<int>() < y.params["order"].get<int>();
  });
  return out;
}

Result<FirmwareOutcome> ApplyFirmware(transport::Bmc& bmc, const Action& action,
                                      const UpdateWatch& watch) {
  const json& p = action.params;
  const std::string comp = p.value("component", "");
  const std::string want = action.after.is_string() ? action.after.get<std::string>() : "";
  if (!p.value("found", false)) {
    return Diagnostic::Error("apply.firmware", bmc.Name() + ": no firmware inventory member is named '" +
                                                   comp + "'", {}, action.key,
                             "use a Name, SoftwareId or Id from `plumb bmc inventory`");
  }
  if (p.contains("ambiguous") && p["ambiguous"].is_array() && !p["ambiguous"].empty()) {
    std::string ids;
    for (const auto& i : p["ambiguous"]) ids += (ids.empty() ? "" : ", ") + i.get<std::string>();
    return Diagnostic::Error("apply.firmware.ambiguous",
                             bmc.Name() + ": '" + comp + "' names " + std::to_string(p["ambiguous"].size()) +
                                 " SoftwareInventory members (" + ids + "): which one is meant is not clear",
                             {}, action.key, "pin the one to update by its Id, e.g. firmware: { " +
                                                 p["ambiguous"][0].get<std::string>() + ": \"" + want + "\" }");
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
  Facts svc = FirmwareFacts({{}, us.value(), std::nullopt})["update_service"];
  json targets = p.value("targets", json::array());
  std::vector<SimpleUpdateTarget> target_list;
  for (size_t i = 0; i < targets.size(); ++i) {
    auto at = [&](const char* k) {
      return p.contains(k) && p[k].is_array() && i < p[k].size() ? p[k][i].get<std::string>() : "";
    };
    target_list.push_back({targets[i].get<std::string>(), at("target_ids"), at("target_names")});
  }

  std::string method;
  // Once the BMC took the update, say so before waiting: a run stopped meanwhile must find it.
  transport::TaskWatch task_watch = watch.task;
  auto in_flight = [&](const std::string& task_link, const std::string& monitor) {
    if (watch.task.accepted) watch.task.accepted(task_link, monitor);
    if (watch.in_flight)
      watch.in_flight({{"task", task_link}, {"monitor", monitor}, {"method", method},
                       {"component", comp}, {"wanted", want}});
  };
  task_watch.accepted = in_flight;
  Result<transport::TaskOutcome> task = Diagnostic::Error("apply.firmware", "not started");
  if (p.contains("in_flight") && p["in_flight"].is_object()) {
    // A run stopped while this update was in flight: follow that task, never start another.
    const json& f = p["in_flight"];
    method = f.value("method", "");
    task = bmc.FollowTaskLink(f.value("task", ""), f.value("monitor", ""), watch.task);
  } else if (image.rfind("https://", 0) == 0 || image.rfind("http://", 0) == 0) {
    if (!svc["simple_update"].is_string()) {
      return Diagnostic::Error("apply.firmware", bmc.Name() + ": no SimpleUpdate action; use a file: image for a push update",
                               {}, "firmware_images." + comp);
    }
    const json& action_json = us.value()["Actions"]["#UpdateService.SimpleUpdate"];
    auto spec = transport::ReadActionSpec(bmc, action_json);
    if (!spec.ok()) return spec.error();
    auto body = BuildSimpleUpdate(spec.value(), image, target_list, bmc.Name(), comp);
    if (!body.ok()) return body.error();
    method = "SimpleUpdate";
    task = bmc.PostAction(svc["simple_update"].get<std::string>(), body.value(), task_watch);
  } else {
    std::string file = image.rfind("file:", 0) == 0 ? image.substr(5) : image;
    if (!svc["multipart_push"].is_string()) {
      return Diagnostic::Error("apply.firmware", bmc.Name() + ": no MultipartHttpPushUri; serve the image over https for SimpleUpdate",
                               {}, "firmware_images." + comp);
    }
    json params = {{"Targets", targets}, {"@Redfish.OperationApplyTime", "Immediate"}};
    method = "multipart";
    task = bmc.PostMultipart(svc["multipart_push"].get<std::string>(), params, file, task_watch);
  }
  if (!task.ok()) return task.error();
  const transport::TaskOutcome& t = task.value();
  TaskReport report{t.had_task, t.unknown, t.state, t.task_status, t.EndText(), t.message_ids};
  auto read_versions = [&]() -> Result<std::vector<std::string>> {
    std::vector<std::string> now;
    for (const auto& tl : targets) {
      auto m = bmc.Get(tl.get<std::string>());
      if (!m.ok()) return m.error();
      now.push_back(Trim(StrOf(m.value(), "Version")));
    }
    return now;
  };
  auto now = read_versions();
  if (!now.ok()) return now.error();
  if (InventoryDecides(report)) {
    // The version is the truth here: read it again for a while before an unchanged one counts
    // (a BMC without a TaskService applies a moment after it answered).
    auto shows_wanted = [&](const std::vector<std::string>& v) {
      return std::all_of(v.begin(), v.end(), [&](const std::string& x) { return ShowsVersion(x, want); });
    };
    for (std::chrono::milliseconds waited{0};
         !shows_wanted(now.value()) && waited < watch.settle; waited += watch.settle_poll) {
      if (auto paused = bmc.Pause(watch.settle_poll); !paused.ok()) return paused.error();
      now = read_versions();
      if (!now.ok()) return now.error();
    }
  }
  FirmwareOutcome out = Decide(report, want, now.value());
  out.method = method.empty() ? "the earlier request" : method;
  out.messages = t.messages;
  if (out.failed) {
    std::string msgs;
    for (const auto& m : t.messages) msgs += "; " + m;
    return Diagnostic::Error("apply.firmware",
                             bmc.Name() + ": update of " + comp + " to " + want + " failed: " + out.why + msgs,
                             {}, action.key,
                             t.Known() ? "" : "plumb could not read how the update ended, and the "
                                              "version did not change: check the BMC's task list and "
                                              "`plumb bmc plan` before trying again");
  }
  return out;
}

std::string FirmwareModule::BmcSummary(const Facts& facts) const {
  auto it = facts.find("components");   // a const json's operator[] on a missing key is UB
  return fmt::format("firmware {} components", it != facts.end() ? it->size() : 0);
}

ApplyOutcome FirmwareModule::Apply(NodeContext& ctx, const Action& action) const {
  if (!ctx.bmc) return ApplyOutcome::Failed(NoBmc(Name(), action.id));
  UpdateWatch watch;
  watch.task.progress = ctx.progress;
  watch.in_flight = ctx.in_flight;
  auto r = ApplyFirmware(*ctx.bmc, action, watch);
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return r->staged ? ApplyOutcome::Staged(r->Describe()) : ApplyOutcome::Done(r->Describe());
}

}  // namespace plumb::modules::firmware
