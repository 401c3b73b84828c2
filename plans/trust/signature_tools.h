#pragma once
/// The real SignatureVerifier: ssh-keygen(1) for SSH signatures and gpg(1) for OpenPGP ones,
/// run on this host through a transport::Shell (LocalShell) with every argument quoted. Each
/// check works in a private temporary directory (the signature, the signed data and the
/// allowed keys as files; for gpg a fresh home holding only the allowed keys, so the user's
/// own keyring and trust settings never count), removed afterwards.
#include <string>
#include <string_view>

#include "modules/transport/shell.h"
#include "plans/trust/commit_trust.h"

namespace plumb::plans {

class ToolSignatureVerifier final : public SignatureVerifier {
 public:
  explicit ToolSignatureVerifier(transport::Shell& local) : local_(local) {}
  Result<Signer> VerifySsh(std::string_view signature, std::string_view data,
                           std::string_view allowed_signers) override;
  Result<Signer> VerifyOpenPgp(std::string_view signature, std::string_view data,
                               std::string_view keyring) override;

 private:
  transport::Shell& local_;
};

/// Pure parsers of the tools' output (tested on captured output).
/// `ssh-keygen -Y verify`: 'Good "git" signature for alice@example.com with ED25519 key
/// SHA256:abc' -> {ssh, alice@example.com, SHA256:abc}; an error when it is not a good one.
Result<Signer> ParseSshVerify(std::string_view out);
/// `gpg --status-fd 1 --verify`: good only with GOODSIG and VALIDSIG and none of BADSIG,
/// ERRSIG, EXPKEYSIG, REVKEYSIG, EXPSIG; the signer is VALIDSIG's primary key fingerprint and
/// GOODSIG's user id. Errors say which status line refused it.
Result<Signer> ParseGpgStatus(std::string_view status);

}  // namespace plumb::plans
