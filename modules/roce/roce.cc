#include "modules/roce/roce.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/module_util.h"
#include "modules/roce/parse.h"

namespace plumb::modules::roce {

const ModuleInfo& RoceModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "roce",
      .owns = {"/fabric/roce"},
      .channel = Channel::kInBand,
      .after = {"ofed"},   // mlnx_qos and the ECN sysfs come with MLNX_OFED / DOCA-OFED
      .reads = "`mlnx_qos -i`, `/sys/class/net/*/ecn/roce_{np,rp}/enable/*`, /etc/plumb/roce.d, "
               "`systemctl is-enabled plumb-roce`",
      .changes = "`mlnx_qos --trust` / `--pfc`, ECN sysfs writes; each kept in /etc/plumb/roce.d and "
                 "replayed at boot by plumb-roce.service",
      .disruption = Disruption::kServiceRestart,   // trust and PFC restart the port's queues
      .disruption_by_key = {{"/fabric/roce/ecn", Disruption::kNone}}};
  return kInfo;
}

namespace {

using transport::ShellQuote;

constexpr const char* kManualHint =
    "plumb cannot fix this in-band; fix the node, then re-run plumb: the re-probe will find it";

// Why trust and PFC are service-restart, not none: mlx5 reprograms the port's receive buffers
// and priority classification when either changes, so RoCE traffic on the port stalls for a
// moment and packets classified under the old setting may be dropped (RDMA retransmits them).
// No process restarts, RDMA connections stay up and nothing needs a drain. ECN only changes how
// congestion is signalled, packet by packet: none.
constexpr Disruption kQosDisruption = Disruption::kServiceRestart;
constexpr Disruption kEcnDisruption = Disruption::kNone;

// A desired priority list as the ascending set it means ([3, 3, 1] -> [1, 3]).
nlohmann::json PrioritySet(const nlohmann::json& list) {
  std::set<int> s;
  if (list.is_array())
    for (const auto& p : list)
      if (p.is_number_integer() && p.get<int>() >= 0 && p.get<int>() <= 7) s.insert(p.get<int>());
  return nlohmann::json(std::vector<int>(s.begin(), s.end()));
}

// [3] -> "0,0,0,1,0,0,0,0": mlnx_qos --pfc's form, one flag per priority 0..7.
std::string PfcFlags(const nlohmann::json& priorities) {
  std::string out;
  for (int p = 0; p < 8; ++p) {
    bool on = std::find(priorities.begin(), priorities.end(), nlohmann::json(p)) != priorities.end();
    out += (p ? "," : "");
    out += on ? "1" : "0";
  }
  return out;
}

bool IsPriorityList(const nlohmann::json& v) {
  if (!v.is_array()) return false;
  for (const auto& p : v)
    if (!p.is_number_integer() || p.get<long long>() < 0 || p.get<long long>() > 7) return false;
  return true;
}

// The oneshot unit that replays /etc/plumb/roce.d at boot. After openibd (MLNX_OFED's driver
// start, where it is used) and before the network is configured, so RoCE traffic starts with the
// pinned QoS. Every file runs even when one fails (a netdev missing at boot costs only its own
// settings); the unit fails at the end if any did. `$$` is systemd's escape for a literal `$`.
constexpr const char* kRestoreUnitText =
    "# Written by plumb (roce module): replays the RoCE QoS settings plumb applied, which the NIC\n"
    "# forgets at a reboot or driver reload. One command per file in /etc/plumb/roce.d.\n"
    "[Unit]\n"
    "Description=plumb: RoCE QoS (trust, PFC, ECN) as pinned\n"
    "After=openibd.service network-pre.target\n"
    "Before=network.target\n"
    "\n"
    "[Service]\n"
    "Type=oneshot\n"
    "RemainAfterExit=yes\n"
    "ExecStart=/bin/sh -c 'rc=0; for f in /etc/plumb/roce.d/*.sh; do [ ! -e \"$$f\" ] || sh \"$$f\" || rc=1; done; exit $$rc'\n"
    "\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n";

std::string PersistPath(const std::string& iface, const std::string& setting) {
  return fmt::format("{}/{}.{}.sh", roce::kPersistDir, iface, setting);
}

// The one command that sets `setting` of netdev `iface` to `after` ("" when plumb refuses the
// value): what apply runs and what it persists for the boot-time restore.
std::string SettingCommand(const std::string& iface, const std::string& setting, const nlohmann::json& after) {
  if (!IsSafeInterface(iface)) return "";
  const std::string mlnx_qos = "mlnx_qos -i " + ShellQuote(iface);
  if (setting == "trust") {
    if (!after.is_string() || (after != "pcp" && after != "dscp")) return "";
    return mlnx_qos + " --trust " + ShellQuote(after.get<std::string>());
  }
  if (!IsPriorityList(after)) return "";
  if (setting == "pfc") return mlnx_qos + " --pfc " + ShellQuote(PfcFlags(after));
  if (setting == "ecn") {
    // Every priority of both halves of RoCE congestion control, so the set is exactly `after`;
    // one command, so a failed write stops the rest and is reported with its file.
    std::string cmd;
    for (const char* half : {"roce_np", "roce_rp"})
      for (int p = 0; p < 8; ++p) {
        bool on = std::find(after.begin(), after.end(), nlohmann::json(p)) != after.end();
        cmd += fmt::format("{}echo {} > {}", cmd.empty() ? "" : " && ", ShellQuote(on ? "1" : "0"),
                           ShellQuote(fmt::format("/sys/class/net/{}/ecn/{}/enable/{}", iface, half, p)));
      }
    return cmd;
  }
  return "";
}

// Writes `command` as the persisted form of (iface, setting): a temporary file, flushed, renamed
// over the old one, so a crash or power loss leaves the old command or the new one, never half.
std::string PersistCommand(const std::string& iface, const std::string& setting, const std::string& command) {
  const std::string path = PersistPath(iface, setting);
  return fmt::format("mkdir -p {} && printf '%s\\n' {} > {} && sync {} && mv -f {} {}",
                     ShellQuote(std::string(roce::kPersistDir)), ShellQuote(command), ShellQuote(path + ".tmp"),
                     ShellQuote(path + ".tmp"), ShellQuote(path + ".tmp"), ShellQuote(path));
}

std::vector<std::string> RestoreUnitCommands() {
  const std::string path = fmt::format("/etc/systemd/system/{}", roce::kRestoreUnit);
  return {fmt::format("mkdir -p /etc/systemd/system && printf '%s' {} > {} && mv -f {} {}", ShellQuote(kRestoreUnitText),
                      ShellQuote(path + ".tmp"), ShellQuote(path + ".tmp"), ShellQuote(path)),
          "systemctl daemon-reload", fmt::format("systemctl enable {}", ShellQuote(std::string(roce::kRestoreUnit)))};
}

}  // namespace

