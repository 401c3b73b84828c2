#include "modules/nccl_bw/nccl_bw.h"

#include <fmt/format.h>

#include "modules/module_util.h"
#include "modules/nccl_bw/parse.h"
#include "modules/transport/shell.h"

namespace plumb::modules::nccl_bw {

namespace {

using nlohmann::json;
using transport::ShellQuote;

constexpr std::string_view kName = "nccl_bw";
constexpr const char* kDefaultMaxBytes = "8G";

constexpr CheckMaker Make{kName};

// nccl-tests' size form: 1-13 digits, no leading zero, an optional K, M or G (the schema's
// pattern; anything else falls back to the default rather than reaching the node).
bool IsSize(std::string_view s) {
  if (s.empty() || s.size() > 14 || s[0] < '1' || s[0] > '9') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') continue;
    if (i + 1 == s.size() && i > 0 && (c == 'K' || c == 'M' || c == 'G')) continue;
    return false;
  }
  return true;
}

}  // namespace

NcclBwModule::NcclBwModule() : HealthModule(&FactsFromParts) {}

const ModuleInfo& NcclBwModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "nccl_bw",
      .owns = {"/health/nccl_bw"},
      .channel = Channel::kInBand,
      .reads = "`all_reduce_perf -b 8 -e <max_bytes> -f 2 -g <gpus>` (nccl-tests; on demand: loads "
               "the GPUs and NVLink)",
      .changes = "nothing: a failed check keeps the node out of service",
      .disruption = Disruption::kNone,
      .kind = ModuleInfo::Kind::kHealth,
      .on_demand = true,
      .acceptance_chart = true};
  return kInfo;
}

std::string MaxBytes(const nlohmann::json& desired) {
  const json& s = HealthSettings(desired, kName);
  if (auto n = IntSetting(s, "max_bytes", 8, 1LL << 40)) return std::to_string(*n);
  const json* v = Lookup(s, {"max_bytes"});
  if (v && v->is_string() && IsSize(v->get<std::string>())) return v->get<std::string>();
  return kDefaultMaxBytes;
}

int TimeoutSeconds(const nlohmann::json& desired) {
  return static_cast<int>(IntSetting(HealthSettings(desired, kName), "timeout_s", 1, 86400).value_or(kDefaultTimeoutS));
}

std::chrono::seconds NcclBwModule::CheckTimeout(const nlohmann::json& desired) const {
  return std::chrono::seconds(TimeoutSeconds(desired));
}

std::string NcclBwModule::CheckScript(const nlohmann::json& desired) const {
  std::string script = "(\nNCCL_DEBUG=WARN; export NCCL_DEBUG\n";
  if (auto gpus = IntSetting(HealthSettings(desired, "gpu_health"), "expected_gpus", 1, 1024)) {
    script += fmt::format("plumb_nb_g={}\n", ShellQuote(std::to_string(*gpus)));
  } else {
    // Every GPU the driver lists; with none, one, so the run fails with CUDA's own words.
    script +=
        "plumb_nb_g=$($plumb_t nvidia-smi -L 2>/dev/null | grep -c '^GPU ')\n"
        "[ \"${plumb_nb_g:-0}\" -gt 0 ] 2>/dev/null || plumb_nb_g=1\n";
  }
  script += fmt::format("plumb_run_for {} {} all_reduce_perf -b 8 -e {} -f 2 -g \"$plumb_nb_g\"\n)",
                        ShellQuote(std::to_string(TimeoutSeconds(desired))), kAllReducePart,
                        ShellQuote(MaxBytes(desired)));
  return script;
}

