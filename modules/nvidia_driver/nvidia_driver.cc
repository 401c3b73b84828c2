#include "modules/nvidia_driver/nvidia_driver.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/module_util.h"
#include "modules/nvidia_driver/parse.h"
#include "modules/package_map.h"
#include "modules/pinned_packages.h"

namespace plumb::modules::nvidia_driver {
namespace {

// On rpm the driver's branch is a module stream of NVIDIA's repo (enabled before the install).
std::string DriverStream(std::string_view version, std::string_view manager) {
  return manager == "rpm" ? DriverModuleStream(version) : std::string();
}

}  // namespace

const ModuleInfo& NvidiaDriverModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "nvidia_driver",
      .owns = {"/nvidia/driver", "/nvidia/fabricmanager", "/nvidia/persistence_mode"},
      .channel = Channel::kInBand,
      .after = {"kernel"},
      .reads = "`/proc/driver/nvidia/version`, `nvidia-smi --query-gpu`, `modinfo`, `nv-fabricmanager "
      "--version`, `systemctl show`, the pins' packages",
      .changes = "pinned install; `nvidia-smi -pm`",
      .disruption = Disruption::kReboot,
      .disruption_by_key = {{"/nvidia/fabricmanager", Disruption::kDrain}, {"/nvidia/persistence_mode", Disruption::kNone}}};
  return kInfo;
}

std::string NvidiaDriverModule::ProbeScript() const {
  return std::string(
             "plumb_cat proc_version /proc/driver/nvidia/version\n"
             "plumb_run smi nvidia-smi "
             "--query-gpu=index,pci.bus_id,name,driver_version,persistence_mode "
             "--format=csv,noheader\n"
             "plumb_run modinfo modinfo -F version nvidia\n"
             "plumb_run fm_version nv-fabricmanager --version\n"
             "plumb_run fm_service systemctl show -p LoadState -p ActiveState -p SubState "
             "-p UnitFileState nvidia-fabricmanager.service\n") +
         PinnedPackagesSnippet({"nvidia-driver-*", "cuda-drivers*", "nvidia-fabricmanager-*",
                                "libnvidia-nscq-*"},
                               {"nvidia-driver*", "cuda-drivers*", "nvidia-fabric*manager*",
                                "libnvidia-nscq*"});
}

Result<Facts> NvidiaDriverModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  Facts facts = FactsFromParts(*parts);
  // Every package its pins install, each (an install cut short is not a finished one).
  AddPinnedPackages(*parts, Name(), facts);
  return facts;
}