std::string RoceModule::ProbeScript() const {
  // The mlx5 Ethernet netdevs (type 1 is ARPHRD_ETHER: not IPoIB, which mlx5 drives too). Each
  // gets its own mlnx_qos part, named after it, so one bad netdev costs only its own facts.
  return "plumb_roce_list=\n"
         "for plumb_roce_d in /sys/class/net/*; do\n"
         "  [ -r \"$plumb_roce_d/type\" ] || continue\n"
         "  read -r plumb_roce_ty <\"$plumb_roce_d/type\"\n"
         "  [ \"$plumb_roce_ty\" = 1 ] || continue\n"
         "  case $(readlink \"$plumb_roce_d/device/driver\" 2>/dev/null) in\n"
         "    */mlx5_core) plumb_roce_list=\"$plumb_roce_list ${plumb_roce_d##*/}\" ;;\n"
         "  esac\n"
         "done\n"
         "plumb_begin interfaces\n"
         "for plumb_roce_i in $plumb_roce_list; do printf '%s\\n' \"$plumb_roce_i\"; done\n"
         "plumb_end interfaces 0\n"
         "plumb_begin tool; command -v mlnx_qos; plumb_end tool $?\n"
         "for plumb_roce_i in $plumb_roce_list; do plumb_run \"qos.$plumb_roce_i\" mlnx_qos -i \"$plumb_roce_i\"; done\n"
         "plumb_begin ecn\n"
         "for plumb_roce_i in $plumb_roce_list; do\n"
         "  grep -H '' \"/sys/class/net/$plumb_roce_i/ecn/\"roce_[nr]p/enable/[0-7] 2>/dev/null\n"
         "done\n"
         "plumb_end ecn 0\n" +
         fmt::format("plumb_begin persisted\n"
                     "grep -H '' {}/*.sh 2>/dev/null\n"
                     "plumb_end persisted 0\n"
                     "plumb_begin restore_unit\n"
                     "if command -v systemctl >/dev/null 2>&1; then systemctl is-enabled {} 2>/dev/null; "
                     "else echo no-systemd; fi\n"
                     "plumb_end restore_unit 0",
                     roce::kPersistDir, roce::kRestoreUnit);
}

