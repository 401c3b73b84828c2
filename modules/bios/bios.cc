#include "modules/bios/bios.h"

#include <fmt/format.h>

#include <algorithm>

#include "modules/bios/attributes.h"
#include "modules/bmc_util.h"
#include "modules/module_util.h"
#include "modules/transport/bmc.h"

namespace plumb::modules::bios {

const ModuleInfo& BiosModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "bios",
      .owns = {"/bios"},
      .channel = Channel::kBmc,
      .after = {},
      .reads = "Redfish Bios and its attribute registry",
      .changes = "the Bios settings object, applied on reset",
      .disruption = Disruption::kReboot};
  return kInfo;
}

namespace {

using nlohmann::json;

// How BIOS values are written on this BMC.
enum class Write {
  kNone,             // no Bios, or @Redfish.Settings whose settings object cannot be found
  kSettingsObject,   // PATCH the settings object; its pending values are readable
  kPatchOnly,        // PATCH a settings object that answers GET with 405 (AMI Bios/SD)
  kInPlace,          // no @Redfish.Settings: PATCH the Bios resource itself (HPE Cray EX)
};

const char* WriteName(Write w) {
  switch (w) {
    case Write::kSettingsObject: return "settings-object";
    case Write::kPatchOnly: return "patch-only";
    case Write::kInPlace: return "in-place";
    default: return nullptr;
  }
}

struct BiosView {
  std::string bios_link;
  json bios;
  json current = json::object();       // name -> current value (object forms read, attributes.h)
  std::string settings;                // PATCH target, "" if none found
  Write write = Write::kNone;
  std::vector<std::string> apply_times;
  json pending_all = json::object();   // the settings object's Attributes (may be everything)
};

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

// What a GET of a settings object candidate says: readable (200), PATCH-only (405: it exists
// but takes no GET), or absent (anything else).
Write ProbeSettings(transport::Bmc& bmc, const std::string& link, json& pending) {
  auto r = bmc.GetRaw(link);
  if (!r.ok()) return Write::kNone;
  if (r.value().status == 200) {
    if (r.value().body.is_object()) pending = CurrentValues(r.value().body.value("Attributes", json::object()));
    return Write::kSettingsObject;
  }
  return r.value().status == 405 ? Write::kPatchOnly : Write::kNone;
}

Result<BiosView> ReadBios(transport::Bmc& bmc) {
  auto sys = GetSystem(bmc);
  if (!sys.ok()) return sys.error();
  BiosView v;
  v.bios_link = LinkOf(sys.value(), "Bios");
  if (v.bios_link.empty()) return v;
  auto bios = bmc.Get(v.bios_link);
  if (!bios.ok()) return bios.error();
  v.bios = bios.value();
  v.current = CurrentValues(v.bios.value("Attributes", json::object()));
  const bool has_settings = v.bios.contains("@Redfish.Settings") && v.bios["@Redfish.Settings"].is_object();
  if (has_settings) {
    const json& rs = v.bios["@Redfish.Settings"];
    v.settings = LinkOf(rs, "SettingsObject");
    for (const auto& t : rs.value("SupportedApplyTimes", json::array())) {
      if (t.is_string()) v.apply_times.push_back(t.get<std::string>());
    }
  }
  if (!v.settings.empty()) {
    v.write = ProbeSettings(bmc, v.settings, v.pending_all);
    if (v.write == Write::kNone) v.write = Write::kSettingsObject;   // named: PATCH it anyway
    return v;
  }
  // No SettingsObject (AMI: @Redfish.Settings without one; Gigabyte: none at all): the places
  // vendors use. AMI's Bios/SD is PATCH-only: its GET answers 405, which still says it exists.
  for (const char* suffix : {"/Settings", "/SD"}) {
    std::string cand = TrimSlash(v.bios_link) + suffix;
    Write w = ProbeSettings(bmc, cand, v.pending_all);
    if (w != Write::kNone) {
      v.settings = cand;
      v.write = w;
      return v;
    }
  }
  if (!has_settings) {
    // DSP0266 "Settings resource": a resource without @Redfish.Settings is written directly.
    v.settings = v.bios_link;
    v.write = Write::kInPlace;
  }
  return v;
}

json PendingDiff(const json& current, const json& settings_attrs) {
  json out = json::object();
  if (!settings_attrs.is_object()) return out;
  for (auto it = settings_attrs.begin(); it != settings_attrs.end(); ++it) {
    if (!current.contains(it.key()) || !SameValue(current[it.key()], it.value())) {
      out[it.key()] = it.value();
    }
  }
  return out;
}

Result<json> FetchRegistry(transport::Bmc& bmc, const std::string& name) {
  auto root = bmc.ServiceRoot();
  if (!root.ok()) return root.error();
  std::string regs = LinkOf(root.value(), "Registries");
  if (regs.empty()) return json();
  auto files = bmc.GetCollection(regs);
  if (!files.ok()) return files.error();
  for (const auto& f : files.value()) {
    // Match the registry name exactly (never by substring).
    if (f.value("Registry", "") != name && f.value("Id", "") != name) continue;
    std::string uri;
    for (const auto& loc : f.value("Location", json::array())) {
      if (!loc.is_object() || !loc.contains("Uri")) continue;
      if (uri.empty() || loc.value("Language", "") == "en") uri = loc["Uri"].get<std::string>();
    }
    if (uri.empty()) return json();
    auto reg = bmc.Get(uri);
    if (!reg.ok()) return reg.error();
    return reg.value().value("RegistryEntries", json::object()).value("Attributes", json::array());
  }
  return json();
}

}  // namespace

