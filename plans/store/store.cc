#include "plans/store/store.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>

#include <fmt/format.h>

namespace plumb::plans {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The conninfo's keywords and values as libpq reads them; nullopt when it cannot. libpq's own
// message is dropped: it may quote the value that failed to parse, a password included.
std::optional<std::map<std::string, std::string>> ParseConninfo(const std::string& store) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(store.c_str(), &err);
  PQfreemem(err);
  if (opts == nullptr) return std::nullopt;
  std::map<std::string, std::string> out;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o)
    if (o->val != nullptr && *o->val != '\0') out[o->keyword] = o->val;
  PQconninfoFree(opts);
  return out;
}

// A string that looks meant for PostgreSQL but is not a URL plumb takes: never a file name.
bool LooksLikeConninfo(const std::string& store) {
  static const std::regex kKeyword(R"((^|\s)(host|hostaddr|dbname|user|password|port|sslmode)\s*=)");
  static const std::regex kScheme(R"(^(postgres|pg)[a-z]*:)", std::regex::icase);   // postgresql:/db
  return store.find("://") != std::string::npos || std::regex_search(store, kKeyword) ||
         std::regex_search(store, kScheme);
}

// Every `what` in `text` replaced by `with`, each searched for after the last replacement (a
// replacement that holds `what`, "***" for a password "**" or a store shown as itself, must not
// be found again: that never ends).
void ReplaceAll(std::string& text, const std::string& what, const std::string& with) {
  for (size_t p = 0; !what.empty() && (p = text.find(what, p)) != std::string::npos; p += with.size())
    text.replace(p, what.size(), with);
}

// `text` with every password and sslpassword libpq reads in `store`, `min_size` characters or
// longer, replaced by "***".
std::string HidePasswords(std::string text, const std::string& store, size_t min_size) {
  if (auto kv = ParseConninfo(store))
    for (const char* key : {"password", "sslpassword"})
      if (auto it = kv->find(key); it != kv->end() && !it->second.empty() && it->second.size() >= min_size)
        ReplaceAll(text, it->second, "***");
  return text;
}

}  // namespace

bool IsPostgresStore(const std::string& store) {
  const std::string head = Lower(store.substr(0, 13));
  return head.rfind("postgresql://", 0) == 0 || head.rfind("postgres://", 0) == 0;
}

Result<std::string> CheckedPostgresUrl(const std::string& given) {
  // libpq knows its schemes in lower case only.
  std::string url = given;
  if (IsPostgresStore(url)) {
    const size_t scheme_end = url.find("://");
    url = Lower(url.substr(0, scheme_end)) + url.substr(scheme_end);
  }
  auto kv = ParseConninfo(url);
  if (!kv)
    return Diagnostic::Error("store.url", fmt::format("'{}' is not a PostgreSQL URL libpq can read", RedactStore(url)),
                             {}, "--store", "postgresql://USER@HOST[:PORT]/DB[?param=value&...]; "
                                            "percent-encode reserved characters in a password");
  // A server reached over TCP proves who it is: the journal, the lock and the password cross
  // the network. A unix socket (no host, or a directory) is this machine's.
  const std::string host = kv->count("host") ? kv->at("host") : "";
  const bool local = (host.empty() || host[0] == '/' || host[0] == '@') && !kv->count("hostaddr");
  const std::string mode = kv->count("sslmode") ? kv->at("sslmode") : "";
  if (!local && !mode.empty() && mode != "verify-full" && mode != "verify-ca")
    return Diagnostic::Error("store.tls",
                             fmt::format("--store {}: sslmode={} does not verify the server", RedactStore(url), mode),
                             {}, "--store",
                             "use sslmode=verify-full (the default plumb sets), with sslrootcert= "
                             "naming the CA when it is not the system's");
  std::string out = url;
  if (!local && mode.empty()) out += std::string(url.find('?') == std::string::npos ? "?" : "&") + "sslmode=verify-full";
  return out;
}

Result<std::unique_ptr<Journal>> OpenStore(const std::string& store) {
  if (IsPostgresStore(store)) return OpenPostgresJournal(store);
  if (LooksLikeConninfo(store))
    return Diagnostic::Error("store.url",
                             fmt::format("--store '{}' is neither a postgresql:// URL nor a file path", RedactStore(store)),
                             {}, "--store",
                             "give postgresql://USER@HOST/DB for a shared store, or a file path for a "
                             "journal on this machine");
  return OpenSqliteJournal(store);
}

std::string DefaultStore() {
  if (const char* s = std::getenv("PLUMB_STORE"); s && *s) return s;
  return DefaultJournalPath();
}

Result<std::string> ChosenStore(const std::string& flag) {
  if (flag.empty()) return DefaultStore();
  // Whatever RedactStore would hide is a secret on the command line.
  if (RedactStore(flag) != flag)
    return Diagnostic::Error(
        "store.password-in-argv",
        fmt::format("--store {}: a password on the command line is readable by every user of this "
                    "machine (ps, /proc/PID/cmdline) for as long as plumb runs; refusing it",
                    RedactStore(flag)),
        {}, "--store",
        "give the URL in PLUMB_STORE instead (export PLUMB_STORE='postgresql://USER:PASSWORD@HOST/DB'), "
        "or leave the password out and put it in libpq's password file: ~/.pgpass, or the file "
        "PGPASSFILE names (HOST:PORT:DB:USER:PASSWORD, mode 0600)");
  return flag;
}

bool StoreErrorIsTransient(std::string_view why) {
  // libpq's own (client side) and the server's startup refusals that end by themselves.
  static constexpr std::string_view kPasses[] = {
      "Connection refused",
      "No such file or directory",               // a unix socket not there: the server is down
      "timeout expired",                         // connect_timeout
      "Connection timed out",
      "Connection reset by peer",
      "server closed the connection unexpectedly",
      "could not receive data from server",
      "could not send data to server",
      "No route to host",
      "Network is unreachable",
      "Temporary failure in name resolution",
      "Resource temporarily unavailable",
      "SSL SYSCALL error",
      "SSL connection has been closed unexpectedly",
      "the database system is starting up",
      "the database system is shutting down",
      "the database system is in recovery mode",
      "the database system is not yet accepting connections",
      "the database system is not accepting connections",
      "terminating connection due to administrator command",
      "sorry, too many clients already",
      "too many connections for",
      "remaining connection slots are reserved",
  };
  for (std::string_view p : kPasses)
    if (why.find(p) != std::string_view::npos) return true;
  return false;
}

std::string RedactStore(const std::string& store) {
  if (!IsPostgresStore(store) && !LooksLikeConninfo(store)) return store;
  std::string out = store;
  // scheme://user:password@host...: the userinfo's password, up to the last '@' of the
  // authority (a password holding '@', '/' or '?' is hidden whole).
  if (size_t scheme = out.find("://"); scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t at = out.rfind('@');
    if (at != std::string::npos && at > start) {
      const size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  static const std::regex kPasswordParam(R"(((^|[?&\s])(ssl)?password\s*=\s*)('[^']*'|[^&\s]*))",
                                         std::regex::icase);
  out = std::regex_replace(out, kPasswordParam, "$1***");
  // Whatever libpq reads as a password, wherever it still shows (decoded or not).
  return HidePasswords(std::move(out), store, 3);
}

std::string ScrubSecrets(const std::string& text, const std::string& store) {
  std::string out = HidePasswords(text, store, 1);
  // libpq quotes a URI it could not read, whole.
  if (out.find(store) != std::string::npos) ReplaceAll(out, store, RedactStore(store));
  return out;
}

}  // namespace plumb::plans
