#include "schemas/exit_codes.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace plumb {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kInSync: return "in-sync";
    case Outcome::kChanges: return "changes";
    case Outcome::kDrift: return "drift";
    case Outcome::kUnhealthy: return "unhealthy";
    case Outcome::kPartial: return "partial";
    case Outcome::kNoVerdict: return "no-verdict";
    case Outcome::kPaused: return "paused";
    case Outcome::kRunFailed: return "run-failed";
    case Outcome::kNotVerified: return "not-verified";
    case Outcome::kInvalid: return "invalid";
    case Outcome::kRefused: return "refused";
    case Outcome::kError: return "error";
    case Outcome::kInterrupted: return "interrupted";
  }
  return "error";
}

const std::vector<ExitCodeRow>& ExitCodeTable() {
  // Why plan and drift exit 1, not 3, when nothing was found but some nodes were unreadable:
  // their 0 and 2 are verdicts a pipeline acts on (terraform's -detailed-exitcode), and a verdict
  // over nodes that were not read cannot be given; 1 stops the pipeline the way an error does.
  // gather and bmc make no verdict: 3 says "some of it was read".
  static const std::vector<ExitCodeRow> kTable = {
      {"*", Outcome::kOk, 0, "success"},
      {"*", Outcome::kRefused, 1, "bad input (the message names the file:line and key), or refused"},
      {"*", Outcome::kError, 1, "any other error (the message says which)"},
      {"*", Outcome::kInterrupted, 130, "interrupted (Ctrl-C, SIGTERM)"},

      {"validate", Outcome::kOk, 0, "the repo is valid"},
      {"validate", Outcome::kInvalid, 1, "the repo has errors, each with its file:line"},

      {"gather", Outcome::kOk, 0, "every node read whole"},
      {"gather", Outcome::kPartial, 3, "some nodes, or some modules on a node, could not be read (listed)"},
      {"facts merge", Outcome::kOk, 0, "merged and written"},
      {"facts merge", Outcome::kRefused, 1, "not merged, nothing written: a duplicate node, mixed commits, a missing shard, shards of different selections (--limit), or an unreadable part (each listed)"},

      {"plan", Outcome::kInSync, 0, "no changes (or changes, without --detailed-exitcode)"},
      {"plan", Outcome::kChanges, 2, "--detailed-exitcode: changes pending (an incomplete plan included)"},
      {"plan", Outcome::kNoVerdict, 1, "no changes found, but some nodes unreadable: no verdict"},

      {"diff", Outcome::kInSync, 0, "nothing changes (or changes, without --detailed-exitcode)"},
      {"diff", Outcome::kChanges, 2, "--detailed-exitcode: something changes"},

      {"drift", Outcome::kInSync, 0, "every node in sync (waived drift included)"},
      {"drift", Outcome::kDrift, 2, "unwaived drift (an expired waiver counts)"},
      {"drift", Outcome::kNoVerdict, 1, "no drift found, but some nodes unreadable: no verdict"},

      {"health", Outcome::kOk, 0, "every checked node passed (warnings allowed)"},
      {"health", Outcome::kUnhealthy, 2, "a node failed a health check (listed with the test and value)"},
      {"health", Outcome::kPartial, 3, "no check failed, but some nodes could not be checked (listed)"},

      {"acceptance", Outcome::kOk, 0, "every node passed: the report says accepted"},
      {"acceptance", Outcome::kUnhealthy, 2, "some node failed (the report names each, and why)"},
      {"acceptance verify", Outcome::kOk, 0, "the report's digest matches its content"},
      {"acceptance verify", Outcome::kNotVerified, 1, "the report was changed after it was written"},

      {"watch", Outcome::kOk, 0, "stopped by SIGINT/SIGTERM, sessions closed"},
      {"watch", Outcome::kInSync, 0, "--once/--rounds: the last round found every node in sync"},
      {"watch", Outcome::kDrift, 2, "--once/--rounds: the last round found drift"},
      {"watch", Outcome::kNoVerdict, 1, "--once/--rounds: no drift found, but some nodes unreadable"},

      {"apply", Outcome::kOk, 0, "every node done (or nothing to apply)"},
      {"apply", Outcome::kRunFailed, 1, "some node failed, or the run halted (canary, max_failures)"},
      {"apply", Outcome::kPaused, 3, "paused (window closed, scheduler unreachable), stale or busy nodes: --resume"},
      {"apply", Outcome::kPartial, 3, "nothing to apply on the nodes read; some could not be read"},
      {"apply", Outcome::kInterrupted, 130, "interrupted: plumb apply --resume continues"},

      {"bmc inventory", Outcome::kOk, 0, "every BMC read"},
      {"bmc inventory", Outcome::kPartial, 3, "some BMCs, or some modules of one, unreadable"},
      {"bmc plan", Outcome::kInSync, 0, "firmware, BIOS and power as the repo says"},
      {"bmc plan", Outcome::kChanges, 2, "something differs"},
      {"bmc plan", Outcome::kPartial, 3, "some BMCs, or some modules of one, unreadable"},
      {"bmc apply", Outcome::kOk, 0, "as apply (it is plumb apply of the Redfish modules): every node done"},
      {"bmc apply", Outcome::kRunFailed, 1, "some node failed, or the run halted"},
      {"bmc apply", Outcome::kPaused, 3, "paused, stale or busy nodes, or some unreadable: plumb apply --resume"},
      {"bmc apply", Outcome::kInterrupted, 130, "interrupted: plumb apply --resume continues"},
      {"bmc reset", Outcome::kOk, 0, "the reset was sent"},
      {"bmc reset", Outcome::kError, 1, "refused (the node is in service, or its scheduler cannot be read) or failed"},

      {"history", Outcome::kOk, 0, "shown; with --verify: the journal verifies"},
      {"history", Outcome::kNotVerified, 1, "--verify: an edited, missing or reordered entry (named)"},
      {"audit export", Outcome::kOk, 0, "written, and the journal verifies"},
      {"audit export", Outcome::kNotVerified, 1, "written, marked: the journal does not verify"},
  };
  return kTable;
}

