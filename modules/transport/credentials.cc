#include "modules/transport/credentials.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace plumb::transport {
namespace {

Diagnostic CredError(std::string_view ref, const std::string& why, std::string hint = {}) {
  // A reference is only named when it is one (env:/file:): anything else may be the secret
  // itself, typed where its reference belongs ("--credentials root:calvin").
  const bool is_ref = ref.rfind("env:", 0) == 0 || ref.rfind("file:", 0) == 0;
  return Diagnostic::Error("bmc.credentials",
                           is_ref ? "BMC credentials '" + std::string(ref) + "': " + why
                                  : "BMC credentials: " + why,
                           {}, "defaults.bmc.credentials", std::move(hint));
}

Result<Credentials> Split(std::string_view ref, std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    return CredError(ref, "expected \"user:password\"");
  }
  return Credentials{text.substr(0, colon), Secret(text.substr(colon + 1))};
}

}  // namespace

Result<Credentials> LoadCredentials(std::string_view reference) {
  if (reference.rfind("env:", 0) == 0) {
    std::string var(reference.substr(4));
    const char* v = var.empty() ? nullptr : std::getenv(var.c_str());
    if (!v) return CredError(reference, "environment variable " + var + " is not set");
    return Split(reference, v);
  }
  if (reference.rfind("file:", 0) == 0) {
    std::string path(reference.substr(5));
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return CredError(reference, "cannot read the file");
    if (st.st_mode & 077) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return CredError(reference,
                       std::string("file is accessible by group or others (mode ") + mode + ")",
                       "chmod 600 " + path);
    }
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return CredError(reference, "cannot read the file");
    return Split(reference, line);
  }
  return CredError(reference, "must be \"env:VAR\" or \"file:/path\"");
}

}  // namespace plumb::transport
