#pragma once
/// The one probe script: every module's snippet, run as ONE POSIX sh script in ONE SSH round
/// trip, and the split of its stdout back into per-module sections.
///
/// Wire format. The script prints marker lines `@plumb:<nonce>:<verb> ...` where <nonce> is
/// fresh random hex per run (NewProbeNonce), so no tool output can forge a marker by accident or
/// by echoing an old one:
///   begin <module>            a module's section starts
///   part <name>               one command's output (stdout+stderr) starts
///   endpart <name> <status>   ... and ends with that command's exit status
///   end <module> <status>     the section ends with its snippet's exit status
/// Snippets use the shell functions the preamble defines:
///   plumb_run NAME CMD [ARGS...]   run CMD as part NAME; "plumb-absent: CMD" + status 127 if
///                                  CMD is not installed; wrapped in `timeout 20` when available
///   plumb_run_for SECS NAME CMD [ARGS...]   plumb_run with `timeout SECS` instead of 20 (on-
///                                  demand checks: a DCGM diagnostic, all_reduce_perf)
///   plumb_cat NAME FILE            cat FILE as part NAME; "plumb-absent: FILE" + 127 if unreadable
///   plumb_begin NAME / plumb_end NAME STATUS   for a part made of several commands
///
/// What a module's ParseProbe receives as `out` is its section re-encoded as *framed parts*
/// (FrameParts): "%part <name> <status> <length>\n<length bytes>\n" per part, byte-exact, so a
/// tool's output can never be mistaken for framing. ParseFramedParts reads it back.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::modules {

class Module;

/// Status of a part whose end marker never came (output cut short).
inline constexpr int kPartTruncated = -1;
/// Status plumb_run / plumb_cat report for a missing tool or file (the shell's own code).
inline constexpr int kPartAbsent = 127;

/// One command's output inside a module's section.
struct ProbePart {
  std::string name;
  int exit_status = 0;
  std::string text;
  /// True when the tool or file was missing (plumb_run/plumb_cat's marker).
  bool absent() const;
};

/// A module's section of the probe output.
struct ProbeSection {
  std::string out;        ///< framed parts (FrameParts), what Module::ParseProbe reads
  int exit_status = -1;   ///< the snippet's exit status; -1 if the section never ended
  bool complete = false;  ///< its end marker was seen
};

struct ProbeSplit {
  std::map<std::string, ProbeSection, std::less<>> sections;   ///< by module name
  Diagnostics problems;   ///< "probe.missing-section", "probe.truncated"
};

/// 32 lowercase hex characters from the system's random source.
std::string NewProbeNonce();

/// One module's section of a script: its ProbeScript, or an on-demand check's CheckScript.
struct ProbeSnippet {
  const Module* module = nullptr;
  std::string script;   ///< empty: the module is skipped
};
/// The script for `snippets` (in the given order). Fails like BuildProbeScript.
Result<std::string> BuildSnippetScript(const std::vector<ProbeSnippet>& snippets,
                                       std::string_view nonce);

/// The script for `modules` (in the given order; modules without an in-band probe are skipped).
/// Fails ("probe.nonce") when `nonce` is not 16-64 lowercase hex characters, or a module name is
/// not [a-z0-9_]+.
Result<std::string> BuildProbeScript(const std::vector<const Module*>& modules,
                                     std::string_view nonce);

/// `script` (BuildProbeScript's, with `nonce`) as a caller that keeps each node's last output
/// runs it again and again (plumb watch). The node keeps the output and prints it whole at the
/// end, in one go (one or two SSH packets instead of one per tool; NUL bytes in a tool's output
/// are dropped, as command substitution does). When `last_digest` is given (the client's
/// raw_digest of the node's last output: SHA-256 hex with the nonce replaced by "NONCE") and the
/// node's sha256sum and sed give the same digest for this output, the node prints only
/// UnchangedLine(nonce): nothing to send, decrypt, hash or parse. A node without those tools
/// prints the output. Fails ("probe.nonce") on a malformed nonce or digest; the exit status is
/// the script's.
Result<std::string> WrapReprobe(std::string_view script, std::string_view nonce,
                                std::string_view last_digest);
/// "@plumb:<nonce>:unchanged\n": what a wrapped probe prints when the output did not change.
std::string UnchangedLine(std::string_view nonce);

/// Splits the script's stdout. Never fails: what is missing or cut short is reported in
/// `problems` (and the section is absent or incomplete). `expected` names the modules whose
/// sections must be there.
ProbeSplit SplitProbeOutput(std::string_view output, std::string_view nonce,
                            const std::vector<std::string>& expected = {});

/// What one node's probe output says: facts keyed by module name (only modules whose section
/// parsed), and every problem (cut-short or missing sections, parse errors coded
/// "probe.<module>") to show with the node.
struct NodeFacts {
  nlohmann::json facts = nlohmann::json::object();
  Diagnostics problems;
};
/// Splits `output` and runs each in-band module's ParseProbe on its section. Never fails.
NodeFacts ParseProbeOutput(const std::vector<const Module*>& modules, std::string_view output,
                           std::string_view nonce);

/// ParseProbeOutput for a BuildSnippetScript script: each snippet's module parses its section.
NodeFacts ParseSnippetOutput(const std::vector<ProbeSnippet>& snippets, std::string_view output,
                             std::string_view nonce);

/// The framing ProbeSection::out uses.
std::string FrameParts(const std::vector<ProbePart>& parts);
/// Reads framing back; "probe.framing" error on malformed input. Total.
Result<std::vector<ProbePart>> ParseFramedParts(std::string_view framed);
/// The part called `name`, or nullptr.
const ProbePart* FindPart(const std::vector<ProbePart>& parts, std::string_view name);

}  // namespace plumb::modules