std::vector<std::string_view> ExitCodeVerbs() {
  std::vector<std::string_view> verbs;
  for (const ExitCodeRow& r : ExitCodeTable())
    if (r.verb != "*" && std::find(verbs.begin(), verbs.end(), r.verb) == verbs.end())
      verbs.push_back(r.verb);
  return verbs;
}

std::vector<ExitCodeRow> ExitCodesOf(std::string_view verb) {
  std::vector<ExitCodeRow> rows;
  std::set<Outcome> own;
  for (const ExitCodeRow& r : ExitCodeTable())
    if (r.verb == verb) {
      rows.push_back(r);
      own.insert(r.outcome);
    }
  for (const ExitCodeRow& r : ExitCodeTable())
    if (r.verb == "*" && !own.count(r.outcome) &&
        !(r.outcome == Outcome::kOk && (own.count(Outcome::kInSync) || own.count(Outcome::kOk))))
      rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [](const ExitCodeRow& a, const ExitCodeRow& b) {
    return a.code < b.code;
  });
  return rows;
}

int ExitCodeFor(std::string_view verb, Outcome outcome) {
  for (const ExitCodeRow& r : ExitCodeTable())
    if (r.verb == verb && r.outcome == outcome) return r.code;
  for (const ExitCodeRow& r : ExitCodeTable())
    if (r.verb == "*" && r.outcome == outcome) return r.code;
  throw std::logic_error(fmt::format("exit code table: {} has no outcome {}", verb,
                                     OutcomeName(outcome)));
}

std::string ExitCodesHelp(std::string_view verb) {
  std::string out = "Exit codes:\n";
  for (const ExitCodeRow& r : ExitCodesOf(verb))
    out += fmt::format("  {:>3}  {}\n", r.code, r.meaning);
  return out;
}

std::string ExitCodesMarkdown() {
  std::string out = "| command | code | meaning |\n|---|---|---|\n";
  for (const ExitCodeRow& r : ExitCodeTable())
    out += fmt::format("| {} | {} | {} |\n", r.verb == "*" ? "every command" : fmt::format("`{}`", r.verb),
                       r.code, r.meaning);
  return out;
}

std::string ExitCodesJsonText() {
  nlohmann::json all = nlohmann::json::array();
  for (const ExitCodeRow& r : ExitCodeTable())
    all.push_back({{"command", std::string(r.verb)},
                   {"outcome", OutcomeName(r.outcome)},
                   {"code", r.code},
                   {"meaning", std::string(r.meaning)}});
  return all.dump(2) + "\n";
}

std::string ExitCodesSummary() {
  std::map<int, std::vector<std::string>> by_code;
  for (const ExitCodeRow& r : ExitCodeTable()) {
    auto& names = by_code[r.code];
    if (std::find(names.begin(), names.end(), OutcomeName(r.outcome)) == names.end())
      names.push_back(OutcomeName(r.outcome));
  }
  std::string out = "Exit codes (plumb exit-codes, or a command's --help, says which it uses):\n";
  for (const auto& [code, names] : by_code) {
    std::string line;
    for (const std::string& n : names) line += (line.empty() ? "" : ", ") + n;
    out += fmt::format("  {:>3}  {}\n", code, line);
  }
  return out;
}

}  // namespace plumb
