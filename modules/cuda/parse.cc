#include "modules/cuda/parse.h"

#include "modules/module_util.h"
#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::cuda {
namespace {

constexpr std::string_view kModule = "cuda";

bool IsDottedVersion(std::string_view v) {
  if (v.empty() || v.size() > 40 || v.front() == '.' || v.back() == '.') return false;
  for (char c : v)
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  return true;
}

}  // namespace

Result<CudaVersion> ParseVersionJson(std::string_view text) {
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return ParseError(kModule, "version.json", "not a JSON object (cut short or garbled)");
  CudaVersion out;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_object()) continue;
    auto ver = v.find("version");
    if (ver == v.end() || !ver->is_string()) continue;
    if (k == "cuda") out.version = ver->get<std::string>();
    else out.components[k] = ver->get<std::string>();
  }
  if (out.version.empty()) return ParseError(kModule, "version.json", "no \"cuda\".\"version\"");
  if (!IsDottedVersion(out.version))
    return ParseError(kModule, "version.json", "bad \"cuda\" version '" + Excerpt(out.version) + "'");
  return out;
}

Result<std::string> ParseVersionTxt(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.empty()) return ParseError(kModule, "version.txt", "empty output");
  std::string_view t = Trim(lines[0].text);
  if (!StartsWith(t, "CUDA Version ") || !IsDottedVersion(t.substr(13)))
    return ParseError(kModule, "version.txt", "expected 'CUDA Version X.Y.Z'", &lines[0]);
  return std::string(t.substr(13));
}

bool VersionPrefixMatches(std::string_view want, std::string_view have) {
  if (want.empty()) return false;
  if (want == have) return true;
  return StartsWith(have, want) && have.size() > want.size() && have[want.size()] == '.';
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"manager", PackageManagerOf(parts)},
                          {"version", nullptr},
                          {"source", nullptr},
                          {"components", nlohmann::json::object()},
                          {"toolkits", nlohmann::json::array()}});
  nlohmann::json& facts = out.facts();
  if (const ProbePart* p = FindPart(parts, "version_json"); p && !p->absent()) {
    out.Read("version_json", [&]() -> Status {
      auto v = ParseVersionJson(p->text);
      if (!v.ok()) return v.error();
      facts["version"] = v->version;
      facts["source"] = "version.json";
      for (const auto& [k, c] : v->components) facts["components"][k] = c;
      return OkStatus();
    });
  } else if (const ProbePart* t = FindPart(parts, "version_txt"); t && !t->absent()) {
    out.Read("version_txt", [&]() -> Status {
      auto v = ParseVersionTxt(t->text);
      if (!v.ok()) return v.error();
      facts["version"] = *v;
      facts["source"] = "version.txt";
      return OkStatus();
    });
  }
  if (const ProbePart* p = FindPart(parts, "toolkits")) {
    nlohmann::json toolkits = nlohmann::json::array();
    if (out.Read("toolkits", [&]() -> Status {
          for (const Line& line : SplitLines(p->text)) {
            std::string_view t = Trim(line.text);
            if (t.empty()) continue;
            if (!StartsWith(t, "/usr/local/cuda-"))
              return ParseError(kModule, "ls /usr/local/cuda-*", "unexpected path", &line);
            toolkits.push_back(std::string(t));
          }
          return OkStatus();
        }))
      facts["toolkits"] = std::move(toolkits);
    else
      facts["toolkits"] = nullptr;   // not read: an empty list would say "none installed"
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::cuda
