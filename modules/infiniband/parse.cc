#include "modules/infiniband/parse.h"

#include <algorithm>

#include <fmt/format.h>

#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::infiniband {
namespace {

constexpr std::string_view kModule = "infiniband";

std::optional<double> ParseRate(std::string_view s) {
  size_t dot = s.find('.');
  auto whole = ParseNonNegative(s.substr(0, dot));
  if (!whole) return std::nullopt;
  double v = static_cast<double>(*whole);
  if (dot != std::string_view::npos) {
    std::string_view frac = s.substr(dot + 1);
    auto f = ParseNonNegative(frac);
    if (!f || frac.size() > 6) return std::nullopt;
    double scale = 1;
    for (size_t i = 0; i < frac.size(); ++i) scale *= 10;
    v += static_cast<double>(*f) / scale;
  }
  return v;
}

// Width of the leading whitespace, a tab counting to the next multiple of 8 (as a terminal
// shows it), so tab- and space-indented output nest alike.
int IndentWidth(std::string_view t) {
  int w = 0;
  for (char c : t) {
    if (c == '\t') w = (w / 8 + 1) * 8;
    else if (c == ' ') ++w;
    else break;
  }
  return w;
}

// Where an ibwarn/ibpanic message starts in `t`, or npos. At the start of a line the bare
// prefixes count; inside a line only the full "<kind>: [pid]" form, which stdout never prints.
size_t MessageAt(std::string_view t) {
  std::string_view body = Trim(t);
  if (StartsWith(body, "ibwarn:") || StartsWith(body, "ibpanic:") || StartsWith(body, "ibwarn "))
    return 0;
  size_t best = std::string_view::npos;
  for (std::string_view m : {"ibpanic: [", "ibwarn: ["}) best = std::min(best, t.find(m));
  return best;
}

struct StdoutLine {
  int number = 0;
  std::string text;
};

// Splits ibstat's merged output into its stdout lines and its messages. A message found inside
// a line cut that line in two: the part before it continues on the next line.
void SeparateMessages(std::string_view text, std::vector<StdoutLine>* out,
                      std::vector<std::string>* messages) {
  std::string carry;
  int carry_line = 0;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = line.text;
    if (size_t at = MessageAt(t); at != std::string_view::npos) {
      messages->emplace_back(Trim(t.substr(at)));
      if (at > 0 && !Trim(t.substr(0, at)).empty()) {
        if (carry.empty()) carry_line = line.number;
        carry += t.substr(0, at);
      }
      continue;
    }
    if (!carry.empty()) {
      out->push_back({carry_line, carry + std::string(t)});
      carry.clear();
    } else {
      out->push_back({line.number, std::string(t)});
    }
  }
  if (!carry.empty()) out->push_back({carry_line, carry});
}

// "ibpanic: [pid] main: stat of IB device 'mlx5_3' failed: ..." -> "mlx5_3".
std::optional<std::string> UnreadCa(std::string_view message) {
  constexpr std::string_view kStat = "stat of IB device '";
  size_t at = message.find(kStat);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = message.substr(at + kStat.size());
  size_t quote = rest.find("' failed");
  if (quote == std::string_view::npos || quote == 0) return std::nullopt;
  return std::string(rest.substr(0, quote));
}

}  // namespace

Result<Ibstat> ParseIbstat(std::string_view text) {
  Ibstat out;
  std::vector<StdoutLine> lines;
  SeparateMessages(text, &lines, &out.messages);
  for (const std::string& m : out.messages)
    if (StartsWith(m, "ibpanic:"))
      if (auto ca = UnreadCa(m)) out.unread_cas.push_back(*ca);

  std::string ca, ca_type, firmware;
  int ca_indent = -1, port_indent = -1;   // -1: not inside a CA / a port
  for (const StdoutLine& sl : lines) {
    Line line{sl.number, sl.text};
    std::string_view body = Trim(sl.text);
    if (body.empty()) continue;
    int indent = IndentWidth(sl.text);
    if (StartsWith(body, "CA '") && EndsWith(body, "'") && body.size() >= 6) {
      ca = std::string(body.substr(4, body.size() - 5));
      ca_type.clear();
      firmware.clear();
      ca_indent = indent;
      port_indent = -1;
      continue;
    }
    // Only the nesting counts: a field is deeper than its CA line, a port's field deeper than
    // its "Port N:" line, whatever the whitespace.
    if (indent <= ca_indent || (ca_indent < 0 && indent == 0))
      return ParseError(kModule, "ibstat", "expected CA '<name>'", &line);
    if (ca_indent < 0) return ParseError(kModule, "ibstat", "field outside a CA", &line);
    size_t colon = body.find(':');
    if (colon == std::string_view::npos) return ParseError(kModule, "ibstat", "expected 'Key: value'", &line);
    std::string_view key = body.substr(0, colon);
    std::string_view value = Trim(body.substr(colon + 1));
    if (port_indent >= 0 && indent > port_indent) {   // a field of the current port
      Port& p = out.ports.back();
      if (key == "State") p.state = std::string(value);
      else if (key == "Physical state") p.physical_state = std::string(value);
      else if (key == "Link layer") p.link_layer = std::string(value);
      else if (key == "Rate") {
        p.rate_gbps = ParseRate(value);
        if (!p.rate_gbps) return ParseError(kModule, "ibstat", "bad rate", &line);
      }
      continue;
    }
    port_indent = -1;   // a CA field: any port before it has ended
    if (StartsWith(key, "Port ")) {
      auto n = ParseNonNegative(key.substr(5));
      if (!n || *n > 255 || !value.empty()) return ParseError(kModule, "ibstat", "bad port header", &line);
      Port p;
      p.ca = ca;
      p.ca_type = ca_type;
      p.firmware = firmware;
      p.port = static_cast<int>(*n);
      out.ports.push_back(std::move(p));
      port_indent = indent;
    } else if (key == "CA type") {
      ca_type = std::string(value);
    } else if (key == "Firmware version") {
      firmware = std::string(value);
    }
  }
  return out;
}

