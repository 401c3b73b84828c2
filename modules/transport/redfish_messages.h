#pragma once
/// Redfish messages (DSP0266 "Error responses", redfish-error.v1_0_2): `error.@Message.ExtendedInfo`,
/// top-level and per-property `@Message.ExtendedInfo` in successful responses too. Every field
/// is optional and names are matched case-insensitively (iLO sends `MessageID`).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::transport {

struct RedfishMessage {
  std::string id;          ///< "Base.1.18.PropertyValueNotInList"
  std::string message;
  std::string severity;    ///< MessageSeverity or Severity: "OK", "Warning", "Critical", ""
  std::string resolution;
  std::vector<std::string> related;   ///< RelatedProperties
  /// "Base.1.18.PropertyValueNotInList: text" (id or text alone when the other is missing).
  std::string ToString() const;
};

/// All messages in a response body, from `error` and from any @Message.ExtendedInfo annotation.
std::vector<RedfishMessage> ExtractMessages(const nlohmann::json& body);

/// "Base.1.18.PropertyValueNotInList" -> "Base.PropertyValueNotInList" (registry + key; the
/// version is ignored when matching).
std::string MessageKey(std::string_view message_id);

/// True if any message's key ends with `key` ("QueryNotSupported" matches
/// "Base.1.5.QueryNotSupportedOnResource" when prefix is true).
bool HasMessageKey(const std::vector<RedfishMessage>& messages, std::string_view key,
                   bool prefix = false);

/// True when the message's Resolution is advice: not empty and not the registries' "None."
/// (which means there is nothing to do).
bool HasResolution(const RedfishMessage& message);

/// One line for an error: "error.message; id: text; id: text", each text once (error.message is
/// usually the first ExtendedInfo message again).
std::string DescribeError(const nlohmann::json& body);

}  // namespace plumb::transport
