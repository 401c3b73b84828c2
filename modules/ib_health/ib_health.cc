#include "modules/ib_health/ib_health.h"

#include <map>

#include <fmt/format.h>

#include "modules/ib_health/parse.h"
#include "modules/module_util.h"

namespace plumb::modules::ib_health {

namespace {

using nlohmann::json;

constexpr std::string_view kName = "ib_health";

constexpr CheckMaker Make{kName};

// Counter -> the most it may read: the defaults, then the stack's max_counters over them.
std::map<std::string, unsigned long long> Limits(const json& settings) {
  std::map<std::string, unsigned long long> limits;
  for (std::string_view c : kDefaultMaxCounters) limits[std::string(c)] = 0;
  if (const json* m = Lookup(settings, {"max_counters"}); m && m->is_object())
    for (const auto& [name, max] : m->items())
      if (max.is_number_unsigned() || (max.is_number_integer() && max.get<long long>() >= 0))
        limits[name] = max.get<unsigned long long>();
  return limits;
}

}  // namespace

IbHealthModule::IbHealthModule() : HealthModule(&FactsFromParts) {}

const ModuleInfo& IbHealthModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "ib_health",
      .owns = {"/health/ib_health"},
      .channel = Channel::kInBand,
      .reads = "`perfquery -C <ca> -P <port>` error counters of each Active InfiniBand port (`ibstat`)",
      .changes = "nothing: a failed check keeps the node out of service",
      .disruption = Disruption::kNone,
      .kind = ModuleInfo::Kind::kHealth};
  return kInfo;
}

std::string IbHealthModule::ProbeScript() const {
  // ibstat names each CA at the start of a line ("CA 'mlx5_0'") and, indented below it, each
  // port's block ("Port 1:", "State: Active", "Link layer: InfiniBand"). A port that is not
  // Active has no LID to query; an Ethernet (RoCE) port has no IB performance counters.
  // CA names are cut to [A-Za-z0-9_.-] before they reach a command line.
  return fmt::format(
      "plumb_ib_ports=$($plumb_t ibstat 2>/dev/null | awk '\n"
      "  /^CA / {{ ca = $2; gsub(/[^A-Za-z0-9_.-]/, \"\", ca) }}\n"
      "  $1 == \"Port\" && $2 ~ /^[0-9]+:$/ {{ port = $2; sub(/:$/, \"\", port); state = \"\" }}\n"
      "  $1 == \"State:\" {{ state = $2 }}\n"
      "  $1 == \"Link\" && $2 == \"layer:\" && $3 == \"InfiniBand\" && state == \"Active\" && ca != \"\" "
      "{{ print ca \".\" port }}')\n"
      "for plumb_ib_p in $plumb_ib_ports; do\n"
      "  plumb_begin \"{prefix}$plumb_ib_p\"\n"
      "  if command -v perfquery >/dev/null 2>&1; then\n"
      "    plumb_ib_o=$($plumb_t perfquery -C \"${{plumb_ib_p%.*}}\" -P \"${{plumb_ib_p##*.}}\" 2>&1); plumb_r=$?\n"
      // The traffic counters change every second: dropped on the node, so an idle port's
      // output (and the probe's digest) stays the same. Builtins only, the lines split on
      // IFS (a here-document would fork sh for its expansion): a `printf | grep` per port cost
      // two forks and an exec, on each of a GPU node's 8 ports. Empty lines go too; the
      // parser skips them anyway.
      "    plumb_ib_ifs=$IFS; IFS='\n'; set -f\n"
      "    for plumb_ib_l in $plumb_ib_o; do case $plumb_ib_l in\n"
      "      PortXmitData:*|PortRcvData:*|PortXmitPkts:*|PortRcvPkts:*|PortXmitWait:*|PortUnicast*:*|"
      "PortMulticast*:*) ;;\n"
      "      *) printf '%s\\n' \"$plumb_ib_l\" ;; esac\n"
      "    done\n"
      "    IFS=$plumb_ib_ifs; set +f\n"
      "  else printf 'plumb-absent: %s\\n' perfquery; plumb_r=127; fi\n"
      "  plumb_end \"{prefix}$plumb_ib_p\" \"$plumb_r\"\n"
      "done",
      fmt::arg("prefix", kPerfqueryPartPrefix));
}

std::vector<CheckResult> IbHealthModule::Checks(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<CheckResult> out;
  if (!Wants(desired)) return out;
  const auto limits = Limits(HealthSettings(desired, kName));
  out = PartErrorChecks(kName, facts, [](const std::string& part) {
    // "perfquery.mlx5_0.1" -> "mlx5_0 port 1"
    std::string rest = part.substr(std::min(part.size(), kPerfqueryPartPrefix.size()));
    size_t dot = rest.rfind('.');
    std::string subject = dot == std::string::npos ? rest : rest.substr(0, dot) + " port " + rest.substr(dot + 1);
    return std::pair<std::string, std::string>("IB port counters (perfquery)", subject);
  });
  const json* ports = Lookup(facts, {"ports"});
  if (!ports || !ports->is_array() || ports->empty()) {
    if (out.empty())
      out.push_back(Make("ib_health.ports", "IB port counters", "", CheckStatus::kFail, 0, {{"min_ports", 1}},
                         "no Active InfiniBand port's counters were read (perfquery, from infiniband-diags, "
                         "is not installed, or no port is Active: see the infiniband module)"));
    return out;
  }
  for (const json& p : *ports) {
    if (!p.is_object()) continue;
    const std::string ca = StringField(p, "ca");
    const long long port = IntField(p, "port", 0);
    const std::string subject = fmt::format("{} port {}", ca, port);
    const std::string id = fmt::format("ib_health.{}.{}", CheckIdSegment(ca), port);
    const json* counters = Lookup(p, {"counters"});
    int bad = 0;
    std::vector<std::string> missing;
    for (const auto& [name, max] : limits) {
      const json* v = counters ? Lookup(*counters, {name}) : nullptr;
      if (!v || !(v->is_number_unsigned() || (v->is_number_integer() && v->get<long long>() >= 0))) {
        missing.push_back(name);
        continue;
      }
      const unsigned long long n = v->get<unsigned long long>();
      if (n <= max) continue;
      ++bad;
      out.push_back(Make(fmt::format("{}.{}", id, name), fmt::format("IB {}", name), subject,
                         CheckStatus::kFail, n, {{"max", max}},
                         fmt::format("{} {} > {} (counted since the last reset: once repaired, reset with "
                                     "perfquery -R -C {} -P {})",
                                     name, n, max, ca, port)));
    }
    // Nothing measured is not "within limits": the port's counters were not read.
    if (bad == 0 && !limits.empty() && missing.size() == limits.size())
      out.push_back(Make(id, "IB port error counters", subject, CheckStatus::kFail, nullptr, {{"max", limits}},
                         "perfquery printed none of the counters the stack limits"));
    else if (bad == 0)
      out.push_back(Make(id, "IB port error counters", subject, CheckStatus::kPass, p.contains("error_total") ? p["error_total"] : json(),
                         {{"max", limits}}, fmt::format("{} counters within their limits", limits.size() - missing.size())));
    // A counter the stack names that this port's perfquery does not print cannot pass.
    for (const std::string& name : missing)
      out.push_back(Make(fmt::format("{}.{}", id, name), fmt::format("IB {}", name), subject,
                         CheckStatus::kSkip, nullptr, {{"max", limits.at(name)}},
                         fmt::format("perfquery does not report {} for this port", name)));
  }
  return out;
}

}  // namespace plumb::modules::ib_health
