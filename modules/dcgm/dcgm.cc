#include "modules/dcgm/dcgm.h"

#include <fmt/format.h>

#include "modules/dcgm/parse.h"
#include "modules/module_util.h"
#include "modules/transport/shell.h"

namespace plumb::modules::dcgm {

namespace {

using nlohmann::json;
using transport::ShellQuote;

constexpr std::string_view kName = "dcgm";

constexpr CheckMaker Make{kName};

}  // namespace

DcgmModule::DcgmModule() : HealthModule(&FactsFromParts) {}

const ModuleInfo& DcgmModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "dcgm",
      .owns = {"/health/dcgm"},
      .channel = Channel::kInBand,
      .reads = "`dcgmi diag -r <level> -j`, `dcgmi discovery -l` (on demand: loads the GPUs)",
      .changes = "nothing: a failed check keeps the node out of service",
      .disruption = Disruption::kNone,
      .kind = ModuleInfo::Kind::kHealth,
      .on_demand = true};
  return kInfo;
}

int Level(const nlohmann::json& desired) {
  return static_cast<int>(IntSetting(HealthSettings(desired, kName), "level", 1, 4).value_or(1));
}

int TimeoutSeconds(const nlohmann::json& desired) {
  if (auto t = IntSetting(HealthSettings(desired, kName), "timeout_s", 1, 86400)) return static_cast<int>(*t);
  return kDefaultTimeoutS[Level(desired) - 1];
}

std::chrono::seconds DcgmModule::CheckTimeout(const nlohmann::json& desired) const {
  return std::chrono::seconds(TimeoutSeconds(desired));
}

std::string DcgmModule::CheckScript(const nlohmann::json& desired) const {
  // Discovery first: it is quick, and it needs the host engine, which diag does not (diag
  // starts an embedded one), so it is what tells a node without nv-hostengine.
  return fmt::format(
      "plumb_run {} dcgmi discovery -l\n"
      "plumb_run_for {} {} dcgmi diag -r {} -j",
      kDiscoveryPart, ShellQuote(std::to_string(TimeoutSeconds(desired))), kDiagPart,
      ShellQuote(std::to_string(Level(desired))));
}

std::vector<CheckResult> DcgmModule::Checks(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<CheckResult> out;
  if (!Wants(desired)) return out;
  const json& settings = HealthSettings(desired, kName);
  const bool fail_on_warn = BoolSetting(settings, "fail_on_warn", false);
  const int level = Level(desired);

  out = PartErrorChecks(kName, facts, [](const std::string& part) {
    return std::pair<std::string, std::string>(part == kDiagPart ? "DCGM diagnostic" : "DCGM discovery", "");
  });
  const json* present = Lookup(facts, {"present"});
  if (!present || *present != true) {
    out.push_back(Make("dcgm.installed", "DCGM", "", CheckStatus::kFail, false, "installed",
                       "dcgmi is not installed (package datacenter-gpu-manager)"));
    return out;
  }
  if (StringField(facts, "host_engine") == "unreachable" && !PartFailed(facts, kDiscoveryPart) &&
      !PartFailed(facts, kDiagPart))
    out.push_back(Make("dcgm.host_engine", "DCGM host engine", "", CheckStatus::kFail, "unreachable", "ok",
                       "dcgmi cannot reach nv-hostengine (is the nvidia-dcgm service running?)"));

  // The GPUs DCGM sees, against the count the stack expects.
  const auto expected = IntSetting(HealthSettings(desired, "gpu_health"), "expected_gpus", 1, 1024);
  if (expected) {
    const json* gpus = Lookup(facts, {"gpus"});
    if (gpus && gpus->is_array()) {
      const long long seen = static_cast<long long>(gpus->size());
      out.push_back(Make("dcgm.gpu_count", "DCGM GPU count", "", seen == *expected ? CheckStatus::kPass : CheckStatus::kFail,
                         seen, {{"equals", *expected}},
                         seen == *expected ? fmt::format("{} GPUs", seen)
                                           : fmt::format("DCGM sees {} GPUs, expected {}", seen, *expected)));
    } else if (!PartFailed(facts, kDiscoveryPart)) {
      out.push_back(Make("dcgm.gpu_count", "DCGM GPU count", "", CheckStatus::kSkip, nullptr, {{"equals", *expected}},
                         "dcgmi discovery -l was not read"));
    }
  }

  // The diagnostic itself.
  if (PartFailed(facts, kDiagPart)) return out;   // its unread check says why
  if (std::string err = StringField(facts, "runtime_error"); !err.empty()) {
    out.push_back(Make("dcgm.runtime_error", "DCGM diagnostic", "", CheckStatus::kFail, err, "ran",
                       fmt::format("dcgmi diag -r {} could not run: {}", level, err)));
    return out;
  }
  const json* layout = Lookup(facts, {"layout"});
  if (!layout || !layout->is_string()) {
    out.push_back(Make("dcgm.diag", "DCGM diagnostic", "", CheckStatus::kFail, nullptr, "pass",
                       fmt::format("dcgmi diag -r {} gave no result", level)));
    return out;
  }
  int bad = 0;
  if (const json* tests = Lookup(facts, {"tests"}); tests && tests->is_array()) {
    for (const json& t : *tests) {
      const std::string test = StringField(t, "name");
      const json* results = Lookup(t, {"results"});
      if (!results || !results->is_array()) continue;
      for (const json& r : *results) {
        const std::string status = StringField(r, "status");
        if (status != "fail" && status != "warn") continue;
        ++bad;
        std::string subject, suffix;
        if (const json* g = Lookup(r, {"gpu"}); g && g->is_number_integer()) {
          subject = fmt::format("GPU {}", g->get<int>());
          suffix = fmt::format("gpu{}", g->get<int>());
        } else if (std::string group = StringField(r, "entity_group"); !group.empty()) {
          const long long id = IntField(r, "entity_id", -1);
          subject = id >= 0 ? fmt::format("{} {}", group, id) : group;
          suffix = CheckIdSegment(group) + (id >= 0 ? std::to_string(id) : "");
        } else {
          suffix = "node";
        }
        std::string message;
        if (const json* w = Lookup(r, {"warnings"}); w && w->is_array() && !w->empty())
          message = StringField((*w)[0], "message");
        if (message.empty()) message = fmt::format("DCGM reported '{}' without a message", status);
        const CheckStatus s = status == "fail" || fail_on_warn ? CheckStatus::kFail : CheckStatus::kWarn;
        out.push_back(Make(fmt::format("dcgm.{}.{}", CheckIdSegment(test), suffix), fmt::format("DCGM {}", test),
                           std::move(subject), s, status, "pass", std::move(message)));
      }
    }
  }
  if (bad == 0) {
    const json* counts = Lookup(facts, {"counts"});
    const long long pass = counts ? IntField(*counts, "pass", 0) : 0;
    const long long skip = counts ? IntField(*counts, "skip", 0) + IntField(*counts, "not-run", 0) : 0;
    if (pass == 0)
      out.push_back(Make("dcgm.diag", "DCGM diagnostic", "", CheckStatus::kFail, counts ? *counts : json(), "pass",
                         fmt::format("dcgmi diag -r {} passed no test ({} skipped or not run)", level, skip)));
    else
      out.push_back(Make("dcgm.diag", "DCGM diagnostic", "", CheckStatus::kPass, counts ? *counts : json(), "pass",
                         fmt::format("level {}: {} results passed, {} skipped or not run", level, pass, skip)));
  }
  return out;
}

}  // namespace plumb::modules::dcgm