std::vector<std::string> CheckAgainstRegistry(const json& attrs, const json& reg) {
  std::vector<std::string> errs;
  for (auto it = attrs.begin(); it != attrs.end(); ++it) {
    const json* entry = nullptr;
    for (const auto& e : reg) {
      if (e.is_object() && e.value("AttributeName", "") == it.key()) { entry = &e; break; }
    }
    const std::string& k = it.key();
    const json& v = it.value();
    if (!entry) { errs.push_back(k + ": not an attribute of this BIOS"); continue; }
    if (entry->value("ReadOnly", false)) { errs.push_back(k + ": read-only"); continue; }
    std::string type = entry->value("Type", "");
    if (type == "Enumeration") {
      std::vector<std::string> names;
      for (const auto& x : entry->value("Value", json::array())) names.push_back(x.value("ValueName", ""));
      std::string s = v.is_string() ? v.get<std::string>() : v.dump();
      if (std::find(names.begin(), names.end(), s) == names.end()) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        errs.push_back(k + ": '" + s + "' is not one of [" + list + "]");
      }
    } else if (type == "Integer") {
      if (!v.is_number_integer()) { errs.push_back(k + ": must be an integer"); continue; }
      long long n = v.get<long long>();
      if (entry->contains("LowerBound") && n < (*entry)["LowerBound"].get<long long>()) {
        errs.push_back(k + ": below " + (*entry)["LowerBound"].dump());
      }
      if (entry->contains("UpperBound") && n > (*entry)["UpperBound"].get<long long>()) {
        errs.push_back(k + ": above " + (*entry)["UpperBound"].dump());
      }
    } else if (type == "Boolean") {
      if (!v.is_boolean()) errs.push_back(k + ": must be true or false");
    } else if (type == "String" || type == "Password") {
      if (!v.is_string()) { errs.push_back(k + ": must be a string"); continue; }
      if (entry->contains("MaxLength") &&
          v.get<std::string>().size() > (*entry)["MaxLength"].get<size_t>()) {
        errs.push_back(k + ": longer than " + (*entry)["MaxLength"].dump());
      }
    }
  }
  return errs;
}

Result<Facts> BiosModule::ProbeBmc(transport::Bmc& bmc) const {
  auto v = ReadBios(bmc);
  if (!v.ok()) return v.error();
  const BiosView& b = v.value();
  const json& attrs = b.current;
  json last = json::array();
  if (b.bios.is_object() && b.bios.contains("@Redfish.Settings")) {
    for (const auto& m : b.bios["@Redfish.Settings"].value("Messages", json::array())) {
      std::string s = m.value("MessageId", "");
      for (const auto& r : m.value("RelatedProperties", json::array())) s += " " + r.get<std::string>();
      last.push_back(s);
    }
  }
  return Facts{{"attributes", attrs},
               {"pending", PendingDiff(attrs, b.pending_all)},
               {"settings", b.settings.empty() ? json() : json(b.settings)},
               {"write", WriteName(b.write) ? json(WriteName(b.write)) : json()},
               {"registry", b.bios.is_object() && b.bios.contains("AttributeRegistry")
                                ? b.bios["AttributeRegistry"] : json()},
               {"apply_times", b.apply_times},
               {"last_apply", last}};
}


std::vector<Action> BiosModule::Diff(const json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  const json& cur = facts.value("attributes", json::object());
  const json& pending = facts.value("pending", json::object());
  json before = json::object(), after = json::object();
  std::vector<std::string> staged, todo;
  for (auto it = desired["bios"].begin(); it != desired["bios"].end(); ++it) {
    const json have = cur.contains(it.key()) ? cur[it.key()] : json();
    if (SameValue(have, it.value())) continue;
    before[it.key()] = have;
    after[it.key()] = it.value();
    bool is_pending = pending.contains(it.key()) && SameValue(pending[it.key()], it.value());
    (is_pending ? staged : todo).push_back(it.key());
  }
  if (after.empty()) return {};
  std::string s;
  for (auto it = after.begin(); it != after.end(); ++it) {
    std::string h = before[it.key()].is_null() ? "unset" : before[it.key()].dump();
    s += (s.empty() ? "" : ", ") + it.key() + "=" + it.value().dump() + " (have " + h + ")";
  }
  return {MakeAction("bios", "bios.attributes", "bios", "/bios",
                     "set BIOS " + s + (todo.empty() ? "; already pending, applies on reset" : ""),
                     before, after, Disruption::kReboot, {{"already_pending", staged}})};
}

