#include "modules/probe_script.h"

#include <random>

#include <fmt/format.h>

#include "modules/module.h"
#include "modules/parse_util.h"

namespace plumb::modules {
namespace {

// The preamble every probe script starts with. It only defines functions and variables: nothing
// here writes anywhere but stdout. `timeout` (coreutils) bounds a hung tool, e.g. nvidia-smi on
// a wedged GPU, so one bad tool cannot stall the whole gather. plumb_run_for is plumb_run with
// a limit of its own, for the on-demand checks (Module::CheckScript) that run for minutes.
constexpr std::string_view kPreamble = R"SH(
LC_ALL=C; export LC_ALL
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH; export PATH
plumb_t=
command -v timeout >/dev/null 2>&1 && plumb_t='timeout 20'
plumb_begin() { printf '\n%s:part %s\n' "$M" "$1"; }
plumb_end() { printf '\n%s:endpart %s %d\n' "$M" "$1" "$2"; }
plumb_run() {
  plumb_n=$1; shift
  plumb_begin "$plumb_n"
  if command -v "$1" >/dev/null 2>&1; then $plumb_t "$@" 2>&1; plumb_r=$?
  else printf 'plumb-absent: %s\n' "$1"; plumb_r=127; fi
  plumb_end "$plumb_n" "$plumb_r"
}
plumb_run_for() {
  plumb_ts=$1; plumb_n=$2; shift 2
  plumb_begin "$plumb_n"
  if command -v "$1" >/dev/null 2>&1; then
    if [ -n "$plumb_t" ]; then timeout -k 30 "$plumb_ts" "$@" 2>&1; else "$@" 2>&1; fi; plumb_r=$?
  else printf 'plumb-absent: %s\n' "$1"; plumb_r=127; fi
  plumb_end "$plumb_n" "$plumb_r"
}
plumb_cat() {
  plumb_begin "$1"
  if [ -r "$2" ]; then cat "$2" 2>&1; plumb_r=$?
  else printf 'plumb-absent: %s\n' "$2"; plumb_r=127; fi
  plumb_end "$1" "$plumb_r"
}
)SH";

bool IsHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool IsName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

int ParseStatus(std::string_view s) {
  if (auto v = ParseNonNegative(s); v && *v < 1000) return static_cast<int>(*v);
  return -1;
}

}  // namespace

bool ProbePart::absent() const {
  return exit_status == kPartAbsent && StartsWith(text, "plumb-absent: ");
}

std::string NewProbeNonce() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", static_cast<uint32_t>(rd()));
  return out;
}

Result<std::string> BuildSnippetScript(const std::vector<ProbeSnippet>& snippets,
                                       std::string_view nonce) {
  if (nonce.size() < 16 || nonce.size() > 64 || !IsHex(nonce))
    return Diagnostic::Error("probe.nonce", "probe nonce must be 16-64 lowercase hex characters");
  std::string script = "# plumb probe: read-only\n";
  script += fmt::format("M='@plumb:{}'\n", nonce);
  script += kPreamble;
  for (const ProbeSnippet& s : snippets) {
    if (s.script.empty()) continue;
    if (!IsName(s.module->Name()))
      return Diagnostic::Error("probe.nonce", fmt::format("bad module name '{}'", s.module->Name()));
    // A subshell per module: a snippet's `exit`, failure or changed variables stay its own.
    script += fmt::format("printf '%s:begin {}\\n' \"$M\"\n( {}\n) </dev/null\n",
                          s.module->Name(), s.script);
    script += fmt::format("printf '\\n%s:end {} %d\\n' \"$M\" \"$?\"\n", s.module->Name());
  }
  return script;
}

namespace {

std::vector<ProbeSnippet> ProbeSnippets(const std::vector<const Module*>& modules) {
  std::vector<ProbeSnippet> out;
  for (const Module* m : modules) out.push_back({m, m->ProbeScript()});
  return out;
}

}  // namespace

