#include "inventory/trust_policy.h"

#include <fmt/format.h>

#include "schemas/validate.h"
#include "schemas/yaml_json.h"

namespace plumb::inventory {
namespace {

// A key file named by the policy, from the same tree. `key` is the policy's key naming it.
bool ReadNamed(const FileSource& files, const schemas::YamlDocument& doc, const std::string& key,
               const std::string& path, std::string& into, Diagnostics& diags) {
  const Location where = doc.marks.At("/" + key);
  // The schema's pattern keeps it relative; ".." could still climb out of the repo.
  if (path.find("..") != std::string::npos) {
    diags.Add(Diagnostic::Error("policy.path", fmt::format("{}: '{}' leaves the repo", key, path),
                                where, key, "name a file inside the cluster repo"));
    return false;
  }
  auto text = files.Read(path);
  if (!text) {
    Diagnostic d = text.error();
    d.where = where;
    diags.Add(std::move(d));
    return false;
  }
  if (!text->has_value()) {
    diags.Add(Diagnostic::Error("policy.missing-file",
                                fmt::format("{}: no file '{}' in the same commit as {}", key, path,
                                            kPolicyFile),
                                where, key, "commit the file next to policy.yaml"));
    return false;
  }
  into = std::move(**text);
  return true;
}

}  // namespace

LoadedPolicy LoadTrustPolicy(const FileSource& files) {
  LoadedPolicy out;
  auto text = files.Read(kPolicyFile);
  if (!text) {
    out.diags.Add(text.error());
    return out;
  }
  if (!text->has_value()) return out;
  auto doc = schemas::ParseYaml(**text, kPolicyFile, out.diags);
  if (!doc || out.diags.HasErrors()) return out;
  if (doc->json.is_null()) doc->json = nlohmann::json::object();   // an empty file: no rule
  if (!schemas::ValidateDocument(*doc, "policy.schema.json", out.diags)) return out;
  const nlohmann::json& j = doc->json;
  TrustPolicy p;
  p.require_signed_commits = j.value("require_signed_commits", false);
  p.allowed_signers = j.value("allowed_signers", "");
  p.gpg_keyring = j.value("gpg_keyring", "");
  if (!p.allowed_signers.empty())
    ReadNamed(files, *doc, "allowed_signers", p.allowed_signers, p.allowed_signers_text, out.diags);
  if (!p.gpg_keyring.empty())
    ReadNamed(files, *doc, "gpg_keyring", p.gpg_keyring, p.gpg_keyring_data, out.diags);
  if (p.require_signed_commits && p.allowed_signers.empty() && p.gpg_keyring.empty())
    out.diags.Add(Diagnostic::Error(
        "policy.no-keys", "require_signed_commits is true but no key is allowed",
        doc->marks.At("/require_signed_commits"), "require_signed_commits",
        "name an allowed-signers file (allowed_signers: allowed_signers) or a keyring "
        "(gpg_keyring: keys.gpg)"));
  if (out.diags.HasErrors()) return out;
  out.policy = std::move(p);
  return out;
}

}  // namespace plumb::inventory
