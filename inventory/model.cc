#include "inventory/model.h"

#include <algorithm>

namespace plumb::inventory {

std::string JumpSpec::ToString() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return (user.empty() ? "" : user + "@") + h + (port == 22 ? "" : ":" + std::to_string(port));
}

std::optional<JumpSpec> ParseJump(const std::string& text) {
  if (text.empty() || text == "none") return std::nullopt;
  JumpSpec j;
  std::string rest = text;
  if (size_t at = rest.find('@'); at != std::string::npos) {
    j.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (j.user.empty()) return std::nullopt;
  }
  std::string port;
  if (!rest.empty() && rest[0] == '[') {   // [IPv6]:port
    size_t close = rest.find(']');
    if (close == std::string::npos) return std::nullopt;
    j.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return std::nullopt;
      port = rest.substr(1);
    }
  } else {
    size_t colon = rest.find(':');
    j.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (j.host.empty()) return std::nullopt;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    j.port = std::stoi(port);
    if (j.port < 1 || j.port > 65535) return std::nullopt;
  } else if (text.back() == ':') {
    return std::nullopt;
  }
  return j;
}

std::string Node::Domain(const std::string& by) const {
  if (by == "rack") return rack;
  if (by == "leaf") return leaf;
  if (by == "nvlink_domain") return nvlink_domain;
  auto it = labels.find(by);
  return it == labels.end() ? std::string() : it->second;
}

Location NodeDesired::OriginOf(std::string p) const {
  while (!p.empty()) {
    if (auto it = origins->find(p); it != origins->end()) return it->second;
    auto slash = p.rfind('/');
    if (slash == std::string::npos) break;
    p.resize(slash);
  }
  return {};
}

nlohmann::json NodeDesired::ValueAt(const std::string& pointer) const {
  if (pointer.empty()) return nullptr;
  try {
    nlohmann::json::json_pointer p(pointer);
    if (desired->contains(p)) return desired->at(p);
  } catch (const nlohmann::json::exception&) {
  }
  return nullptr;
}

const Node* Cluster::FindNode(const std::string& node_name) const {
  auto it = std::find_if(nodes.begin(), nodes.end(),
                         [&](const Node& n) { return n.name == node_name; });
  return it == nodes.end() ? nullptr : &*it;
}

int RolloutPolicy::MaxUnavailable(int total) const {
  int n = max_unavailable_count;
  if (max_unavailable_is_percent) n = total * max_unavailable_count / 100;  // round down
  return std::max(1, n);
}

}  // namespace plumb::inventory