Result<std::string> BuildProbeScript(const std::vector<const Module*>& modules,
                                     std::string_view nonce) {
  return BuildSnippetScript(ProbeSnippets(modules), nonce);
}

std::string UnchangedLine(std::string_view nonce) {
  return fmt::format("@plumb:{}:unchanged\n", nonce);
}

Result<std::string> WrapReprobe(std::string_view script, std::string_view nonce,
                                std::string_view last_digest) {
  if (nonce.size() < 16 || nonce.size() > 64 || !IsHex(nonce) ||
      (!last_digest.empty() && (last_digest.size() != 64 || !IsHex(last_digest))))
    return Diagnostic::Error("probe.nonce", "reprobe: bad nonce or digest");
  // The script becomes a function's body, so it runs as written (its own subshells, `exit`s
  // and functions) while its output is captured. Only hex (checked above) reaches the text.
  std::string out =
      fmt::format("plumb_probe() {{\n{}\n}}\nplumb_o=$(plumb_probe)\nplumb_s=$?\n", script);
  if (!last_digest.empty()) {
    out += fmt::format(
        "if command -v sha256sum >/dev/null 2>&1 && command -v sed >/dev/null 2>&1 && "
        "[ \"$(printf '%s\\n' \"$plumb_o\" | LC_ALL=C sed 's/{0}/NONCE/g' | sha256sum)\" = '{1}  -' ]; then\n"
        "  printf '%s:unchanged\\n' '@plumb:{0}'\n"
        "else\n"
        "  printf '%s\\n' \"$plumb_o\"\n"
        "fi\n",
        nonce, last_digest);
  } else {
    out += "printf '%s\\n' \"$plumb_o\"\n";
  }
  out += "exit \"$plumb_s\"\n";
  return out;
}

ProbeSplit SplitProbeOutput(std::string_view output, std::string_view nonce,
                            const std::vector<std::string>& expected) {
  ProbeSplit split;
  const std::string prefix = fmt::format("@plumb:{}:", nonce);
  std::string module;                // open section ("" = none)
  std::vector<ProbePart> parts;      // parts of the open section
  std::string part;                  // open part ("" = none)
  size_t part_start = 0;
  bool part_open = false;

  auto close_part = [&](size_t content_end, int status) {
    size_t end = content_end;
    // plumb_end prints "\n" before its marker; that newline is ours, not the tool's.
    if (status != kPartTruncated && end > part_start && output[end - 1] == '\n') --end;
    if (end < part_start) end = part_start;
    parts.push_back(ProbePart{part, status, std::string(output.substr(part_start, end - part_start))});
    part_open = false;
    part.clear();
  };
  auto close_module = [&](int status, bool complete) {
    ProbeSection s;
    s.out = FrameParts(parts);
    s.exit_status = status;
    s.complete = complete;
    if (!complete)
      split.problems.Add(Diagnostic::Error(
          "probe.truncated", fmt::format("probe output of '{}' was cut short", module)));
    split.sections[module] = std::move(s);
    parts.clear();
    module.clear();
  };

  size_t pos = 0;
  while (pos <= output.size()) {
    size_t at = output.find(prefix, pos);
    while (at != std::string_view::npos && at > 0 && output[at - 1] != '\n')
      at = output.find(prefix, at + 1);
    if (at == std::string_view::npos) break;
    size_t eol = output.find('\n', at);
    std::string_view line = output.substr(at + prefix.size(), eol == std::string_view::npos
                                                                  ? std::string_view::npos
                                                                  : eol - at - prefix.size());
    size_t next = eol == std::string_view::npos ? output.size() + 1 : eol + 1;
    auto words = SplitWhitespace(line);
    std::string_view verb = words.empty() ? std::string_view() : words[0];
    if (verb == "begin" && words.size() == 2) {
      if (part_open) close_part(at, kPartTruncated);
      if (!module.empty()) close_module(-1, false);
      module = std::string(words[1]);
    } else if (verb == "part" && words.size() == 2 && !module.empty()) {
      if (part_open) close_part(at, kPartTruncated);
      part = std::string(words[1]);
      part_open = true;
      part_start = std::min(next, output.size());
    } else if (verb == "endpart" && words.size() == 3 && part_open && words[1] == part) {
      close_part(at, ParseStatus(words[2]));
    } else if (verb == "end" && words.size() == 3 && words[1] == module) {
      if (part_open) close_part(at, kPartTruncated);
      close_module(ParseStatus(words[2]), true);
    }
    // Any other line carrying our nonce is ignored: only whole, well-formed markers count.
    pos = next;
  }
  if (part_open) close_part(output.size(), kPartTruncated);
  if (!module.empty()) close_module(-1, false);
  for (const auto& name : expected) {
    if (!split.sections.count(name))
      split.problems.Add(Diagnostic::Error(
          "probe.missing-section", fmt::format("probe output has no section for '{}'", name)));
  }
  return split;
}

