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
      .reads = "`uname -r`, boot id, the default boot entry (`grubby --default-kernel`; grub.cfg + "
               "`grub-editenv list`)",
      .changes = "install the kernel packages; make it the default boot entry (`grubby "
                 "--set-default`; GRUB_DEFAULT=saved + `update-grub` + `grub-set-default`)",
      .disruption = Disruption::kReboot,
      .boot_id_key = "boot_id"};
  return kInfo;
}

namespace {

// Ubuntu boots entry 0 (the newest kernel) unless GRUB_DEFAULT=saved; update-grub writes it
// into grub.cfg, grub-set-default saves an entry in grubenv.
constexpr std::string_view kGrubDefaultSaved =
    "if ! grep -qx 'GRUB_DEFAULT=saved' /etc/default/grub; then "
    "sed -i '/^GRUB_DEFAULT=/d' /etc/default/grub && echo GRUB_DEFAULT=saved >>/etc/default/grub; fi";

// The pin's entry is looked up in grub.cfg, not assumed: titles differ by distribution
// ("Ubuntu, with Linux R", "Debian GNU/Linux, with Linux R") and by layout
// (GRUB_DISABLE_SUBMENU=y). It is found before anything is changed (after an update-grub if the
// menu does not list the pin yet), so a pin GRUB cannot boot leaves /etc/default/grub as it
// was. Then GRUB_DEFAULT=saved, update-grub, grub-set-default, and the next boot is read back:
// a setting that does not take (GRUB_DEFAULT set again in /etc/default/grub.d) fails here,
// named, instead of being planned again on every run.
Status MakeGrubDefault(NodeContext& ctx, std::string_view module, const std::string& release) {
  auto lookup = [&]() -> Result<std::string> {
    auto menu = RunChecked(ctx, module, std::string(kGrubReadCommand));
    if (!menu.ok()) return menu.error();
    return GrubEntryFor(menu->out, release);
  };
  auto entry = lookup();
  if (!entry.ok()) {
    if (auto r = RunChecked(ctx, module, "update-grub"); !r.ok()) return r.error();
    entry = lookup();
    if (!entry.ok()) return entry.error();
  }
  for (std::string_view cmd : {kGrubDefaultSaved, std::string_view("update-grub")})
    if (auto r = RunChecked(ctx, module, std::string(cmd)); !r.ok()) return r.error();
  if (auto r = RunChecked(ctx, module, "grub-set-default " + transport::ShellQuote(*entry)); !r.ok())
    return r.error();
  auto after = RunChecked(ctx, module, std::string(kGrubReadCommand));
  if (!after.ok()) return after.error();
  auto next = ParseGrubNextBoot(after->out);
  if (next.ok() && *next == release) return OkStatus();
  // The pointer is in the message itself: a run's step log shows messages, not hints.
  return Diagnostic::Error(
      "apply.kernel",
      fmt::format("grub-set-default '{}' did not take effect: the next boot would run {} "
                  "(GRUB_DEFAULT must be 'saved' where update-grub reads it last: a file in "
                  "/etc/default/grub.d that sets it wins over /etc/default/grub)",
                  *entry, next.ok() ? *next : "an unknown kernel (" + next.error().message + ")"),
      {}, "kernel", "remove or fix the GRUB_DEFAULT in /etc/default/grub.d/*.cfg, then apply again");
}

}  // namespace

std::string KernelModule::ProbeScript() const {
  // "boot": what the next boot runs. RHEL: grubby. Debian/Ubuntu: the lines of grub.cfg that
  // decide it (as update-grub last wrote them) and the saved/next entry in grubenv.
  return std::string(
             "plumb_run release uname -r\n"
             "plumb_cat boot_id /proc/sys/kernel/random/boot_id\n"
             "if command -v grubby >/dev/null 2>&1; then plumb_run boot grubby --default-kernel\n"
             "elif [ -r /boot/grub/grub.cfg ]; then plumb_begin boot; ") +
         std::string(kGrubReadCommand) + "; plumb_end boot $?\nfi\n" +
         std::string(kPackageManagerSnippet);
}

std::vector<std::string> KernelDefaultCommands(std::string_view release, std::string_view manager) {
  if (manager == "rpm")
    return {"grubby --set-default " + transport::ShellQuote("/boot/vmlinuz-" + std::string(release))};
  if (manager != "dpkg") return {};
  // The entry is known only once update-grub has run (MakeGrubDefault): shown as what it is.
  return {std::string(kGrubDefaultSaved), "update-grub",
          "grub-set-default <the entry of /boot/grub/grub.cfg that boots /boot/vmlinuz-" +
              std::string(release) + ", read back after>"};
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
  std::string next = StringField(facts, "next_boot");
  std::string manager = StringField(facts, "manager");
  auto commands = [&](bool install) {
    std::vector<std::string> cmds;
    if (install) cmds = InstallCommands(manager, KernelPackages(want, manager));
    for (std::string& c : KernelDefaultCommands(want, manager)) cmds.push_back(std::move(c));
    return cmds;
  };
  if (have == want) {
    // Running the pin, but another kernel boots next (a newer one installed since): the next
    // reboot, planned or not, would leave the pin.
    if (next.empty() || next == want) return {};
    return {MakeAction(Name(), "kernel.default", "kernel", "/kernel",
                       fmt::format("make {} the default boot entry (the next boot would run {})", want, next),
                       next, want, Disruption::kNone,
                       {{"manager", manager}, {"commands", commands(false)}})};
  }
  nlohmann::json before = have.empty() ? nlohmann::json() : nlohmann::json(have);
  return {MakeAction(Name(), "kernel.install", "kernel", "/kernel",
                     fmt::format("install kernel {} and reboot (running {})", want,
                                 have.empty() ? "unknown" : have),
                     before, want, Disruption::kReboot,
                     {{"manager", manager}, {"commands", commands(true)}})};
}

ApplyOutcome KernelModule::Apply(NodeContext& ctx, const Action& action) const {
  if ((action.id != "kernel.install" && action.id != "kernel.default") || !action.after.is_string())
    return Module::Apply(ctx, action);
  std::string release = action.after.get<std::string>();
  std::string manager = action.params.value("manager", "");
  if (action.id == "kernel.install") {
    auto st = InstallPins(ctx, Name(), manager, KernelPackages(release, manager));
    if (!st.ok()) return ApplyOutcome::Failed(st.error());
  }
  // Installing a kernel does not make it the one that boots: Ubuntu boots the newest installed
  // (GRUB_DEFAULT=0), RHEL the last installed (UPDATEDEFAULT=yes). A pin may be neither.
  if (manager == "dpkg") {
    if (Status st = MakeGrubDefault(ctx, Name(), release); !st.ok()) return ApplyOutcome::Failed(st.error());
    return ApplyOutcome::Done();
  }
  for (const std::string& cmd : KernelDefaultCommands(release, manager)) {
    auto r = RunChecked(ctx, Name(), cmd);
    if (!r.ok()) return ApplyOutcome::Failed(r.error());
  }
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::kernel
