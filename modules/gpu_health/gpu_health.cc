#include "modules/gpu_health/gpu_health.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "modules/gpu_health/parse.h"
#include "modules/module_util.h"

namespace plumb::modules::gpu_health {

namespace {

using nlohmann::json;

constexpr std::string_view kName = "gpu_health";
constexpr std::string_view kVolatileField = "ecc.errors.uncorrected.volatile.total";
constexpr std::string_view kAggregateField = "ecc.errors.uncorrected.aggregate.total";

constexpr CheckMaker Make{kName};

// A list setting of whole numbers / of strings, or the default when unset.
std::vector<int> XidList(const json& settings) {
  std::vector<int> out;
  const json* v = Lookup(settings, {"forbid_xids"});
  if (!v || !v->is_array()) return {kDefaultForbiddenXids.begin(), kDefaultForbiddenXids.end()};
  for (const json& x : *v)
    if (x.is_number_integer()) out.push_back(x.get<int>());
  return out;
}

std::vector<std::string> ThrottleList(const json& settings) {
  std::vector<std::string> out;
  const json* v = Lookup(settings, {"forbid_throttle"});
  if (!v || !v->is_array()) return {kDefaultForbiddenThrottle.begin(), kDefaultForbiddenThrottle.end()};
  for (const json& x : *v)
    if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// The word nvidia-smi gave instead of `field`'s value ("[Unknown Error]"), or "".
std::string Unavailable(const json& gpu, std::string_view field) {
  const json* u = Lookup(gpu, {"unavailable"});
  return u ? StringField(*u, field) : std::string();
}

// Per GPU: ECC mode, uncorrected ECC (volatile, and lifetime when asked), remapping, throttling,
// and the values nvidia-smi could not give.
void GpuChecks(const json& g, const json& settings, std::vector<CheckResult>& out) {
  const long long index = IntField(g, "index", -1);
  const std::string subject = fmt::format("GPU {}", index);
  const std::string id = fmt::format("gpu_health.gpu{}", index);
  const json* ecc = Lookup(g, {"ecc_enabled"});
  const bool ecc_off = ecc && *ecc == false;

  if (BoolSetting(settings, "require_ecc", true) && ecc && ecc->is_boolean())
    out.push_back(Make(id + ".ecc_mode", "GPU ECC mode", subject, ecc_off ? CheckStatus::kFail : CheckStatus::kPass,
                       ecc_off ? "disabled" : "enabled", "enabled",
                       ecc_off ? "ECC is disabled (nvidia-smi -e 1, then a GPU reset)" : "ECC is enabled"));

  auto count = [&](std::string_view suffix, const char* name, const char* fact, std::string_view field,
                   long long max, const char* since) {
    const json* v = Lookup(g, {fact});
    if (v && v->is_number_integer()) {
      const long long n = v->get<long long>();
      out.push_back(Make(id + std::string(suffix), name, subject, n > max ? CheckStatus::kFail : CheckStatus::kPass, n,
                         {{"max", max}},
                         n > max ? fmt::format("{} uncorrected ECC errors {} > {}", n, since, max)
                                 : fmt::format("{} uncorrected ECC errors {}", n, since)));
    } else if (std::string word = Unavailable(g, field); !word.empty()) {
      out.push_back(Make(id + std::string(suffix), name, subject, CheckStatus::kFail, word, {{"max", max}},
                         fmt::format("nvidia-smi gives {} for {}", word, field)));
    } else {
      out.push_back(Make(id + std::string(suffix), name, subject, CheckStatus::kSkip, nullptr, {{"max", max}},
                         ecc_off ? "ECC is disabled: no ECC counts" : "not supported on this GPU"));
    }
  };
  count(".ecc", "GPU uncorrected ECC errors", "uncorrected_volatile", kVolatileField,
        IntSetting(settings, "max_uncorrected_ecc", 0, 1LL << 40).value_or(0), "since the driver loaded");
  if (auto max = IntSetting(settings, "max_aggregate_uncorrected_ecc", 0, 1LL << 40))
    count(".ecc_aggregate", "GPU lifetime uncorrected ECC errors", "uncorrected_aggregate", kAggregateField, *max,
          "over the GPU's life");

  // Memory the GPU must take out of use at its next reset (row remapping on Ampere and later,
  // page retirement before): pending means the bad rows are still in use.
  const json* rows = Lookup(g, {"remapped_rows_pending"});
  const json* pages = Lookup(g, {"retired_pages_pending"});
  const bool rows_known = rows && rows->is_boolean(), pages_known = pages && pages->is_boolean();
  if (rows_known || pages_known) {
    const bool pending = (rows_known && rows->get<bool>()) || (pages_known && pages->get<bool>());
    const bool allowed = BoolSetting(settings, "allow_remap_pending", false);
    const char* what = rows_known && rows->get<bool>() ? "a row remap" : "a page retirement";
    out.push_back(Make(id + ".remap_pending", "GPU memory remap pending", subject,
                       !pending ? CheckStatus::kPass : allowed ? CheckStatus::kWarn : CheckStatus::kFail, pending,
                       {{"allowed", allowed}},
                       pending ? fmt::format("{} is pending: reset the GPU (or reboot) to take the bad memory out of use",
                                             what)
                               : "nothing pending"));
  }
  if (const json* fail = Lookup(g, {"remapped_rows_failure"}); fail && fail->is_boolean()) {
    const bool failed = fail->get<bool>();
    const bool allowed = BoolSetting(settings, "allow_remap_failure", false);
    out.push_back(Make(id + ".remap_failure", "GPU row remap failure", subject,
                       !failed ? CheckStatus::kPass : allowed ? CheckStatus::kWarn : CheckStatus::kFail, failed,
                       {{"allowed", allowed}},
                       failed ? "row remapping failed: the GPU has run out of spare rows (RMA)" : "no remap failure"));
  }

  const json* mask = Lookup(g, {"throttle_mask"});
  if (const json* reasons = Lookup(g, {"throttle_reasons"}); reasons && reasons->is_array() && mask && mask->is_string()) {
    const std::vector<std::string> forbidden = ThrottleList(settings);
    std::vector<std::string> bad, active;
    for (const json& r : *reasons) {
      if (!r.is_string()) continue;
      active.push_back(r.get<std::string>());
      if (std::find(forbidden.begin(), forbidden.end(), active.back()) != forbidden.end()) bad.push_back(active.back());
    }
    out.push_back(Make(id + ".throttle", "GPU clock throttling", subject, bad.empty() ? CheckStatus::kPass : CheckStatus::kFail,
                       active, {{"forbidden", forbidden}},
                       !bad.empty()      ? fmt::format("throttled by {}", Joined(bad))
                       : active.empty() ? "not throttled"
                                        : fmt::format("active: {} (allowed)", Joined(active))));
  }

  // nvidia-smi's own words for a value it could not read ("[Unknown Error]", "[GPU requires
  // reset]"): a health signal of their own. The ECC counts' words are in their checks above.
  if (const json* u = Lookup(g, {"unavailable"}); u && u->is_object()) {
    std::vector<std::string> said;
    for (const auto& [field, word] : u->items())
      if (field != kVolatileField && field != kAggregateField)
        said.push_back(fmt::format("{} {}", field, word.is_string() ? word.get<std::string>() : word.dump()));
    if (!said.empty())
      out.push_back(Make(id + ".unavailable", "GPU fields nvidia-smi could not read", subject, CheckStatus::kFail, *u,
                         "read", Joined(said)));
  }
}

// The XIDs since boot, one check per (code, GPU): forbidden codes fail, the others warn.
void XidChecks(const json& facts, const json& settings, std::vector<CheckResult>& out) {
  const std::vector<int> forbidden = XidList(settings);
  struct Seen {
    int count = 0;
    std::string subject, first_message;
  };
  std::map<std::pair<int, std::string>, Seen> groups;   // (xid, id suffix)
  std::map<int, int> listed;                            // xid -> occurrences in the list
  for (const json& x : *Lookup(facts, {"xids"})) {
    if (!x.is_object() || !x.contains("xid") || !x["xid"].is_number_integer()) continue;
    const int xid = x["xid"].get<int>();
    std::string suffix, subject;
    if (const json* g = Lookup(x, {"gpu"}); g && g->is_number_integer()) {
      suffix = fmt::format("gpu{}", g->get<int>());
      subject = fmt::format("GPU {}", g->get<int>());
    } else if (std::string pci = StringField(x, "pci"); !pci.empty()) {
      suffix = "pci_" + CheckIdSegment(pci);
      subject = fmt::format("PCI {}", pci);
    } else {
      suffix = "node";
    }
    Seen& s = groups[{xid, suffix}];
    if (s.count++ == 0) {
      s.subject = subject;
      s.first_message = StringField(x, "message");
    }
    ++listed[xid];
  }
  // Past kMaxXids only the counts were kept: what the list lacks is reported without a GPU.
  if (const json* counts = Lookup(facts, {"xid_counts"}); counts && counts->is_object())
    for (const auto& [code, n] : counts->items()) {
      const int xid = std::atoi(code.c_str());
      const int missing = (n.is_number_integer() ? n.get<int>() : 0) - listed[xid];
      if (missing > 0) groups[{xid, "unlisted"}].count += missing;
    }
  if (groups.empty()) {
    out.push_back(Make("gpu_health.xid", "GPU XIDs", "", CheckStatus::kPass, 0, {{"forbidden", forbidden}},
                       "no XID since boot"));
    return;
  }
  for (const auto& [key, s] : groups) {
    const auto& [xid, suffix] = key;
    const bool bad = std::find(forbidden.begin(), forbidden.end(), xid) != forbidden.end();
    std::string message = fmt::format("{} time{} since boot", s.count, s.count == 1 ? "" : "s");
    if (!s.first_message.empty()) message += ": " + s.first_message;
    if (!bad) message += " (not in forbid_xids: a warning)";
    out.push_back(Make(fmt::format("gpu_health.xid{}.{}", xid, suffix), fmt::format("GPU XID {}", xid), s.subject,
                       bad ? CheckStatus::kFail : CheckStatus::kWarn, s.count, {{"forbidden", forbidden}},
                       std::move(message)));
  }
}

}  // namespace

GpuHealthModule::GpuHealthModule() : HealthModule(&FactsFromParts) {}

const ModuleInfo& GpuHealthModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "gpu_health",
      .owns = {"/health/gpu_health"},
      .channel = Channel::kInBand,
      .reads = "`nvidia-smi --query-gpu=` ECC, row remapping, throttle reasons; XIDs from `dmesg` "
               "(or `journalctl -k -b`)",
      .changes = "nothing: a failed check keeps the node out of service",
      .disruption = Disruption::kNone,
      .kind = ModuleInfo::Kind::kHealth};
  return kInfo;
}