Result<Facts> RoceModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(FactsFromParts(*parts));
}

std::vector<Action> RoceModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  const auto& want = desired["fabric"]["roce"];
  auto manual = [&](std::string id, std::string field, std::string summary, nlohmann::json before,
                    nlohmann::json after, std::string member = {}) {
    std::string key = field.empty() ? "fabric.roce" : "fabric.roce." + field;
    std::string pointer = field.empty() ? "/fabric/roce" : "/fabric/roce/" + field;
    nlohmann::json params = {{"manual", true}};
    if (!member.empty()) params["member"] = std::move(member);   // the interface it is about
    actions.push_back(MakeAction(Name(), std::move(id), key, pointer,
                                 fmt::format("{} ({})", summary, kManualHint), std::move(before),
                                 std::move(after), Disruption::kNone, std::move(params)));
  };

  std::map<std::string, const nlohmann::json*> observed;
  if (const auto* list = Lookup(facts, {"interfaces"}); list && list->is_array())
    for (const auto& i : *list)
      if (i.is_object()) observed[StringField(i, "name")] = &i;
  const nlohmann::json* kept_all = Lookup(facts, {"persisted"});
  std::vector<std::string> targets;
  if (auto l = want.find("interfaces"); l != want.end() && l->is_array()) {
    for (const auto& n : *l)
      if (n.is_string()) targets.push_back(n.get<std::string>());
  } else {
    for (const auto& [name, _] : observed) targets.push_back(name);
  }
  if (targets.empty()) {
    manual("roce.interfaces", "", "no RoCE netdev found (no Ethernet netdev of the mlx5_core driver)",
           nullptr, want);
    return actions;
  }

  const auto trust = want.find("trust");
  const auto pfc = want.find("pfc");
  const auto ecn = want.find("ecn");
  const bool pins_qos = (trust != want.end() && trust->is_string()) || (pfc != want.end() && pfc->is_array());
  // mlnx_qos unread (null) is not "missing": only a probe that looked and found none says so.
  const auto* tool = Lookup(facts, {"mlnx_qos"});
  const bool have_tool = !(tool && tool->is_boolean() && !tool->get<bool>());
  if (pins_qos && !have_tool)
    manual("roce.mlnx_qos", "", "mlnx_qos is not installed (it comes with MLNX_OFED / DOCA-OFED's mlnx-tools)",
           nullptr, want);

  for (const std::string& name : targets) {
    auto o = observed.find(name);
    if (o == observed.end()) {
      manual(fmt::format("roce.{}.missing", name), "interfaces",
             fmt::format("{}: no such mlx5 Ethernet netdev on this node", name), nullptr, name, name);
      continue;
    }
    const nlohmann::json& have = *o->second;
    auto change = [&](const char* field, nlohmann::json before, nlohmann::json after, Disruption d,
                      std::string summary) {
      actions.push_back(MakeAction(Name(), fmt::format("roce.{}.{}", name, field),
                                   fmt::format("fabric.roce.{}", field), fmt::format("/fabric/roce/{}", field),
                                   fmt::format("{}: {}", name, summary), std::move(before), std::move(after), d,
                                   {{"interface", name}, {"setting", field}, {"member", name}}));
    };
    std::vector<std::pair<std::string, nlohmann::json>> in_sync;   // right on the NIC now
    if (pins_qos && have_tool) {
      if (trust != want.end() && trust->is_string()) {
        const auto& t = have.value("trust", nlohmann::json());
        if (t != *trust)
          change("trust", t, *trust, kQosDisruption,
                 fmt::format("trust {} (have {})", trust->get<std::string>(), t.is_string() ? t.get<std::string>() : "unread"));
        else
          in_sync.emplace_back("trust", *trust);
      }
      if (pfc != want.end() && pfc->is_array()) {
        nlohmann::json w = PrioritySet(*pfc);
        const auto& p = have.value("pfc", nlohmann::json());
        if (p != w) change("pfc", p, w, kQosDisruption, fmt::format("PFC on priorities {} (have {})", w.dump(), p.dump()));
        else in_sync.emplace_back("pfc", w);
      }
    }
    if (ecn != want.end() && ecn->is_array()) {
      nlohmann::json w = PrioritySet(*ecn);
      const auto& np = have.value("ecn_np", nlohmann::json());
      const auto& rp = have.value("ecn_rp", nlohmann::json());
      if (np.is_null() || rp.is_null()) {
        manual(fmt::format("roce.{}.ecn", name), "ecn",
               fmt::format("{}: no RoCE ECN sysfs (/sys/class/net/{}/ecn/roce_np, roce_rp: MLNX_OFED's mlx5 driver)",
                           name, name),
               nullptr, w);
      } else if (np != w || rp != w) {
        nlohmann::json before = np == rp ? np : nlohmann::json{{"roce_np", np}, {"roce_rp", rp}};
        change("ecn", before, w, kEcnDisruption, fmt::format("ECN on priorities {} (have {})", w.dump(), before.dump()));
      } else {
        in_sync.emplace_back("ecn", w);
      }
    }

    // A setting right on the NIC but not persisted as pinned is lost at the next reboot: keep it
    // (no disruption: only a file is written). Unread persistence (null) is not judged.
    if (kept_all == nullptr || !kept_all->is_object()) continue;
    static const nlohmann::json kNothing = nlohmann::json::object();
    auto kept_here = kept_all->find(name);
    const nlohmann::json& persisted =
        kept_here != kept_all->end() && kept_here->is_object() ? *kept_here : kNothing;
    for (const auto& [setting, value] : in_sync) {
      const std::string command = SettingCommand(name, setting, value);
      auto kept = persisted.find(setting);
      if (command.empty() || (kept != persisted.end() && *kept == command)) continue;
      const bool missing = kept == persisted.end();
      actions.push_back(MakeAction(
          Name(), fmt::format("roce.{}.{}.persist", name, setting), fmt::format("fabric.roce.{}", setting),
          fmt::format("/fabric/roce/{}", setting),
          fmt::format("{}: {} {} is set but {} {}: the NIC loses it at the next reboot", name, setting, value.dump(),
                      missing ? "not kept in" : "kept differently in", PersistPath(name, setting)),
          missing ? nlohmann::json("not persisted") : nlohmann::json("persisted differently"), value, Disruption::kNone,
          {{"interface", name}, {"setting", setting}, {"persist_only", true}, {"member", name}}));
    }
  }

  // A kept file no pin asks for any more (the pin removed, `interfaces` narrowed, the NIC
  // swapped) would set its value again at every boot: forget it.
  if (kept_all != nullptr && kept_all->is_object()) {
    auto pinned = [&](const std::string& setting) {
      if (setting == "trust") return trust != want.end() && trust->is_string();
      if (setting == "pfc") return pfc != want.end() && pfc->is_array();
      return setting == "ecn" && ecn != want.end() && ecn->is_array();
    };
    for (const auto& [iface, settings] : kept_all->items()) {
      if (!settings.is_object()) continue;
      const bool targeted = std::find(targets.begin(), targets.end(), iface) != targets.end();
      for (const auto& [setting, command] : settings.items()) {
        if (targeted && pinned(setting)) continue;
        actions.push_back(MakeAction(
            Name(), fmt::format("roce.{}.{}.forget", iface, setting), fmt::format("fabric.roce.{}", setting),
            fmt::format("/fabric/roce/{}", setting),
            fmt::format("{}: {} is kept in {} but no pin asks for it: it would be set again at every boot", iface,
                        setting, PersistPath(iface, setting)),
            "kept", nullptr, Disruption::kNone, {{"interface", iface}, {"setting", setting}, {"forget", true}, {"member", iface}}));
      }
    }
  }

  // The unit that replays the kept settings at boot, wherever plumb keeps any. A masked unit is
  // an admin's "never": plumb does not unmask it; a node without systemd needs another way.
  const auto* unit = Lookup(facts, {"restore_unit"});
  const bool pins_any = pins_qos || (ecn != want.end() && ecn->is_array());
  if (pins_any && unit && (*unit == "masked" || *unit == "no-systemd"))
    manual("roce.restore_unit", "restore_unit",
           *unit == "masked" ? fmt::format("{} is masked: the RoCE settings are not restored at boot (systemctl unmask "
                                           "it to let plumb restore them)",
                                           roce::kRestoreUnit)
                             : "no systemctl on this node: the RoCE settings are not restored at boot",
           *unit, "enabled");
  else if (pins_any && unit && unit->is_string() && *unit != "enabled")
    // Its own key (no pin names it), so drift shows it as one finding, not on every pin.
    actions.push_back(MakeAction(Name(), "roce.restore_unit", "fabric.roce.restore_unit", "/fabric/roce/restore_unit",
                                 fmt::format("{} (replays the RoCE settings at boot) is {}: install and enable it",
                                             roce::kRestoreUnit, unit->get<std::string>()),
                                 *unit, "enabled", Disruption::kNone, {{"setting", "restore_unit"}}));
  return actions;
}

