#include "modules/infiniband/infiniband.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "modules/infiniband/parse.h"
#include "modules/module_util.h"
#include "schemas/ascii.h"

namespace plumb::modules::infiniband {

const ModuleInfo& InfinibandModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "infiniband",
      .owns = {"/fabric/infiniband"},
      .channel = Channel::kInBand,
      .after = {"ofed"},
      .reads = "`ibstat`, `ibv_devinfo`",
      .changes = "none in-band: reported as a fabric fix",
      .disruption = Disruption::kDrain};
  return kInfo;
}

namespace {

constexpr const char* kManualHint =
    "needs a fabric fix (cable, transceiver, switch port, subnet manager or partition MTU); "
    "plumb cannot change it in-band";

constexpr const char* kUnreadHint =
    "the HCA, its firmware or its driver needs attention; CAs after it were not read either; "
    "plumb cannot change it in-band";

}  // namespace

Result<Facts> InfinibandModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(FactsFromParts(*parts));
}


std::vector<Action> InfinibandModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  const auto& want = desired["fabric"]["infiniband"];
  const auto* ports = Lookup(facts, {"ports"});
  int ib_ports = 0;
  if (ports && ports->is_array()) {
    for (const auto& p : *ports) {
      if (!p.is_object() || StringField(p, "link_layer") != "InfiniBand") continue;
      ++ib_ports;
      std::string ca = StringField(p, "ca");
      int port = p.value("port", 0);
      auto add = [&](const char* field, const nlohmann::json& have, const nlohmann::json& w,
                     const std::string& what) {
        actions.push_back(MakeAction(
            Name(), fmt::format("infiniband.{}.{}.{}", ca, port, field),
            fmt::format("fabric.infiniband.{}", field), fmt::format("/fabric/infiniband/{}", field),
            fmt::format("{} port {}: {} ({})", ca, port, what, kManualHint), have, w,
            Disruption::kDrain,
            {{"manual", true}, {"ca", ca}, {"port", port}, {"member", fmt::format("{} port {}", ca, port)}}));
      };
      if (auto s = want.find("state"); s != want.end() && s->is_string()) {
        std::string have = StringField(p, "state");
        if (schemas::AsciiUpper(have) != schemas::AsciiUpper(s->get<std::string>()))
          add("state", have, *s, fmt::format("state {}, want {}", have, s->get<std::string>()));
      }
      if (auto r = want.find("rate_gbps"); r != want.end() && r->is_number()) {
        const auto& have = p.contains("rate_gbps") ? p["rate_gbps"] : nlohmann::json();
        if (!have.is_number() || have.get<double>() != r->get<double>())
          add("rate_gbps", have, *r, fmt::format("rate {} Gb/s, want {}", have.dump(), r->dump()));
      }
      if (auto m = want.find("mtu"); m != want.end() && m->is_number_integer()) {
        const auto& have = p.contains("mtu") ? p["mtu"] : nlohmann::json();
        if (!have.is_number_integer() || have.get<long long>() != m->get<long long>())
          add("mtu", have, *m, fmt::format("MTU {}, want {}", have.dump(), m->dump()));
      }
    }
  }
  // A CA ibstat could not read (it stopped there, so later CAs went unread too): its ports
  // cannot be vouched for, and the fix is the HCA's, not plumb's.
  std::vector<std::string> unread;
  if (const auto* u = Lookup(facts, {"unread_cas"}); u && u->is_array())
    for (const auto& ca : *u)
      if (ca.is_string()) unread.push_back(ca.get<std::string>());
  for (const std::string& ca : unread)
    actions.push_back(MakeAction(
        Name(), fmt::format("infiniband.{}.unread", ca), "fabric.infiniband", "/fabric/infiniband",
        fmt::format("{}: ibstat could not read this CA and stopped there ({})", ca, kUnreadHint),
        nullptr, want, Disruption::kDrain, {{"manual", true}, {"ca", ca}, {"member", ca}}));
  if (ib_ports == 0 && unread.empty())
    actions.push_back(MakeAction(Name(), "infiniband.ports", "fabric.infiniband", "/fabric/infiniband",
                                 fmt::format("no InfiniBand port found ({})", kManualHint), nullptr,
                                 want, Disruption::kDrain, {{"manual", true}}));
  return actions;
}

ApplyOutcome InfinibandModule::Apply(NodeContext&, const Action& action) const {
  return ApplyOutcome::Failed(Diagnostic::Error("apply.manual", action.summary, {}, action.key,
                           "fix the fabric, then re-run plumb: the re-probe will find it in sync"));
}

}  // namespace plumb::modules::infiniband
