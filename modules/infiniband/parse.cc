#include "modules/infiniband/parse.h"

#include "modules/parse_util.h"

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

int Indent(std::string_view t) {
  int n = 0;
  while (n < static_cast<int>(t.size()) && t[n] == '\t') ++n;
  return n;
}

}  // namespace

Result<std::vector<Port>> ParseIbstat(std::string_view text, std::vector<std::string>* warnings) {
  std::vector<Port> ports;
  std::string ca, ca_type, firmware;
  bool in_ca = false, in_port = false;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  for (const Line& line : lines) {
    std::string_view t = line.text;
    if (Trim(t).empty()) continue;
    if (StartsWith(t, "ibwarn:") || StartsWith(t, "ibpanic:") || StartsWith(t, "ibwarn ")) {
      if (warnings) warnings->push_back(std::string(Trim(t)));
      continue;
    }
    if (truncated && &line == &lines.back())
      return ParseError(kModule, "ibstat", "output cut short", &line);
    int indent = Indent(t);
    std::string_view body = Trim(t);
    if (indent == 0) {
      if (!StartsWith(body, "CA '") || !EndsWith(body, "'") || body.size() < 6)
        return ParseError(kModule, "ibstat", "expected CA '<name>'", &line);
      ca = std::string(body.substr(4, body.size() - 5));
      ca_type.clear();
      firmware.clear();
      in_ca = true;
      in_port = false;
      continue;
    }
    if (!in_ca) return ParseError(kModule, "ibstat", "field outside a CA", &line);
    size_t colon = body.find(':');
    if (colon == std::string_view::npos) return ParseError(kModule, "ibstat", "expected 'Key: value'", &line);
    std::string_view key = body.substr(0, colon);
    std::string_view value = Trim(body.substr(colon + 1));
    if (indent == 1) {
      if (StartsWith(key, "Port ")) {
        auto n = ParseNonNegative(key.substr(5));
        if (!n || *n > 255 || !value.empty()) return ParseError(kModule, "ibstat", "bad port header", &line);
        Port p;
        p.ca = ca;
        p.ca_type = ca_type;
        p.firmware = firmware;
        p.port = static_cast<int>(*n);
        ports.push_back(std::move(p));
        in_port = true;
      } else if (key == "CA type") {
        ca_type = std::string(value);
      } else if (key == "Firmware version") {
        firmware = std::string(value);
      }
      continue;
    }
    if (indent == 2 && in_port) {
      Port& p = ports.back();
      if (key == "State") p.state = std::string(value);
      else if (key == "Physical state") p.physical_state = std::string(value);
      else if (key == "Link layer") p.link_layer = std::string(value);
      else if (key == "Rate") {
        p.rate_gbps = ParseRate(value);
        if (!p.rate_gbps) return ParseError(kModule, "ibstat", "bad rate", &line);
      }
      continue;
    }
    return ParseError(kModule, "ibstat", "unexpected indentation", &line);
  }
  return ports;
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

Result<nlohmann::json> FactsFromParts(const std::vector<ProbePart>& parts) {
  nlohmann::json facts = {{"present", false}, {"ports", nlohmann::json::array()},
                          {"warnings", nlohmann::json::array()}};
  const ProbePart* ib = FindPart(parts, "ibstat");
  if (!ib || ib->absent()) return facts;
  facts["present"] = true;
  std::vector<std::string> warnings;
  auto ports = ParseIbstat(ib->text, &warnings);
  if (!ports.ok()) return ports.error();
  std::map<std::pair<std::string, int>, int> mtus;
  if (const ProbePart* d = FindPart(parts, "devinfo"); d && !d->absent()) {
    auto m = ParseIbvDevinfo(d->text);
    if (!m.ok()) return m.error();
    mtus = std::move(*m);
  }
  for (const auto& p : *ports) {
    auto mtu = mtus.find({p.ca, p.port});
    facts["ports"].push_back(
        {{"ca", p.ca}, {"port", p.port}, {"ca_type", p.ca_type}, {"firmware", p.firmware},
         {"state", p.state}, {"physical_state", p.physical_state},
         {"rate_gbps", p.rate_gbps ? nlohmann::json(*p.rate_gbps) : nlohmann::json()},
         {"link_layer", p.link_layer},
         {"mtu", mtu == mtus.end() ? nlohmann::json() : nlohmann::json(mtu->second)}});
  }
  for (auto& w : warnings) facts["warnings"].push_back(w);
  return facts;
}

}  // namespace plumb::modules::infiniband