std::vector<Action> NvidiaDriverModule::Diff(const nlohmann::json& desired,
                                             const Facts& facts) const {
  std::vector<Action> actions;
  std::string manager = StringField(facts, "manager");
  auto driverCommands = [&](const std::string& v) {
    return InstallCommands(manager, DriverPackages(v, manager), {}, DriverStream(v, manager));
  };
  auto orNull = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  if (const auto* d = Lookup(desired, {"nvidia", "driver"}); d && d->is_string()) {
    std::string want = d->get<std::string>();
    std::string loaded = StringField(facts, "loaded_version");
    std::string installed = StringField(facts, "installed_version");
    // Every package of the pin, not only the version the kernel module shows: an install cut
    // short leaves cuda-drivers-550 in and nvidia-driver-550 half-installed, and 550 "loaded".
    const std::vector<std::string> gaps =
        PinGaps(DriverPackages(want, manager), facts.value("packages", nlohmann::json()), manager);
    if (!gaps.empty()) {
      actions.push_back(MakeAction(
          Name(), "nvidia_driver.install", "nvidia.driver", "/nvidia/driver",
          fmt::format("install {} (have {}; {})", want, loaded.empty() ? "none" : loaded,
                      fmt::join(gaps, "; ")),
          orNull(loaded), want, Disruption::kReboot,
          // The gaps say why, where "have" alone would read as no change (550 -> 550).
          {{"install", true}, {"manager", manager}, {"commands", driverCommands(want)}, {"gaps", gaps}}));
    } else if (loaded != want) {
      if (installed == want) {
        // Installed on disk but another version is loaded (or NVML mismatched): only the
        // reboot is left to do.
        actions.push_back(MakeAction(
            Name(), "nvidia_driver.reboot", "nvidia.driver", "/nvidia/driver",
            fmt::format("reboot to load {} (installed; loaded {})", want,
                        loaded.empty() ? "none" : loaded),
            orNull(loaded), want, Disruption::kReboot, {{"install", false}, {"manager", manager}}));
      } else {
        actions.push_back(MakeAction(
            Name(), "nvidia_driver.install", "nvidia.driver", "/nvidia/driver",
            fmt::format("install {} (have {})", want, loaded.empty() ? "none" : loaded),
            orNull(loaded), want, Disruption::kReboot,
            {{"install", true}, {"manager", manager}, {"commands", driverCommands(want)}}));
      }
    }
  }
  if (const auto* d = Lookup(desired, {"nvidia", "fabricmanager"}); d && d->is_string()) {
    std::string want = d->get<std::string>();
    const auto* v = Lookup(facts, {"fabricmanager", "version"});
    std::string have = v && v->is_string() ? v->get<std::string>() : "";
    const std::vector<std::string> gaps = PinGaps(FabricManagerPackages(want, manager),
                                                  facts.value("packages", nlohmann::json()), manager);
    if (have != want || !gaps.empty()) {
      nlohmann::json params = {{"manager", manager},
                               {"commands", InstallCommands(manager, FabricManagerPackages(want, manager))}};
      if (!gaps.empty()) params["gaps"] = gaps;
      actions.push_back(MakeAction(
          Name(), "nvidia_driver.fabricmanager", "nvidia.fabricmanager", "/nvidia/fabricmanager",
          gaps.empty() ? fmt::format("install fabric manager {} (have {})", want, have.empty() ? "none" : have)
                       : fmt::format("install fabric manager {} (have {}; {})", want, have.empty() ? "none" : have,
                                     fmt::join(gaps, "; ")),
          orNull(have), want, Disruption::kDrain, std::move(params)));
    }
  }
  if (const auto* d = Lookup(desired, {"nvidia", "persistence_mode"}); d && d->is_boolean()) {
    bool want = d->get<bool>();
    const auto* have = Lookup(facts, {"persistence_mode"});
    if (!have || !have->is_boolean() || have->get<bool>() != want)
      actions.push_back(MakeAction(
          Name(), "nvidia_driver.persistence_mode", "nvidia.persistence_mode",
          "/nvidia/persistence_mode",
          fmt::format("{} persistence mode (now {})", want ? "enable" : "disable",
                      have && have->is_boolean() ? (have->get<bool>() ? "enabled" : "disabled")
                                                 : "unknown"),
          have ? *have : nlohmann::json(), want, Disruption::kNone));
  }
  return actions;
}

ApplyOutcome NvidiaDriverModule::Apply(NodeContext& ctx, const Action& action) const {
  std::string manager = action.params.value("manager", "");
  if (action.id == "nvidia_driver.install" && action.after.is_string()) {
    const std::string v = action.after.get<std::string>();
    return ApplyOutcome::From(
        InstallPins(ctx, Name(), manager, DriverPackages(v, manager), {}, DriverStream(v, manager)));
  }
  if (action.id == "nvidia_driver.reboot")   // installed already: the engine's reboot loads it
    return ApplyOutcome::NothingToDo("installed; the reboot loads it");
  if (action.id == "nvidia_driver.fabricmanager" && action.after.is_string())
    return ApplyOutcome::From(InstallPins(ctx, Name(), manager,
                       FabricManagerPackages(action.after.get<std::string>(), manager)));
  if (action.id == "nvidia_driver.persistence_mode" && action.after.is_boolean()) {
    auto r = RunChecked(ctx, Name(), action.after.get<bool>() ? "nvidia-smi -pm 1" : "nvidia-smi -pm 0");
    if (!r.ok()) return ApplyOutcome::Failed(r.error());
    return ApplyOutcome::Done();
  }
  return Module::Apply(ctx, action);
}

}  // namespace plumb::modules::nvidia_driver
