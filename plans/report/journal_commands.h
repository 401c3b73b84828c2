#pragma once
/// The verbs that read the journal and nothing else: `plumb history`, `plumb runs` and
/// `plumb audit export`, from their parsed flags to their exit codes (schemas/exit_codes). Each
/// opens the store its --store flag chooses (plans/store/store.h: the flag, $PLUMB_STORE, the
/// default); the report goes to `out`, errors to `err` after "plumb <verb>: ".
#include <ostream>
#include <string>

namespace plumb::plans::report {

struct HistoryRequest {
  std::string store;    ///< --store ("" = the default)
  std::string node;     ///< only this node's steps ("" = every node's); an unknown one is an error
  int last = 200;       ///< the latest this many steps
  bool verify = false;  ///< replay the hash chain instead
  std::string anchor;   ///< with verify: a head recorded earlier must still be in the chain
  std::string format = "text";
};
int RunHistory(const HistoryRequest& r, std::ostream& out, std::ostream& err);

struct RunsRequest {
  std::string store;
  std::string run;      ///< one run's nodes ("" = the runs list)
  int last = 20;
  std::string format = "text";
};
int RunRuns(const RunsRequest& r, std::ostream& out, std::ostream& err);

struct AuditRequest {
  std::string store;
  std::string since;    ///< YYYY-MM-DD (UTC) or RFC 3339
  std::string format = "json";   ///< json | html
  std::string file;     ///< --out ("" = `out`), written atomically
  std::string now;      ///< RFC 3339: the export's generated_at
};
/// The export, then a line on `err` with the runs and the chain's head; a chain that does not
/// verify is exported all the same and exits "not verified".
int RunAuditExport(const AuditRequest& r, std::ostream& out, std::ostream& err);

}  // namespace plumb::plans::report
