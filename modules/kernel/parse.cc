#include "modules/kernel/parse.h"

#include "modules/module_util.h"
#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::kernel {
namespace {

bool IsReleaseChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '-' || c == '_' || c == '+' || c == '~';
}

}  // namespace

Result<std::string> ParseUnameRelease(std::string_view text) {
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  if (lines.empty()) return ParseError("kernel", "uname -r", "empty output");
  if (truncated) return ParseError("kernel", "uname -r", "output cut short", &lines.back());
  std::string_view r = lines[0].text;
  if (r.empty() || r.size() > 128) return ParseError("kernel", "uname -r", "unexpected release", &lines[0]);
  for (char c : r)
    if (!IsReleaseChar(c)) return ParseError("kernel", "uname -r", "unexpected release", &lines[0]);
  if (lines.size() != 1) return ParseError("kernel", "uname -r", "more than one line", &lines[1]);
  return std::string(r);
}

Result<std::string> ParseBootId(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.empty()) return ParseError("kernel", "boot_id", "empty output");
  std::string_view id = Trim(lines[0].text);
  bool ok = id.size() == 36;
  for (size_t i = 0; ok && i < id.size(); ++i) {
    char c = id[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    ok = dash ? c == '-' : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
  if (!ok || lines.size() != 1) return ParseError("kernel", "boot_id", "not a UUID", &lines[0]);
  return std::string(id);
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out("kernel", {{"release", nullptr}, {"boot_id", nullptr},
                           {"manager", PackageManagerOf(parts)}});
  nlohmann::json& facts = out.facts();
  if (const ProbePart* rel = FindPart(parts, "release")) {
    out.Read("release", [&]() -> Status {
      auto r = ParseUnameRelease(rel->text);
      if (!r.ok()) return r.error();
      facts["release"] = *r;
      return OkStatus();
    });
  } else {
    out.Fail("release", ParseError("kernel", "probe", "no 'release' part"));
  }
  if (const ProbePart* b = FindPart(parts, "boot_id"); b && !b->absent()) {
    out.Read("boot_id", [&]() -> Status {
      auto id = ParseBootId(b->text);
      if (!id.ok()) return id.error();
      facts["boot_id"] = *id;
      return OkStatus();
    });
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::kernel