Result<std::string> ApplyBios(transport::Bmc& bmc, const Action& action) {
  auto v = ReadBios(bmc);
  if (!v.ok()) return v.error();
  const BiosView& b = v.value();
  if (b.bios_link.empty()) {
    return Diagnostic::Error("apply.bios", bmc.Name() + ": the system has no Bios resource", {}, "bios");
  }
  if (b.write == Write::kNone) {
    return Diagnostic::Error("apply.bios",
                             bmc.Name() + ": no BIOS settings object to PATCH (@Redfish.Settings names "
                                          "none, and neither Bios/Settings nor Bios/SD exists)",
                             {}, "bios");
  }
  // Re-diff against what is pending NOW: an identical pending change is not queued twice.
  const json& current = b.current;
  json stage = json::object();
  for (auto it = action.after.begin(); it != action.after.end(); ++it) {
    const std::string& k = it.key();
    bool pending_same = b.pending_all.contains(k) && SameValue(b.pending_all[k], it.value());
    bool current_same = current.contains(k) && SameValue(current[k], it.value());
    // Skip what is already queued, and what is in effect with nothing else queued over it.
    if (pending_same || (current_same && !b.pending_all.contains(k))) continue;
    stage[k] = it.value();
  }
  if (stage.empty()) return std::string("already pending, applies on reset");
  // Check the values first: against the AttributeRegistry when the BMC has one, else against
  // what the Bios lists (names, and the self-described values of HPE Cray EX).
  std::string checked_by = "the attributes the BIOS lists";
  json entries;
  if (b.bios.contains("AttributeRegistry") && b.bios["AttributeRegistry"].is_string()) {
    auto reg = FetchRegistry(bmc, b.bios["AttributeRegistry"].get<std::string>());
    if (reg.ok() && reg.value().is_array() && !reg.value().empty()) {
      entries = reg.value();
      checked_by = b.bios["AttributeRegistry"].get<std::string>();
    }
  }
  if (entries.is_null()) entries = ListedEntries(b.bios.value("Attributes", json::object()));
  auto errs = CheckAgainstRegistry(stage, entries);
  if (!errs.empty()) {
    std::string msg;
    for (const auto& e : errs) msg += (msg.empty() ? "" : "; ") + e;
    return Diagnostic::Error("apply.bios.registry",
                             bmc.Name() + ": BIOS attributes rejected by " + checked_by + ": " + msg,
                             {}, "bios",
                             entries.empty() ? "this BIOS lists no attributes: it cannot be "
                                               "configured through Redfish"
                                             : "");
  }
  json body = {{"Attributes", stage}};
  // Dell needs an apply time to create the config job; send it only where it is supported.
  if (std::find(b.apply_times.begin(), b.apply_times.end(), "OnReset") != b.apply_times.end()) {
    body["@Redfish.SettingsApplyTime"] = {{"ApplyTime", "OnReset"}};
  }
  auto r = bmc.Patch(b.settings, body);
  if (!r.ok()) {
    Diagnostic d = r.error();
    d.key_path = "bios";
    return d;
  }
  std::string staged = "staged " + std::to_string(stage.size()) + " attribute(s), applies on reset";
  if (b.write == Write::kPatchOnly) {
    return staged + " (" + b.settings + " takes PATCH only: pending values cannot be read back)";
  }
  if (b.write == Write::kInPlace) {
    return staged + " (written to " + b.settings + ": the BIOS has no settings object)";
  }
  return staged;
}

std::string BiosModule::BmcSummary(const Facts& facts) const {
  auto count = [&](const char* key) -> size_t {   // a const json's operator[] on a missing key is UB
    auto it = facts.find(key);
    return it != facts.end() ? it->size() : 0;
  };
  return fmt::format("bios {} attributes ({} pending)", count("attributes"), count("pending"));
}

ApplyOutcome BiosModule::Apply(NodeContext& ctx, const Action& action) const {
  if (!ctx.bmc) return ApplyOutcome::Failed(NoBmc(Name(), action.id));
  auto r = ApplyBios(*ctx.bmc, action);
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  // BIOS settings always wait for a reset; a change already pending is nothing new to do.
  if (r->rfind("already pending", 0) == 0) return ApplyOutcome::NothingToDo(*r);
  return ApplyOutcome::Staged(*r);
}

}  // namespace plumb::modules::bios
