#pragma once
/// Where runs, the cluster lock and the history are kept: the store. A file path is a SQLite
/// journal on this machine (the default); a postgresql:// URL (or postgres://) is a PostgreSQL
/// database that every machine running plumb against the cluster shares, so that applies
/// started from different CI runners and operators see one lock and one history.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "plans/core/clock.h"
#include "plans/store/journal.h"
#include "schemas/result.h"

namespace plumb::plans {

/// True for "postgresql://..." and "postgres://..." (libpq's URI forms; any letter case).
bool IsPostgresStore(const std::string& store);

/// Opens the store: PostgreSQL for a URL, else the SQLite journal at the path. A string that
/// looks meant for a database but is not such a URL ("pgsql://...", "host=db user=plumb") is
/// refused, never taken for a file name.
Result<std::unique_ptr<Journal>> OpenStore(const std::string& store);

/// Opens the PostgreSQL journal at `url` (creating and migrating its tables as needed). Its
/// waits for a server that went away (the retry window, PLUMB_STORE_RETRY_S) are measured and
/// slept on `clock`, which must outlive the journal (null: the monotonic clock, so a wall clock
/// stepped back or forward changes no window).
Result<std::unique_ptr<Journal>> OpenPostgresJournal(const std::string& url, Clock* clock = nullptr);

/// The store a command uses when not told: $PLUMB_STORE, else DefaultJournalPath().
std::string DefaultStore();

/// The store a command uses: `flag` (its --store) when given, else DefaultStore(). A password
/// in `flag` (a URL's user:password@, a password= or sslpassword= parameter) is refused
/// ("store.password-in-argv"): a command line is readable by every user of the machine (ps,
/// /proc/PID/cmdline) for as long as the command runs, which for an apply on a shared CI
/// runner is hours. The password goes in PLUMB_STORE (the environment is the process's own)
/// or libpq's password file (~/.pgpass, PGPASSFILE).
Result<std::string> ChosenStore(const std::string& flag);

/// Whether a connection failure libpq describes so (PQerrorMessage) may pass by waiting: the
/// server refused, reset or timed out the connection, its socket is not there, it is starting
/// up, shutting down or in recovery, or has too many clients. Anything else (authentication,
/// a database or role that does not exist, a bad option, a certificate) will not go away by
/// itself. Reads libpq's English messages (plumb never sets a locale); a server answering in
/// another language is taken as "will not pass".
bool StoreErrorIsTransient(std::string_view libpq_message);

/// A PostgreSQL URL checked before any connection: libpq can read it ("store.url", without
/// libpq's text, which may quote a password), and a server reached over TCP is verified:
/// sslmode=verify-full is added when absent, and a mode that does not verify the server
/// (disable, allow, prefer, require) is refused ("store.tls"). A unix socket needs neither.
Result<std::string> CheckedPostgresUrl(const std::string& url);

/// `text` (a message of libpq's) with every secret of `store` replaced by "***".
std::string ScrubSecrets(const std::string& text, const std::string& store);

/// `store` as messages may show it: a URL's password is replaced by "***"
/// ("postgresql://plumb:***@db/plumb"), as is a "password=" or "?password=" parameter.
std::string RedactStore(const std::string& store);

}  // namespace plumb::plans
