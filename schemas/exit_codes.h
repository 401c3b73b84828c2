#pragma once
/// How each command ends, and the exit code each ending has: one table, written down once.
/// Every command returns ExitCodeFor(verb, outcome); `plumb --help`, each verb's --help,
/// `plumb exit-codes` and the README's table are generated from it, and tests/e2e/exit_codes.sh
/// checks each verb's behaviour against it. It lives in schemas/ because plans/ needs it too
/// (drift's exit code is a metric of `drift --format prom` and of `plumb watch`).
#include <string>
#include <string_view>
#include <vector>

namespace plumb {

/// Every way a command ends. Which ones a verb can reach, and their codes, is the table's.
enum class Outcome {
  kOk,            ///< it did what was asked
  kInSync,        ///< plan: no changes; drift: every node in sync (waived drift included)
  kChanges,       ///< plan/diff --detailed-exitcode: changes pending; bmc plan: differences
  kDrift,         ///< drift: unwaived drift found (an expired waiver counts)
  kUnhealthy,     ///< health: a node failed a health check
  kPartial,       ///< some nodes, or some modules on a node, could not be read: listed
  kNoVerdict,     ///< plan/drift: nothing found, but some nodes unreadable (cannot vouch)
  kPaused,        ///< apply: paused (window closed, scheduler unreachable), stale or busy nodes
  kRunFailed,     ///< apply: some node failed, or the run halted (canary, max_failures, budget)
  kNotVerified,   ///< history --verify / audit export: the journal's hash chain does not verify
  kInvalid,       ///< validate: the repo has errors (each with its file:line)
  kRefused,       ///< bad input, a commit the signing policy refuses, a plan that does not hold
  kError,         ///< anything else went wrong (the message says what)
  kInterrupted,   ///< Ctrl-C / SIGTERM: `apply --resume` continues
};
/// "ok", "in-sync", "changes", ... (the JSON of `plumb exit-codes`).
const char* OutcomeName(Outcome o);

struct ExitCodeRow {
  std::string_view verb;      ///< "plan", "bmc plan"; "*" for a row every verb has
  Outcome outcome;
  int code;
  std::string_view meaning;   ///< for people, in the verb's terms
};
/// The table, by verb, in the order help shows it. Rows of verb "*" hold for every verb.
const std::vector<ExitCodeRow>& ExitCodeTable();

/// The code `verb` exits with for `outcome`. An outcome the table does not give `verb` is a
/// programming error: it throws std::logic_error (a unit test walks every row).
int ExitCodeFor(std::string_view verb, Outcome outcome);

/// The rows `verb` has, its own first, then the "*" rows it does not override.
std::vector<ExitCodeRow> ExitCodesOf(std::string_view verb);
/// "Exit codes:\n  0  no changes\n  2  ..." for a verb's --help.
std::string ExitCodesHelp(std::string_view verb);
/// The README's table: | command | code | meaning |.
std::string ExitCodesMarkdown();
/// `plumb exit-codes --format json`: [{command, outcome, code, meaning}] in the table's order,
/// as indented JSON text and a newline.
std::string ExitCodesJsonText();
/// One line per code for `plumb --help`, each with every outcome that exits with it:
/// "    0  ok, in-sync".
std::string ExitCodesSummary();
/// The verbs the table knows, in its order.
std::vector<std::string_view> ExitCodeVerbs();

}  // namespace plumb
