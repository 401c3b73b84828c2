#pragma once
/// A file's whole text, for the small files the verbs read (a plan, a targets list, a report):
/// the caller says what a missing or unreadable file means.
#include <optional>
#include <string>

namespace plumb::plans {

/// The bytes of `path`, or nullopt when it cannot be opened.
std::optional<std::string> ReadFileText(const std::string& path);

}  // namespace plumb::plans