std::string GpuHealthModule::ProbeScript() const {
  // The kernel log is read whole on the node and only its XID lines (and the lines saying the
  // log could not be read, which the parser turns into an error) are sent: a ring buffer is
  // up to a few MB, the XIDs a few lines. dmesg is refused to non-root users when
  // kernel.dmesg_restrict=1; journalctl -k -b then reads the same messages from the journal.
  return fmt::format(
      "plumb_run {smi} nvidia-smi --query-gpu={fields} --format=csv,noheader\n"
      "plumb_begin {kmsg}\n"
      "plumb_r=127; plumb_gh_log='plumb-absent: dmesg'\n"
      "if command -v dmesg >/dev/null 2>&1; then plumb_gh_log=$($plumb_t dmesg 2>&1); plumb_r=$?; fi\n"
      "if [ \"$plumb_r\" != 0 ] && command -v journalctl >/dev/null 2>&1; then\n"
      "  plumb_gh_log=$($plumb_t journalctl -k -b --no-pager 2>&1); plumb_r=$?\n"
      "fi\n"
      "if [ \"$plumb_r\" = 0 ]; then\n"
      "  printf '%s\\n' \"$plumb_gh_log\" | grep -F -e 'NVRM: Xid' -e 'No journal files were found' "
      "-e 'You are currently not seeing messages'\n"
      "else printf '%s\\n' \"$plumb_gh_log\"; fi\n"
      "plumb_end {kmsg} \"$plumb_r\"",
      fmt::arg("smi", kSmiPart), fmt::arg("fields", kHealthQueryFields), fmt::arg("kmsg", kKernelLogPart));
}

