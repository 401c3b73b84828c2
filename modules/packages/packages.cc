#include "modules/packages/packages.h"

#include <fmt/format.h>

#include "modules/module_util.h"
#include "modules/package_map.h"
#include "modules/packages/parse.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::packages {

const ModuleInfo& PackagesModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "packages",
      .owns = {"/packages"},
      .channel = Channel::kInBand,
      .after = {"nvidia_driver", "cuda"},
      .reads = "`dpkg-query -W` / `rpm -qa` + the versionlock list",
      .changes = "`apt-get install name=version` / `dnf install name-version` + `dnf versionlock add`",
      .disruption = Disruption::kDrain};
  return kInfo;
}

std::string PackageListSnippet(std::string_view part, const std::vector<std::string>& deb_names,
                               const std::vector<std::string>& rpm_names, bool all) {
  std::string deb = fmt::format("plumb_run {} dpkg-query -W -f='{}'", part, kDpkgFormat);
  std::string rpm = fmt::format("plumb_run {} rpm -q{} --qf '{}'", part, all ? "a" : "", kRpmFormat);
  for (const auto& n : deb_names) deb += " " + transport::ShellQuote(n);
  for (const auto& n : rpm_names) rpm += " " + transport::ShellQuote(n);
  return fmt::format(
      "if command -v dpkg-query >/dev/null 2>&1; then {}\n"
      "elif command -v rpm >/dev/null 2>&1; then {}\n"
      "else plumb_begin {}; echo 'plumb-absent: dpkg-query'; plumb_end {} 127; fi\n{}",
      deb, rpm, part, part, kPackageManagerSnippet);
}

std::string PackagesModule::ProbeScript() const {
  // rpm: what dnf versionlock holds (the plugin's list file; absent: nothing locked)
  return PackageListSnippet("list", {}, {}, true) +
         "\nif ! command -v dpkg-query >/dev/null 2>&1 && command -v rpm >/dev/null 2>&1; then "
         "plumb_cat locks /etc/dnf/plugins/versionlock.list; fi\n";
}

Result<Facts> PackagesModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}


std::vector<Action> PackagesModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  std::string manager = StringField(facts, "manager");
  for (const auto& [name, v] : desired["packages"].items()) {
    std::string want = ScalarString(v);
    const auto* have = Lookup(facts, {"packages", name});
    std::vector<std::string> versions;
    bool held = false;
    if (have && have->is_object()) {
      if (auto vs = have->find("versions"); vs != have->end() && vs->is_array()) {
        for (const auto& x : *vs)
          if (x.is_string()) versions.push_back(x.get<std::string>());
      } else if (auto one = have->find("version"); one != have->end() && one->is_string()) {
        versions.push_back(one->get<std::string>());
      }
      // A recorded snapshot is not type-checked: a "held" that is not a boolean is not held
      // (value() would throw and end the whole plan over one node's odd field).
      if (auto h = have->find("held"); h != have->end() && h->is_boolean()) held = h->get<bool>();
    }
    bool ok = false;
    for (const auto& h : versions) ok = ok || VersionMatches(manager, want, h);
    if (ok) continue;
    std::string current = versions.empty() ? "" : versions.back();
    actions.push_back(MakeAction(
        Name(), "packages." + name, "packages." + name, "/packages/" + schemas::PointerToken(name),
        fmt::format("install {} {} (have {})", name, want, current.empty() ? "none" : current),
        current.empty() ? nlohmann::json() : nlohmann::json(current), want, Disruption::kDrain,
        {{"manager", manager}, {"package", name}, {"held", held},
         {"commands", InstallCommands(manager, {{name, want, ""}},
                                      held ? std::vector<std::string>{name} : std::vector<std::string>{})}}));
  }
  return actions;
}

ApplyOutcome PackagesModule::Apply(NodeContext& ctx, const Action& action) const {
  std::string name = action.params.value("package", "");
  if (name.empty() || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string manager = action.params.value("manager", "");
  std::vector<std::string> held;
  if (action.params.value("held", false)) held.push_back(name);
  return ApplyOutcome::From(InstallPins(ctx, Name(), manager, {{name, action.after.get<std::string>(), ""}}, held));
}

}  // namespace plumb::modules::packages
