#include "plans/trust/signature_tools.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace plumb::plans {
namespace {

using transport::ShellQuote;
constexpr std::chrono::seconds kToolTimeout{60};

// A private directory (0700) removed when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/plumb-verify.XXXXXX";
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  /// Writes `bytes` to `name` inside the directory (0600); its path, or "" on failure.
  std::string Write(const std::string& name, std::string_view bytes) const {
    const std::string p = path_ + "/" + name;
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) return {};
    ::chmod(p.c_str(), 0600);
    return p;
  }

 private:
  std::string path_;
};

Diagnostic ToolError(std::string message) {
  return Diagnostic::Error("trust.tool", std::move(message), {}, {},
                           "ssh-keygen (openssh-client) and gpg (gnupg) must be installed on the "
                           "host plumb runs on");
}

std::string LastLine(std::string_view text) {
  std::string t(text);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

Result<Signer> ParseSshVerify(std::string_view out) {
  // Good "git" signature for alice@example.com with ED25519 key SHA256:x
  std::istringstream in{std::string(out)};
  std::string line;
  while (std::getline(in, line)) {
    const std::string good = "Good \"git\" signature for ";
    if (line.rfind(good, 0) != 0) continue;
    std::string rest = line.substr(good.size());
    const std::string with = " with ";
    auto w = rest.rfind(with);
    auto key = rest.rfind(" key ");
    if (w == std::string::npos || key == std::string::npos || key < w) continue;
    return Signer{"ssh", rest.substr(0, w), rest.substr(key + 5)};
  }
  return Diagnostic::Error("trust.bad-signature",
                           fmt::format("ssh-keygen did not report a good signature: {}",
                                       LastLine(out).empty() ? "(no output)" : LastLine(out)));
}

Result<Signer> ParseGpgStatus(std::string_view status) {
  std::istringstream in{std::string(status)};
  std::string line;
  bool good = false;
  Signer s{"openpgp", "", ""};
  while (std::getline(in, line)) {
    const std::string prefix = "[GNUPG:] ";
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    std::string kw;
    words >> kw;
    std::vector<std::string> args;
    for (std::string w; words >> w;) args.push_back(w);
    auto rest_of = [&](size_t from) {
      std::string r;
      for (size_t i = from; i < args.size(); ++i) r += (r.empty() ? "" : " ") + args[i];
      return r;
    };
    if (kw == "BADSIG")
      return Diagnostic::Error("trust.bad-signature",
                               "gpg: BAD signature from " + rest_of(1) + " (the commit was altered "
                               "after it was signed)");
    if (kw == "ERRSIG" || kw == "NO_PUBKEY")
      return Diagnostic::Error("trust.unknown-key",
                               fmt::format("gpg: signed by key {}, which the allowed keyring does "
                                           "not hold", args.empty() ? "?" : args[0]));
    if (kw == "EXPKEYSIG" || kw == "REVKEYSIG" || kw == "EXPSIG")
      return Diagnostic::Error("trust.unknown-key",
                               fmt::format("gpg: {} ({}): an expired or revoked key is not allowed",
                                           kw, rest_of(1)));
    if (kw == "GOODSIG") {
      good = true;
      s.identity = rest_of(1);
    }
    if (kw == "VALIDSIG" && !args.empty())
      s.key = args.size() >= 10 ? args[9] : args[0];   // the primary key's fingerprint
  }
  if (!good || s.key.empty())
    return Diagnostic::Error("trust.bad-signature", "gpg did not report a good, valid signature");
  return s;
}

Result<Signer> ToolSignatureVerifier::VerifySsh(std::string_view signature, std::string_view data,
                                                std::string_view allowed_signers) {
  TempDir dir;
  if (!dir.ok()) return ToolError("cannot create a temporary directory to verify a signature");
  const std::string sig = dir.Write("commit.sig", signature);
  const std::string payload = dir.Write("commit", data);
  const std::string allowed = dir.Write("allowed_signers", allowed_signers);
  if (sig.empty() || payload.empty() || allowed.empty())
    return ToolError("cannot write the signature files to " + dir.path());
  // Which principal holds the signing key (as git does), then the signature itself.
  auto found = local_.Run(fmt::format("ssh-keygen -Y find-principals -s {} -f {}",
                                      ShellQuote(sig), ShellQuote(allowed)),
                          kToolTimeout);
  if (!found) return ToolError("ssh-keygen did not run: " + found.error().message);
  std::string principal;
  {
    std::istringstream lines(found->out);
    std::getline(lines, principal);
  }
  if (found->exit_status != 0 || principal.empty())
    return Diagnostic::Error("trust.unknown-key",
                             "signed with an SSH key that allowed_signers does not list" +
                                 (found->err.empty() ? std::string() : ": " + LastLine(found->err)));
  auto verified = local_.Run(fmt::format("ssh-keygen -Y verify -f {} -I {} -n git -s {} < {}",
                                         ShellQuote(allowed), ShellQuote(principal),
                                         ShellQuote(sig), ShellQuote(payload)),
                             kToolTimeout);
  if (!verified) return ToolError("ssh-keygen did not run: " + verified.error().message);
  if (verified->exit_status != 0)
    return Diagnostic::Error("trust.bad-signature",
                             fmt::format("the SSH signature of {} does not match the commit: {}",
                                         principal, LastLine(verified->err + verified->out)));
  return ParseSshVerify(verified->out + verified->err);
}

Result<Signer> ToolSignatureVerifier::VerifyOpenPgp(std::string_view signature,
                                                    std::string_view data,
                                                    std::string_view keyring) {
  TempDir dir;
  if (!dir.ok()) return ToolError("cannot create a temporary directory to verify a signature");
  const std::string home = dir.path() + "/gnupg";
  std::error_code ec;
  std::filesystem::create_directory(home, ec);
  ::chmod(home.c_str(), 0700);
  const std::string sig = dir.Write("commit.sig", signature);
  const std::string payload = dir.Write("commit", data);
  const std::string keys = dir.Write("allowed.gpg", keyring);
  if (ec || sig.empty() || payload.empty() || keys.empty())
    return ToolError("cannot write the signature files to " + dir.path());
  // A home holding only the allowed keys; no agent or key server is ever started.
  const std::string gpg = fmt::format("gpg --batch --no-tty --no-autostart --homedir {}",
                                      ShellQuote(home));
  auto imported = local_.Run(fmt::format("{} --import {}", gpg, ShellQuote(keys)), kToolTimeout);
  if (!imported) return ToolError("gpg did not run: " + imported.error().message);
  if (imported->exit_status != 0)
    return Diagnostic::Error("trust.tool",
                             "gpg cannot read the allowed keyring: " + LastLine(imported->err), {},
                             {}, "export the allowed keys with gpg --export (--armor) KEYID...");
  auto verified = local_.Run(fmt::format("{} --trust-model always --status-fd 1 --verify {} {}",
                                         gpg, ShellQuote(sig), ShellQuote(payload)),
                             kToolTimeout);
  if (!verified) return ToolError("gpg did not run: " + verified.error().message);
  auto s = ParseGpgStatus(verified->out);
  if (!s) return s;
  if (verified->exit_status != 0)
    return Diagnostic::Error("trust.bad-signature",
                             "gpg refused the signature: " + LastLine(verified->err));
  return s;
}

}  // namespace plumb::plans
