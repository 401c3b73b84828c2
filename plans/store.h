#pragma once
/// Where runs, the cluster lock and the history are kept: the store. A file path is a SQLite
/// journal on this machine (the default); a postgresql:// URL (or postgres://) is a PostgreSQL
/// database that every machine running plumb against the cluster shares, so that applies
/// started from different CI runners and operators see one lock and one history.
#include <memory>
#include <string>

#include "plans/journal.h"
#include "schemas/result.h"

namespace plumb::plans {

/// True for "postgresql://..." and "postgres://..." (libpq's URI forms).
bool IsPostgresStore(const std::string& store);

/// Opens the store: PostgreSQL for a URL, else the SQLite journal at the path.
Result<std::unique_ptr<Journal>> OpenStore(const std::string& store);

/// Opens the PostgreSQL journal at `url` (creating and migrating its tables as needed).
Result<std::unique_ptr<Journal>> OpenPostgresJournal(const std::string& url);

/// The store a command uses when not told: $PLUMB_STORE, else DefaultJournalPath().
std::string DefaultStore();

/// `store` as messages may show it: a URL's password is replaced by "***"
/// ("postgresql://plumb:***@db/plumb"), as is a "password=" or "?password=" parameter.
std::string RedactStore(const std::string& store);

}  // namespace plumb::plans
