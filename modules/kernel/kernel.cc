#include "modules/kernel/kernel.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/kernel/parse.h"
#include "modules/module_util.h"
#include "modules/package_map.h"

namespace plumb::modules::kernel {

const ModuleInfo& KernelModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "kernel",
      .owns = {"/kernel"},
      .channel = Channel::kInBand,
      .after = {},
      .reads = "`uname -r`, boot id, the kernel packages",
      .changes = "install the kernel packages (grubby default on rpm)",
      .disruption = Disruption::kReboot};
  return kInfo;
}

std::string KernelModule::ProbeScript() const {
  return std::string(
             "plumb_run release uname -r\n"
             "plumb_cat boot_id /proc/sys/kernel/random/boot_id\n") +
         std::string(kPackageManagerSnippet);
}

Result<Facts> KernelModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(FactsFromParts(*parts));
}


std::vector<Action> KernelModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired)) return {};
  std::string want = desired["kernel"].get<std::string>();
  std::string have = StringField(facts, "release");
  if (have == want) return {};
  nlohmann::json before = have.empty() ? nlohmann::json() : nlohmann::json(have);
  return {MakeAction(Name(), "kernel.install", "kernel", "/kernel",
                     fmt::format("install kernel {} and reboot (running {})", want,
                                 have.empty() ? "unknown" : have),
                     before, want, Disruption::kReboot,
                     {{"manager", StringField(facts, "manager")}})};
}

ApplyOutcome KernelModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "kernel.install" || !action.after.is_string())
    return Module::Apply(ctx, action);
  std::string release = action.after.get<std::string>();
  std::string manager = action.params.value("manager", "");
  auto st = InstallPins(ctx, Name(), manager, KernelPackages(release, manager));
  if (!st.ok()) return ApplyOutcome::Failed(st.error());
  if (manager == "rpm") {
    // dnf makes the newest kernel the default; a pin may be older, so say which one boots.
    auto r = RunChecked(ctx, Name(),
                        "grubby --set-default " + transport::ShellQuote("/boot/vmlinuz-" + release));
    if (!r.ok()) return ApplyOutcome::Failed(r.error());
  }
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::kernel