Result<std::map<std::pair<std::string, int>, int>> ParseIbvDevinfo(std::string_view text) {
  std::map<std::pair<std::string, int>, int> out;
  std::string ca;
  int port = -1;
  for (const Line& line : SplitLines(text)) {
    std::string_view body = Trim(line.text);
    if (body.empty() || body == "No IB devices found") continue;
    size_t colon = body.find(':');
    if (colon == std::string_view::npos) return ParseError(kModule, "ibv_devinfo", "expected 'key: value'", &line);
    std::string_view key = body.substr(0, colon);
    std::string_view value = Trim(body.substr(colon + 1));
    if (key == "hca_id") {
      ca = std::string(value);
      port = -1;
    } else if (key == "port") {
      auto n = ParseNonNegative(value);
      if (!n || *n > 255 || ca.empty()) return ParseError(kModule, "ibv_devinfo", "bad port", &line);
      port = static_cast<int>(*n);
    } else if (key == "active_mtu" && port >= 0) {
      auto w = SplitWhitespace(value);
      auto mtu = w.empty() ? std::nullopt : ParseNonNegative(w[0]);
      if (!mtu || *mtu > 65536) return ParseError(kModule, "ibv_devinfo", "bad active_mtu", &line);
      out[{ca, port}] = static_cast<int>(*mtu);
    }
  }
  return out;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"present", false}, {"ports", nlohmann::json::array()},
                          {"warnings", nlohmann::json::array()}});
  nlohmann::json& facts = out.facts();
  const ProbePart* ib = FindPart(parts, "ibstat");
  if (!ib || ib->absent()) return std::move(out).Finish();
  facts["present"] = true;
  std::vector<Port> ports;
  // 124: the probe's `timeout` killed it; 129-192: a signal did. (ibpanic exits 255, normally.)
  if (ib->exit_status == 124 || (ib->exit_status > 128 && ib->exit_status <= 192)) {
    // Killed: stdout's buffer was never flushed, so what came out may end inside any line.
    out.Fail("ibstat", ParseError(kModule, "ibstat", fmt::format("killed (exit {}): its output is incomplete",
                                                                 ib->exit_status)));
  } else {
    std::vector<std::string> unread;
    out.Read("ibstat", [&]() -> Status {
      auto r = ParseIbstat(ib->text);
      if (!r.ok()) return r.error();
      ports = std::move(r->ports);
      for (auto& m : r->messages) facts["warnings"].push_back(std::move(m));
      if (!r->unread_cas.empty()) facts["unread_cas"] = r->unread_cas;
      unread = r->unread_cas;
      return OkStatus();
    });
    // A CA ibstat could not read (it stops there, so the CAs after it went unread too) is a
    // partial read, named: its ports are unknown, never "1 read, 0 unreadable". The ports it
    // did read are kept and shown.
    if (!unread.empty()) {
      std::string cas;
      for (const std::string& ca : unread) cas += (cas.empty() ? "" : ", ") + ca;
      out.Fail("ibstat", ParseError(kModule, "ibstat",
                                    fmt::format("could not read CA {} (exit {}; ibstat stops at the first CA it "
                                                "cannot read, so any listed after it were not read either)",
                                                cas, ib->exit_status)));
    }
  }
  std::map<std::pair<std::string, int>, int> mtus;
  if (const ProbePart* d = FindPart(parts, "devinfo"); d && !d->absent()) {
    out.Read("devinfo", [&]() -> Status {
      auto m = ParseIbvDevinfo(d->text);
      if (!m.ok()) return m.error();
      mtus = std::move(*m);
      return OkStatus();
    });
  }
  for (const auto& p : ports) {
    auto mtu = mtus.find({p.ca, p.port});
    facts["ports"].push_back(
        {{"ca", p.ca}, {"port", p.port}, {"ca_type", p.ca_type}, {"firmware", p.firmware},
         {"state", p.state}, {"physical_state", p.physical_state},
         {"rate_gbps", p.rate_gbps ? nlohmann::json(*p.rate_gbps) : nlohmann::json()},
         {"link_layer", p.link_layer},
         {"mtu", mtu == mtus.end() ? nlohmann::json() : nlohmann::json(mtu->second)}});
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::infiniband
