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
      .reads = "`mlnx_qos -i`, `/sys/class/net/*/ecn/roce_{np,rp}/enable/*`",
      .changes = "`mlnx_qos --trust` / `--pfc`, ECN sysfs writes (until the next reboot)",
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
         "plumb_end ecn 0";
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
                    nlohmann::json after) {
    std::string key = field.empty() ? "fabric.roce" : "fabric.roce." + field;
    std::string pointer = field.empty() ? "/fabric/roce" : "/fabric/roce/" + field;
    actions.push_back(MakeAction(Name(), std::move(id), key, pointer,
                                 fmt::format("{} ({})", summary, kManualHint), std::move(before),
                                 std::move(after), Disruption::kNone, {{"manual", true}}));
  };

  std::map<std::string, const nlohmann::json*> observed;
  if (const auto* list = Lookup(facts, {"interfaces"}); list && list->is_array())
    for (const auto& i : *list)
      if (i.is_object()) observed[StringField(i, "name")] = &i;
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
             fmt::format("{}: no such mlx5 Ethernet netdev on this node", name), nullptr, name);
      continue;
    }
    const nlohmann::json& have = *o->second;
    auto change = [&](const char* field, nlohmann::json before, nlohmann::json after, Disruption d,
                      std::string summary) {
      actions.push_back(MakeAction(Name(), fmt::format("roce.{}.{}", name, field),
                                   fmt::format("fabric.roce.{}", field), fmt::format("/fabric/roce/{}", field),
                                   fmt::format("{}: {}", name, summary), std::move(before), std::move(after), d,
                                   {{"interface", name}, {"setting", field}}));
    };
    if (pins_qos && have_tool) {
      if (trust != want.end() && trust->is_string() && have.value("trust", nlohmann::json()) != *trust) {
        const auto& t = have.value("trust", nlohmann::json());
        change("trust", t, *trust, kQosDisruption,
               fmt::format("trust {} (have {})", trust->get<std::string>(), t.is_string() ? t.get<std::string>() : "unread"));
      }
      if (pfc != want.end() && pfc->is_array()) {
        nlohmann::json w = PrioritySet(*pfc);
        const auto& p = have.value("pfc", nlohmann::json());
        if (p != w) change("pfc", p, w, kQosDisruption, fmt::format("PFC on priorities {} (have {})", w.dump(), p.dump()));
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
      }
    }
  }
  return actions;
}

std::vector<std::string> ApplyCommands(const Action& action) {
  const std::string iface = StringField(action.params, "interface");
  const std::string setting = StringField(action.params, "setting");
  if (!IsSafeInterface(iface)) return {};
  const std::string mlnx_qos = "mlnx_qos -i " + ShellQuote(iface);
  if (setting == "trust" && action.after.is_string()) {
    const std::string t = action.after.get<std::string>();
    if (t != "pcp" && t != "dscp") return {};
    return {mlnx_qos + " --trust " + ShellQuote(t)};
  }
  if (!IsPriorityList(action.after)) return {};
  if (setting == "pfc") return {mlnx_qos + " --pfc " + ShellQuote(PfcFlags(action.after))};
  if (setting == "ecn") {
    // Every priority of both halves of RoCE congestion control, so the set is exactly `after`;
    // one command, so a failed write stops the rest and is reported with its file.
    std::string cmd;
    for (const char* half : {"roce_np", "roce_rp"})
      for (int p = 0; p < 8; ++p) {
        bool on = std::find(action.after.begin(), action.after.end(), nlohmann::json(p)) != action.after.end();
        cmd += fmt::format("{}echo {} > {}", cmd.empty() ? "" : " && ", ShellQuote(on ? "1" : "0"),
                           ShellQuote(fmt::format("/sys/class/net/{}/ecn/{}/enable/{}", iface, half, p)));
      }
    return {cmd};
  }
  return {};
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