std::vector<std::string> ApplyCommands(const Action& action) {
  const std::string setting = StringField(action.params, "setting");
  if (setting == "restore_unit") return RestoreUnitCommands();
  const std::string iface = StringField(action.params, "interface");
  if (const auto* forget = Lookup(action.params, {"forget"}); forget && *forget == true) {
    if (!roce::IsNetdevName(iface) || (setting != "trust" && setting != "pfc" && setting != "ecn")) return {};
    return {"rm -f " + ShellQuote(PersistPath(iface, setting))};
  }
  const std::string command = SettingCommand(iface, setting, action.after);
  if (command.empty()) return {};
  // The NIC first, then the file: a file is never ahead of what was applied.
  const auto* persist_only = Lookup(action.params, {"persist_only"});
  if (persist_only && *persist_only == true) return {PersistCommand(iface, setting, command)};
  return {command, PersistCommand(iface, setting, command)};
}

ApplyOutcome RoceModule::Apply(NodeContext& ctx, const Action& action) const {
  if (const auto* m = Lookup(action.params, {"manual"}); m && *m == true)
    return ApplyOutcome::Failed(Diagnostic::Error("apply.manual", action.summary, {}, action.key,
                                                  "fix the node, then re-run plumb: the re-probe will find it in sync"));
  if (!action.params.contains("setting")) return Module::Apply(ctx, action);
  std::vector<std::string> commands = ApplyCommands(action);
  if (commands.empty())
    return ApplyOutcome::Failed(Diagnostic::Error(
        "apply.roce", fmt::format("refusing to write {} = {} on netdev '{}'", action.key, action.after.dump(),
                                  StringField(action.params, "interface")),
        {}, action.key));
  for (const std::string& c : commands) {
    auto r = RunChecked(ctx, Name(), c);
    if (!r.ok()) return ApplyOutcome::Failed(r.error());
  }
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::roce
