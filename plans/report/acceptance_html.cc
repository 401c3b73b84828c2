// The acceptance report as one self-contained page (inline CSS and SVG, no script, nothing
// fetched): what a provider hands over with the cluster. Top: the verdict and who ran what,
// when; a node x check grid (pins, then each health module); the NCCL bus bandwidth of every
// node as bars against the pinned minimum; then each node that did not pass, with its reasons.
// Rendered from the report's JSON: what `plumb acceptance verify` checks is what this shows.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plans/report/acceptance.h"
#include "plans/report/drift_render.h"   // HtmlEscape

namespace plumb::plans::report {
namespace {

using nlohmann::json;

const char* kAcceptanceStyle = R"(body{font-family:sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}
.meta{color:#555;margin-bottom:12px}
.verdict{display:inline-block;padding:4px 10px;border-radius:4px;color:#fff;font-weight:bold}
.v-accepted{background:#1a9641}.v-rejected{background:#222}
table.grid{border-collapse:separate;border-spacing:4px}
table.grid th{font-weight:normal;color:#555;font-size:12px;padding:0 4px}
table.grid th.node{text-align:right}
.cell{width:96px;height:28px;text-align:center;vertical-align:middle;font-size:12px;border-radius:3px}
.s-pass{background:#1a9641;color:#fff}.s-fail{background:#d7191c;color:#fff}
.s-warn{background:#ffd92f;color:#222}.s-skip,.s-none{background:#e0e0e0;color:#555}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border-radius:3px;font-size:12px}
table.nodes{border-collapse:collapse}
table.nodes td,table.nodes th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top;font-size:13px}
code{font-size:12px})";

// A grid cell's state: the worst of the node's checks of one module ("none": not pinned).
std::string ModuleState(const json& node, const std::string& module) {
  // Never checked (unreachable, interrupted): not a pass, whatever it pins.
  if (!node.value("health_checked", false)) return "fail";
  const json& h = node["health"];
  bool pinned = false;
  for (const json& m : h.value("modules", json::array())) pinned |= m == module;
  if (!pinned) return "none";
  int worst = 0;   // pass < skip < warn < fail
  static const std::map<std::string, int> kRank = {{"pass", 0}, {"skip", 1}, {"warn", 2}, {"fail", 3}};
  bool any = false;
  for (const json& c : h.value("checks", json::array())) {
    if (c.value("module", "") != module) continue;
    any = true;
    auto r = kRank.find(c.value("status", "fail"));
    worst = std::max(worst, r == kRank.end() ? 3 : r->second);
  }
  // Pinned but no check came back: the module could not run there (its problem is listed).
  if (!any) return "fail";
  static const char* kWords[] = {"pass", "skip", "warn", "fail"};
  return kWords[worst];
}

std::string PinState(const json& node) {
  if (!node.value("readable", false)) return "fail";
  std::string s = "pass";
  for (const json& p : node.value("pins", json::array())) {
    const std::string st = p.value("status", "");
    if (st == "drift" || st == "unchecked") return "fail";
    if (st == "waived") s = "warn";
  }
  return s;
}

// The NCCL bus bandwidth each node measured, and the minimum the stack pins (the largest seen).
struct Bandwidth {
  std::vector<std::pair<std::string, double>> nodes;
  double minimum = 0;
};
Bandwidth BandwidthOf(const json& report, const modules::Registry& registry) {
  Bandwidth b;
  std::set<std::string, std::less<>> charted;
  for (const modules::Module* m : registry.All())
    if (m->Info().acceptance_chart) charted.emplace(m->Name());
  for (const json& n : report["nodes"])
    for (const json& c : n["health"].value("checks", json::array())) {
      if (!charted.count(c.value("module", "")) || !c["measured"].is_number()) continue;
      const json& t = c["threshold"];
      if (!t.is_object() || !t.contains("min") || !t["min"].is_number()) continue;
      b.nodes.emplace_back(n.value("node", ""), c["measured"].get<double>());
      b.minimum = std::max(b.minimum, t["min"].get<double>());
      break;
    }
  return b;
}

std::string BandwidthChart(const Bandwidth& b) {
  if (b.nodes.empty()) return "<p>No NCCL bandwidth was measured (no stack pins nccl_bw).</p>\n";
  double top = b.minimum;
  for (const auto& [_, v] : b.nodes) top = std::max(top, v);
  top = top <= 0 ? 1 : top * 1.1;
  const int bar = 22, gap = 6, left = 90, width = 520, height = static_cast<int>(b.nodes.size()) * (bar + gap) + 24;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"NCCL all_reduce bus bandwidth per node, GB/s\">\n",
      left + width + 80, height);
  int y = 4;
  for (const auto& [node, v] : b.nodes) {
    const int w = static_cast<int>(v / top * width);
    // Below the minimum: orange, not the grid's red, so the grid's failures stay countable.
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"11\">{:.1f}</text>\n",
        left - 6, y + 15, HtmlEscape(node), left, y, std::max(w, 1), bar,
        v < b.minimum ? "#fdae61" : "#2c7bb6", left + w + 4, y + 15, v);
    y += bar + gap;
  }
  const int x = left + static_cast<int>(b.minimum / top * width);
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"0\" x2=\"{0}\" y2=\"{1}\" stroke=\"#222\" stroke-dasharray=\"4 3\"/>"
      "<text x=\"{2}\" y=\"{3}\" font-size=\"11\">min {4:.0f} GB/s</text>\n</svg>\n",
      x, y, x + 4, y + 14, b.minimum);
  return svg;
}

}  // namespace

std::string AcceptanceToHtml(const json& r, const modules::Registry& registry) {
  const json& summary = r["summary"];
  const bool accepted = summary.value("failed", 1) == 0;
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>plumb acceptance: {0}</title><style>{1}</style></head><body>\n"
      "<h1>plumb acceptance: {0}</h1>\n"
      "<div class=\"meta\">commit <code>{2}</code> (ref {3}) &middot; {4} to {5} &middot; operator {6}"
      " &middot; DCGM level {7} &middot; plumb {8}<br>digest <code>{9}</code></div>\n"
      "<div><span class=\"verdict v-{10}\">{10}</span> {11} of {12} node(s) passed, {13} failed</div>\n",
      HtmlEscape(r.value("cluster", "")), kAcceptanceStyle, HtmlEscape(r.value("commit", "")),
      HtmlEscape(r.value("ref", "")), HtmlEscape(r.value("started_at", "")),
      HtmlEscape(r.value("finished_at", "")), HtmlEscape(r.value("operator", "")),
      r.value("dcgm_level", 0) == 0 ? std::string("as pinned") : std::to_string(r.value("dcgm_level", 0)),
      HtmlEscape(r.value("tool_version", "")), HtmlEscape(r.value("digest", "")),
      accepted ? "accepted" : "rejected", summary.value("passed", 0), summary.value("nodes", 0),
      summary.value("failed", 0));

