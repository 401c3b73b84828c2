#include "modules/transport/redfish_messages.h"
#include "schemas/ascii.h"

#include <algorithm>
#include <cctype>

namespace plumb::transport {
namespace {

// Case-insensitive member lookup; returns nullptr when absent or not a string.
std::string StrField(const nlohmann::json& o, std::string_view name) {
  if (!o.is_object()) return {};
  std::string want = schemas::AsciiLower(std::string(name));
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (schemas::AsciiLower(it.key()) == want && it.value().is_string()) return it.value().get<std::string>();
  }
  return {};
}

void Collect(const nlohmann::json& node, std::vector<RedfishMessage>& out, int depth) {
  if (depth > 6) return;
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it.key();
      bool info = key.size() >= 21 &&
                  schemas::AsciiLower(key.substr(key.size() - 21)) == "@message.extendedinfo";
      if (info && it.value().is_array()) {
        for (const auto& m : it.value()) {
          if (!m.is_object()) continue;
          RedfishMessage r;
          r.id = StrField(m, "MessageId");
          r.message = StrField(m, "Message");
          r.severity = StrField(m, "MessageSeverity");
          if (r.severity.empty()) r.severity = StrField(m, "Severity");
          r.resolution = StrField(m, "Resolution");
          for (auto jt = m.begin(); jt != m.end(); ++jt) {
            if (schemas::AsciiLower(jt.key()) == "relatedproperties" && jt.value().is_array()) {
              for (const auto& p : jt.value()) {
                if (p.is_string()) r.related.push_back(p.get<std::string>());
              }
            }
          }
          out.push_back(std::move(r));
        }
      } else if (it.value().is_object()) {
        Collect(it.value(), out, depth + 1);
      }
    }
  }
}

}  // namespace

std::string RedfishMessage::ToString() const {
  std::string s = id;
  if (!message.empty()) s += (s.empty() ? "" : ": ") + message;
  if (!related.empty()) {
    s += " [";
    for (size_t i = 0; i < related.size(); ++i) s += (i ? ", " : "") + related[i];
    s += "]";
  }
  return s;
}

std::vector<RedfishMessage> ExtractMessages(const nlohmann::json& body) {
  std::vector<RedfishMessage> out;
  Collect(body, out, 0);
  return out;
}

std::string MessageKey(std::string_view id) {
  std::string s(id);
  auto first = s.find('.');
  auto last = s.rfind('.');
  if (first == std::string::npos || first == last) return s;
  return s.substr(0, first) + s.substr(last);
}

bool HasMessageKey(const std::vector<RedfishMessage>& messages, std::string_view key, bool prefix) {
  for (const auto& m : messages) {
    auto last = m.id.rfind('.');
    std::string k = last == std::string::npos ? m.id : m.id.substr(last + 1);
    if (k == key || (prefix && k.rfind(key, 0) == 0)) return true;
  }
  return false;
}

bool HasResolution(const RedfishMessage& message) {
  std::string r = schemas::AsciiLower(message.resolution);
  while (!r.empty() && (r.back() == '.' || r.back() == ' ')) r.pop_back();
  while (!r.empty() && r.front() == ' ') r.erase(r.begin());
  return !r.empty() && r != "none";
}

std::string DescribeError(const nlohmann::json& body) {
  auto messages = ExtractMessages(body);
  std::string s;
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    s = StrField(body["error"], "message");
    // The summary is usually the first ExtendedInfo message's text: said once, with its id.
    for (const auto& m : messages) {
      if (!s.empty() && m.message == s) s.clear();
    }
    if (s.empty() && messages.empty()) s = StrField(body["error"], "code");
  }
  std::vector<std::string> said;
  for (const auto& m : messages) {
    std::string line = m.ToString();
    if (line.empty() || std::find(said.begin(), said.end(), line) != said.end()) continue;
    said.push_back(line);
    s += (s.empty() ? "" : "; ") + line;
  }
  return s;
}

}  // namespace plumb::transport
