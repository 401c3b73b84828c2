#include "plans/report/health_report.h"

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "plans/report/drift_render.h"   // XmlEscape, PromLabelValue, ShowValue

namespace plumb::plans::report {

using modules::CheckResult;

namespace {

int CountIf(const HealthReport& r, const std::function<bool(const NodeHealth&)>& pred) {
  int n = 0;
  for (const NodeHealth& h : r.nodes) n += pred(h) ? 1 : 0;
  return n;
}

std::string Subject(const CheckResult& c) {
  return c.subject.empty() ? c.name : fmt::format("{} ({})", c.name, c.subject);
}

// "352.1 (min 350)": the measurement against what is allowed.
std::string Against(const CheckResult& c) {
  std::string out = ShowValue(c.measured);
  if (c.threshold.is_object() && !c.threshold.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : c.threshold.items()) parts.push_back(fmt::format("{} {}", k, ShowValue(v)));
    out += fmt::format(" ({})", fmt::join(parts, ", "));
  } else if (!c.threshold.is_null()) {
    out += fmt::format(" (want {})", ShowValue(c.threshold));
  }
  return out;
}

}  // namespace

int HealthReport::Passed() const {
  return CountIf(*this, [](const NodeHealth& h) {
    return h.reachable && !h.modules.empty() && h.Verdict() <= modules::CheckStatus::kSkip;
  });
}
int HealthReport::Warned() const {
  return CountIf(*this, [](const NodeHealth& h) { return h.reachable && h.Verdict() == modules::CheckStatus::kWarn; });
}
int HealthReport::Failed() const {
  return CountIf(*this, [](const NodeHealth& h) { return h.reachable && h.Verdict() == modules::CheckStatus::kFail; });
}
int HealthReport::Unreachable() const {
  return CountIf(*this, [](const NodeHealth& h) { return !h.reachable; });
}
int HealthReport::NotPinned() const {
  return CountIf(*this, [](const NodeHealth& h) { return h.reachable && h.modules.empty(); });
}

std::string HealthToText(const HealthReport& r) {
  std::string out;
  for (const NodeHealth& h : r.nodes) {
    if (!h.reachable) {
      out += fmt::format("{}: UNREACHABLE\n", h.node);
    } else if (h.modules.empty()) {
      out += fmt::format("{}: no health checks pinned\n", h.node);
      continue;
    } else {
      int passed = 0;
      for (const CheckResult& c : h.checks) passed += c.status == modules::CheckStatus::kPass;
      out += fmt::format("{}: {} ({} of {} checks passed; {}; {:.1f}s)\n", h.node,
                         modules::CheckStatusName(h.Verdict()), passed, h.checks.size(),
                         fmt::join(h.modules, ", "), h.seconds);
    }
    for (const CheckResult& c : h.checks) {
      if (c.status == modules::CheckStatus::kPass) continue;
      out += fmt::format("  {} {}: {}: {}{}\n", c.status == modules::CheckStatus::kFail   ? "FAIL"
                                                 : c.status == modules::CheckStatus::kWarn ? "WARN"
                                                                                           : "SKIP",
                         c.module, Subject(c), Against(c),
                         c.message.empty() ? "" : " - " + c.message);
    }
    for (const Diagnostic& d : h.problems.items())
      out += fmt::format("  ERROR {}: {}\n", d.code, d.message);
  }
  out += fmt::format("{} node(s): {} passed, {} warned, {} failed, {} unreachable, {} pin no health "
                     "check ({:.1f}s)\n",
                     r.nodes.size(), r.Passed(), r.Warned(), r.Failed(), r.Unreachable(),
                     r.NotPinned(), r.wall_s);
  return out;
}

nlohmann::json HealthToJson(const HealthReport& r) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeHealth& h : r.nodes) nodes.push_back(h.ToJson());
  return {{"cluster", r.cluster},
          {"commit", r.commit},
          {"wall_s", r.wall_s},
          {"summary",
           {{"nodes", r.nodes.size()},
            {"passed", r.Passed()},
            {"warned", r.Warned()},
            {"failed", r.Failed()},
            {"unreachable", r.Unreachable()},
            {"not_pinned", r.NotPinned()}}},
          {"nodes", std::move(nodes)}};
}