std::vector<CheckResult> GpuHealthModule::Checks(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<CheckResult> out;
  if (!Wants(desired)) return out;
  const json& settings = HealthSettings(desired, kName);
  out = PartErrorChecks(kName, facts, [](const std::string& part) {
    return std::pair<std::string, std::string>(part == kSmiPart ? "nvidia-smi health query" : "kernel log (XIDs)", "");
  });

  // nvidia-smi and the GPUs it lists.
  const std::string nvml = StringField(facts, "nvml");
  if (!PartFailed(facts, kSmiPart)) {
    if (nvml.empty())
      out.push_back(Make("gpu_health.nvml", "nvidia-smi", "", CheckStatus::kFail, nullptr, "ok",
                         "the nvidia-smi health query was not read"));
    else if (nvml == "absent")
      out.push_back(Make("gpu_health.nvml", "nvidia-smi", "", CheckStatus::kFail, nvml, "ok",
                         "nvidia-smi is not installed (the NVIDIA driver's utilities)"));
    else if (nvml != "ok")
      out.push_back(Make("gpu_health.nvml", "nvidia-smi", "", CheckStatus::kFail, nvml, "ok",
                         fmt::format("nvidia-smi failed: {}", nvml)));
  }
  if (nvml == "ok") {
    const json* count = Lookup(facts, {"gpu_count"});
    if (auto expected = IntSetting(settings, "expected_gpus", 1, 1024); expected && count && count->is_number_integer()) {
      const long long n = count->get<long long>();
      out.push_back(Make("gpu_health.gpu_count", "GPU count", "", n == *expected ? CheckStatus::kPass : CheckStatus::kFail,
                         n, {{"equals", *expected}},
                         n == *expected ? fmt::format("{} GPUs", n)
                                        : fmt::format("nvidia-smi lists {} GPUs, expected {}", n, *expected)));
    }
    if (const json* gpus = Lookup(facts, {"gpus"}); gpus && gpus->is_array())
      for (const json& g : *gpus)
        if (g.is_object()) GpuChecks(g, settings, out);
  }

  // The kernel log.
  if (PartFailed(facts, kKernelLogPart)) return out;
  const json* xids = Lookup(facts, {"xids"});
  if (!xids || !xids->is_array()) {
    out.push_back(Make("gpu_health.xid", "GPU XIDs", "", CheckStatus::kFail, nullptr, "read",
                       "the kernel log was not read (neither dmesg nor journalctl is installed)"));
    return out;
  }
  XidChecks(facts, settings, out);
  return out;
}

}  // namespace plumb::modules::gpu_health
