#include "plans/store.h"

#include <cstdlib>
#include <regex>

namespace plumb::plans {

bool IsPostgresStore(const std::string& store) {
  return store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<Journal>> OpenStore(const std::string& store) {
  if (IsPostgresStore(store)) return OpenPostgresJournal(store);
  return OpenSqliteJournal(store);
}

std::string DefaultStore() {
  if (const char* s = std::getenv("PLUMB_STORE"); s && *s) return s;
  return DefaultJournalPath();
}

std::string RedactStore(const std::string& store) {
  if (!IsPostgresStore(store)) return store;
  // scheme://user:password@host...: the userinfo's password (up to the last '@' before the
  // path, so a password holding '@' is hidden whole).
  std::string out = store;
  const size_t start = out.find("://") + 3;
  const size_t path = out.find_first_of("/?", start);
  const size_t at = out.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at > start) {
    const size_t colon = out.find(':', start);
    if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  static const std::regex kPasswordParam(R"(([?&]password=)[^&]*)");
  return std::regex_replace(out, kPasswordParam, "$1***");
}

}  // namespace plumb::plans