  // The grid's columns: the pins, then every health module any node pins (in first-seen order).
  std::vector<std::string> modules;
  for (const json& n : r["nodes"])
    for (const json& m : n["health"].value("modules", json::array()))
      if (std::find(modules.begin(), modules.end(), m.get<std::string>()) == modules.end())
        modules.push_back(m.get<std::string>());
  out += "<h2>Nodes</h2>\n<div class=\"legend\"><span class=\"s-pass\">pass</span>"
         "<span class=\"s-fail\">fail</span><span class=\"s-warn\">warn / waived</span>"
         "<span class=\"s-none\">not pinned</span></div>\n";
  out += "<table class=\"grid\" aria-label=\"node by check\"><tr><th></th><th>pins</th>";
  for (const std::string& m : modules) out += fmt::format("<th>{}</th>", HtmlEscape(m));
  out += "</tr>\n";
  for (const json& n : r["nodes"]) {
    const std::string node = n.value("node", "");
    const std::string pins = PinState(n);
    out += fmt::format("<tr><th class=\"node\" scope=\"row\">{0}</th><td class=\"cell s-{1}\" "
                       "title=\"{0}: pins {1}\">{1}</td>",
                       HtmlEscape(node), pins);
    for (const std::string& m : modules) {
      const std::string s = ModuleState(n, m);
      out += fmt::format("<td class=\"cell s-{0}\" title=\"{1}: {2} {0}\">{3}</td>", s,
                         HtmlEscape(node), HtmlEscape(m), s == "none" ? "-" : s);
    }
    out += "</tr>\n";
  }
  out += "</table>\n<h2>NCCL all_reduce bus bandwidth (GB/s)</h2>\n";
  out += BandwidthChart(BandwidthOf(r, registry));

  out += "<h2>Why nodes failed</h2>\n";
  bool any = false;
  std::string rows;
  for (const json& n : r["nodes"]) {
    if (n.value("passed", false)) continue;
    any = true;
    std::string reasons;
    for (const json& why : n.value("reasons", json::array()))
      reasons += fmt::format("<li>{}</li>", HtmlEscape(why.get<std::string>()));
    rows += fmt::format("<tr><td>{}</td><td><ul>{}</ul></td></tr>\n", HtmlEscape(n.value("node", "")), reasons);
  }
  out += any ? "<table class=\"nodes\"><tr><th>node</th><th>reasons</th></tr>\n" + rows + "</table>\n"
             : std::string("<p>Every node passed.</p>\n");

  // Each node's firmware and pins, for the record.
  out += "<h2>Per node: firmware and pins</h2>\n<table class=\"nodes\"><tr><th>node</th>"
         "<th>firmware</th><th>pins (desired = live unless shown)</th></tr>\n";
  for (const json& n : r["nodes"]) {
    std::string fw;
    if (n["firmware"].is_array())
      for (const json& f : n["firmware"])
        fw += fmt::format("{} <code>{}</code><br>", HtmlEscape(f.value("name", "")),
                          HtmlEscape(ShowValue(f.value("version", json()))));
    else
      fw = "(BMC not read)";
    std::string pins;
    for (const json& p : n.value("pins", json::array())) {
      const std::string st = p.value("status", "");
      pins += st == "in_sync"
                  ? fmt::format("{} <code>{}</code><br>", HtmlEscape(p.value("key", "")),
                                HtmlEscape(ShowValue(p["desired"])))
                  : fmt::format("{} <code>{}</code> ({}, live <code>{}</code>)<br>",
                                HtmlEscape(p.value("key", "")), HtmlEscape(ShowValue(p["desired"])),
                                HtmlEscape(st), HtmlEscape(ShowValue(p["live"])));
    }
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", HtmlEscape(n.value("node", "")),
                       fw, pins);
  }
  out += "</table>\n</body></html>\n";
  return out;
}

}  // namespace plumb::plans::report
