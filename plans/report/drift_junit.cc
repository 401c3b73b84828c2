// JUnit XML (the Ant/Jenkins shape, validated against junit-10.xsd in the tests): CI systems
// show one failed test per drifted node x key.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "plans/plan/findings.h"
#include "plans/report/drift_render.h"
#include "plans/report/ordered_render.h"
#include "plans/report/rows.h"

namespace plumb::plans::report {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 has no way to carry most control characters, even escaped.
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += "?";
        else out += ch;
    }
  }
  return out;
}

void DriftToJunit(const DriftReport& r, std::ostream& out) {
  // The totals open the document, so they are counted first; then each node's suite is
  // written as soon as it is formatted (a 10,000-node report is ~45 MB of XML: never held
  // whole).
  int tests = 0, failures = 0, errors = 0;
  auto failed_findings = [](const DriftNode& n) {
    return static_cast<int>(std::count_if(n.findings.begin(), n.findings.end(), [](const Finding& f) {
      return f.check.status == modules::CheckStatus::kFail;
    }));
  };
  for (const DriftNode& n : r.nodes) {
    tests += static_cast<int>(n.checks.size() + n.findings.size()) + (n.readable ? 0 : 1);
    failures += n.Count(DriftStatus::kDrift) + failed_findings(n);
    errors += n.readable ? 0 : 1;
  }
  out << fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"plumb drift {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"0\">\n",
      XmlEscape(r.cluster), tests, failures, errors);
  // Each node's suite is formatted on any core; WriteOrdered keeps them in report order.
  auto suite = [&r, &failed_findings](size_t i, std::string& piece) {
    const DriftNode& n = r.nodes[i];
    std::string cases;
    int t = 0, f = 0, e = 0, s = 0;
    if (!n.readable) {
      ++t;
      ++e;
      cases += fmt::format(
          "    <testcase name=\"readable\" classname=\"{0}\" time=\"0\">\n"
          "      <error type=\"unreadable\" message=\"{1}\">node {0} could not be read: {1}"
          "</error>\n    </testcase>\n",
          XmlEscape(n.node), XmlEscape(n.unreadable_reason));
    }
    for (const DriftCheck& c : n.checks) {
      ++t;
      cases += fmt::format("    <testcase name=\"{}\" classname=\"{}.{}\" time=\"0\"",
                           XmlEscape(RowName(c.key(), c.member)), XmlEscape(n.node), XmlEscape(c.module()));
      const std::string where = c.origin().known() ? "pinned at " + c.origin().ToString() : "";
      switch (c.status) {
        case DriftStatus::kInSync:
          cases += "/>\n";
          continue;
        case DriftStatus::kUnchecked:
          ++s;
          cases += fmt::format(">\n      <skipped message=\"no module of this run checks {}\"/>\n",
                               XmlEscape(c.module()));
          break;
        case DriftStatus::kWaived:
          ++s;
          cases += fmt::format(
              ">\n      <skipped message=\"waived: {} (owner {}, until {})\"/>\n",
              XmlEscape(c.waiver->reason), XmlEscape(c.waiver->owner),
              XmlEscape(c.waiver->expires));
          break;
        case DriftStatus::kDrift: {
          ++f;
          const std::string name = RowName(c.key(), c.member);
          std::string msg = fmt::format("{}: {} -> {} ({}{})", name, ShowValue(c.observed),
                                        ShowValue(c.desired()), ChangeReasonName(c.reason),
                                        c.why.empty() ? "" : "; " + c.why);
          std::string body = fmt::format("node {} drifted on {}\nlive: {}\ndesired: {}\n{}{}{}{}",
                                         n.node, name, ShowValue(c.observed), ShowValue(c.desired()),
                                         where.empty() ? "" : where + "\n",
                                         c.why.empty() ? "" : "why: " + c.why + "\n", c.summary,
                                         c.waiver && c.waiver->expired
                                             ? "\nwaiver expired " + c.waiver->expires
                                             : "");
          cases += fmt::format(
              ">\n      <failure type=\"drift.{}\" message=\"{}\">{}</failure>\n",
              ChangeReasonName(c.reason), XmlEscape(msg), XmlEscape(body));
          break;
        }
      }
      cases += "    </testcase>\n";
    }
    // Health findings: a failed check is a failed test (beside the drift, not in its verdict);
    // a warning passes, with its words.
    for (const Finding& x : n.findings) {
      ++t;
      const modules::CheckResult& c = x.check;
      const std::string name = c.subject.empty() ? "health: " + c.name
                                                 : fmt::format("health: {} [{}]", c.name, c.subject);
      cases += fmt::format("    <testcase name=\"{}\" classname=\"{}.{}\" time=\"0\">\n",
                           XmlEscape(name), XmlEscape(n.node), XmlEscape(c.module));
      const std::string text = FindingText(c) +
                               (x.origin.known() ? "\npinned at " + x.origin.ToString() : "");
      if (c.status == modules::CheckStatus::kFail)
        cases += fmt::format("      <failure type=\"health.{}\" message=\"{}\">{}</failure>\n",
                             XmlEscape(c.module), XmlEscape(FindingText(c)), XmlEscape(text));
      else
        cases += fmt::format("      <system-out>warning: {}</system-out>\n", XmlEscape(text));
      cases += "    </testcase>\n";
    }
    f += failed_findings(n);
    piece += fmt::format(
        "  <testsuite name=\"{0}\" tests=\"{1}\" failures=\"{2}\" errors=\"{3}\" skipped=\"{4}\" "
        "time=\"0\" timestamp=\"{5}\" hostname=\"{0}\">\n"
        "    <properties>\n"
        "      <property name=\"commit\" value=\"{6}\"/>\n"
        "      <property name=\"marker_commit\" value=\"{7}\"/>\n"
        "      <property name=\"rack\" value=\"{8}\"/>\n"
        "      <property name=\"gathered_at\" value=\"{9}\"/>\n"
        "    </properties>\n",
        XmlEscape(n.node), t, f, e, s, XmlEscape(r.created_at), XmlEscape(r.source.commit),
        XmlEscape(n.marker_commit), XmlEscape(n.rack), XmlEscape(r.gathered_at));
    piece += cases;
    piece += "  </testsuite>\n";
  };
  WriteOrdered(r.nodes.size(), suite, out);
  out << "</testsuites>\n";
}

std::string DriftToJunit(const DriftReport& r) {
  std::ostringstream out;
  DriftToJunit(r, out);
  return std::move(out).str();
}

}  // namespace plumb::plans::report