NodeFacts ParseSnippetOutput(const std::vector<ProbeSnippet>& snippets, std::string_view output,
                             std::string_view nonce) {
  std::vector<std::string> expected;
  for (const ProbeSnippet& s : snippets)
    if (!s.script.empty()) expected.emplace_back(s.module->Name());
  ProbeSplit split = SplitProbeOutput(output, nonce, expected);
  NodeFacts node;
  node.problems = std::move(split.problems);
  for (const ProbeSnippet& s : snippets) {
    auto it = split.sections.find(s.module->Name());
    if (it == split.sections.end() || s.script.empty()) continue;
    auto facts = s.module->ParseProbe(it->second.out, it->second.exit_status);
    if (facts.ok()) node.facts[std::string(s.module->Name())] = std::move(*facts);
    else node.problems.Add(facts.error());
  }
  return node;
}

NodeFacts ParseProbeOutput(const std::vector<const Module*>& modules, std::string_view output,
                           std::string_view nonce) {
  return ParseSnippetOutput(ProbeSnippets(modules), output, nonce);
}

std::string FrameParts(const std::vector<ProbePart>& parts) {
  std::string out;
  for (const auto& p : parts)
    out += fmt::format("%part {} {} {}\n{}\n", p.name, p.exit_status, p.text.size(), p.text);
  return out;
}

Result<std::vector<ProbePart>> ParseFramedParts(std::string_view framed) {
  std::vector<ProbePart> parts;
  size_t pos = 0;
  while (pos < framed.size()) {
    size_t eol = framed.find('\n', pos);
    if (eol == std::string_view::npos)
      return Diagnostic::Error("probe.framing", fmt::format("unterminated part header at byte {}", pos));
    auto words = SplitWhitespace(framed.substr(pos, eol - pos));
    if (words.size() != 4 || words[0] != "%part")
      return Diagnostic::Error("probe.framing", fmt::format("bad part header at byte {}", pos));
    ProbePart p;
    p.name = std::string(words[1]);
    std::string_view st = words[2];
    bool negative = !st.empty() && st[0] == '-';
    auto status = ParseNonNegative(negative ? st.substr(1) : st);
    auto len = ParseNonNegative(words[3]);
    if (!status || !len || *status > 100000)
      return Diagnostic::Error("probe.framing", fmt::format("bad part header at byte {}", pos));
    p.exit_status = static_cast<int>(negative ? -*status : *status);
    size_t start = eol + 1;
    if (static_cast<unsigned long long>(*len) > framed.size() - start ||
        start + *len >= framed.size() || framed[start + *len] != '\n')
      return Diagnostic::Error("probe.framing", fmt::format("part '{}' is cut short", p.name));
    p.text = std::string(framed.substr(start, *len));
    pos = start + *len + 1;
    parts.push_back(std::move(p));
  }
  return parts;
}

const ProbePart* FindPart(const std::vector<ProbePart>& parts, std::string_view name) {
  for (const auto& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace plumb::modules