std::vector<CheckResult> NcclBwModule::Checks(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<CheckResult> out;
  if (!Wants(desired)) return out;
  const json& settings = HealthSettings(desired, kName);
  out = PartErrorChecks(kName, facts, [](const std::string&) {
    return std::pair<std::string, std::string>("NCCL all_reduce_perf", "");
  });
  const json* present = Lookup(facts, {"present"});
  if (!present || *present != true) {
    out.push_back(Make("nccl_bw.installed", "NCCL all_reduce_perf", "", CheckStatus::kFail, false, "installed",
                       "all_reduce_perf is not installed (nccl-tests, built against the node's NCCL)"));
    return out;
  }
  const bool unread = PartFailed(facts, kAllReducePart);
  const json* rows = Lookup(facts, {"rows"});
  const bool has_rows = rows && rows->is_array() && !rows->empty();
  if (unread && !has_rows) return out;   // its unread check says why

  // The run itself: it finished, exited 0 and said nothing went wrong.
  std::vector<std::string> errors;
  if (const json* e = Lookup(facts, {"errors"}); e && e->is_array())
    for (const json& s : *e)
      if (s.is_string()) errors.push_back(s.get<std::string>());
  const json* exit_status = Lookup(facts, {"exit_status"});
  const long long status = exit_status && exit_status->is_number_integer() ? exit_status->get<long long>() : 0;
  const json* complete = Lookup(facts, {"complete"});
  const bool finished = complete && *complete == true;
  const json* oob_ok = Lookup(facts, {"out_of_bounds_ok"});
  std::string why;
  if (!errors.empty()) why = errors.front() + (errors.size() > 1 ? fmt::format(" (and {} more)", errors.size() - 1) : "");
  else if (!finished) why = "the run did not finish";
  // all_reduce_perf exits 1 when it found wrong values: the #wrong check below says so - only
  // when there is a #wrong count to say it with.
  else if (const json* wrong = Lookup(facts, {"wrong_total"});
           status != 0 && !(oob_ok && *oob_ok == false && wrong && wrong->is_number_integer()))
    why = fmt::format("all_reduce_perf exited {}", status);
  out.push_back(Make("nccl_bw.run", "NCCL all_reduce run", "", why.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                     {{"exit_status", status}, {"complete", finished}, {"errors", errors.size()}},
                     {{"exit_status", 0}, {"errors", 0}}, why.empty() ? "finished without errors" : why));

  // Bus bandwidth at the largest size.
  const json* busbw = Lookup(facts, {"busbw_at_largest"});
  const json* size = Lookup(facts, {"largest_size"});
  const std::string at = size && size->is_number() ? fmt::format(" at {} bytes", size->dump()) : "";
  if (auto min = NumberSetting(settings, "min_busbw_gbps")) {
    if (busbw && busbw->is_number()) {
      const double bw = busbw->get<double>();
      const bool low = bw < *min;
      out.push_back(Make("nccl_bw.busbw", "NCCL all_reduce bus bandwidth", "", low ? CheckStatus::kFail : CheckStatus::kPass,
                         bw, {{"min", *min}},
                         fmt::format("busbw {} GB/s {} {}{}", FormatNumber(bw), low ? "<" : ">=", FormatNumber(*min), at)));
    } else {
      out.push_back(Make("nccl_bw.busbw", "NCCL all_reduce bus bandwidth", "", CheckStatus::kFail, nullptr, {{"min", *min}},
                         "no bus bandwidth measured (no result row)"));
    }
  } else {
    out.push_back(Make("nccl_bw.busbw", "NCCL all_reduce bus bandwidth", "", CheckStatus::kSkip,
                       busbw ? *busbw : json(), nullptr, "health.nccl_bw.min_busbw_gbps is not set"));
  }

  // Values the run checked and found wrong.
  const long long max_wrong = IntSetting(settings, "max_wrong", 0, 1LL << 40).value_or(0);
  const json* wrong = Lookup(facts, {"wrong_total"});
  if (wrong && wrong->is_number_integer()) {
    const long long n = wrong->get<long long>();
    const json* oob = Lookup(facts, {"out_of_bounds"});
    const std::string bounds =
        oob && oob->is_number_integer() && oob->get<long long>() > 0 ? fmt::format(" ({} values out of bounds)", oob->dump()) : "";
    out.push_back(Make("nccl_bw.wrong", "NCCL all_reduce #wrong", "", n > max_wrong ? CheckStatus::kFail : CheckStatus::kPass,
                       n, {{"max", max_wrong}},
                       n > max_wrong ? fmt::format("{} wrong values > {}{}", n, max_wrong, bounds)
                                     : fmt::format("{} wrong values{}", n, bounds)));
  } else if (has_rows) {
    out.push_back(Make("nccl_bw.wrong", "NCCL all_reduce #wrong", "", CheckStatus::kSkip, nullptr, {{"max", max_wrong}},
                       "the run did not validate its results (#wrong N/A)"));
  }
  return out;
}

}  // namespace plumb::modules::nccl_bw