std::string HealthToJunit(const HealthReport& r) {
  int tests = 0, failures = 0, errors = 0;
  std::string suites;
  for (const NodeHealth& h : r.nodes) {
    std::string cases;
    int t = 0, f = 0, e = 0, s = 0;
    if (!h.reachable || h.problems.HasErrors()) {
      std::vector<std::string> why;
      for (const Diagnostic& d : h.problems.items()) why.push_back(d.message);
      ++t;
      ++e;
      cases += fmt::format(
          "    <testcase name=\"checks ran\" classname=\"{0}\" time=\"0\">\n"
          "      <error type=\"{1}\" message=\"{2}\">{2}</error>\n    </testcase>\n",
          XmlEscape(h.node), h.reachable ? "health.problem" : "unreachable",
          XmlEscape(fmt::format("{}", fmt::join(why, "; "))));
    }
    for (const CheckResult& c : h.checks) {
      ++t;
      std::string body;
      if (c.status == modules::CheckStatus::kFail) {
        ++f;
        body = fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", XmlEscape(c.module),
                           XmlEscape(Against(c)), XmlEscape(c.message));
      } else if (c.status == modules::CheckStatus::kSkip) {
        ++s;
        body = fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(c.message));
      } else if (c.status == modules::CheckStatus::kWarn) {
        body = fmt::format("      <system-out>WARN {}: {}</system-out>\n", XmlEscape(Against(c)),
                           XmlEscape(c.message));
      }
      cases += fmt::format("    <testcase name=\"{}\" classname=\"{}.{}\" time=\"0\">\n{}    </testcase>\n",
                           XmlEscape(Subject(c)), XmlEscape(h.node), XmlEscape(c.module), body);
    }
    tests += t;
    failures += f;
    errors += e;
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n{}"
        "  </testsuite>\n",
        XmlEscape(h.node), t, f, e, s, h.seconds, cases);
  }
  return fmt::format(
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<testsuites name=\"plumb health {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
             XmlEscape(r.cluster), tests, failures, errors, r.wall_s) +
         suites + "</testsuites>\n";
}

std::string HealthToProm(const HealthReport& r, long long now_unix) {
  const std::string cluster = PromLabelValue(r.cluster);
  std::string out;
  auto family = [&out](const char* name, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  };
  family("plumb_health_node_ok",
         "1 when every health check of the node passed (warnings allowed), 0 when one failed or "
         "the node could not be checked.");
  for (const NodeHealth& h : r.nodes)
    if (!h.modules.empty() || !h.reachable)
      out += fmt::format("plumb_health_node_ok{{cluster=\"{}\",node=\"{}\"}} {}\n", cluster,
                         PromLabelValue(h.node), h.Verdict() < modules::CheckStatus::kFail ? 1 : 0);
  family("plumb_health_check", "1 when the check passed (or warned), 0 when it failed or was skipped.");
  for (const NodeHealth& h : r.nodes)
    for (const CheckResult& c : h.checks)
      out += fmt::format(
          "plumb_health_check{{cluster=\"{}\",node=\"{}\",module=\"{}\",check=\"{}\",subject=\"{}\"}} {}\n",
          cluster, PromLabelValue(h.node), PromLabelValue(c.module), PromLabelValue(c.id),
          PromLabelValue(c.subject),
          c.status == modules::CheckStatus::kPass || c.status == modules::CheckStatus::kWarn ? 1 : 0);
  family("plumb_health_value", "What a check measured (bus bandwidth in GB/s, error counts...).");
  for (const NodeHealth& h : r.nodes)
    for (const CheckResult& c : h.checks)
      if (c.measured.is_number())
        out += fmt::format(
            "plumb_health_value{{cluster=\"{}\",node=\"{}\",module=\"{}\",check=\"{}\",subject=\"{}\"}} {}\n",
            cluster, PromLabelValue(h.node), PromLabelValue(c.module), PromLabelValue(c.id),
            PromLabelValue(c.subject), c.measured.dump());
  family("plumb_health_last_run_timestamp_seconds", "When plumb health last ran.");
  out += fmt::format("plumb_health_last_run_timestamp_seconds{{cluster=\"{}\"}} {}\n", cluster, now_unix);
  return out;
}

}  // namespace plumb::plans::report

namespace plumb::plans::report {

HealthReport CheckHealth(const HealthCheckRequest& r, ShellFactory& shells) {
  std::vector<HealthTarget> targets;
  for (const inventory::Node* n : r.nodes) {
    auto d = r.desired->find(n->name);
    if (d == r.desired->end()) continue;
    targets.push_back({n, &*d->second.desired, r.busy ? BusyReason(*r.busy, n->name) : ""});
  }
  HealthReport report;
  report.cluster = r.cluster->name;
  report.commit = r.cluster->source.commit;
  report.nodes = RunHealth(targets, shells, r.modules, r.fanout, r.timeout, r.progress);
  return report;
}

}  // namespace plumb::plans::report
