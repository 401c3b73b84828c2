// What the completion scripts share (cli/completion_words.h).
#include "cli/completion_words.h"

#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/completion.h"
#include "modules/transport/shell.h"

namespace plumb::cli {

namespace {

bool NamedAny(const OptionDoc& o, std::initializer_list<std::string_view> names) {
  for (const std::string& n : o.names)
    for (std::string_view want : names)
      if (n == want) return true;
  return false;
}

const OptionDoc* FirstPositional(const CommandDoc& c) {
  for (const OptionDoc& o : c.options)
    if (o.positional) return &o;
  return nullptr;
}

}  // namespace

ValueKind KindOf(const OptionDoc& o) {
  if (!o.positional && o.value.empty()) return ValueKind::kNone;   // a flag
  if (!o.choices.empty()) return ValueKind::kChoices;
  const std::string& n = o.names.front();
  if (NamedAny(o, {"--limit", "--node"}) || (o.positional && n.find("node") != std::string::npos))
    return ValueKind::kNodes;
  if (n == "--repo") return ValueKind::kDirectory;
  if (NamedAny(o, {"--ref", "--resume", "--retry-failed", "--force-unlock", "--dead-owner",
                   "--since", "--approved-by", "--operator", "--trust-policy-from", "--type",
                   "--last"}) ||
      (o.positional && (n == "run" || n.rfind("REV", 0) == 0)))
    return ValueKind::kFree;
  if (o.value == "INT" || o.value == "UINT" || o.value == "FLOAT") return ValueKind::kFree;
  return ValueKind::kFile;
}

void WalkCommands(const CommandDoc& c, const std::function<void(const CommandDoc&)>& f) {
  f(c);
  for (const CommandDoc& s : c.subcommands) WalkCommands(s, f);
}

std::string SingleQuoted(std::string_view s) { return transport::ShellQuote(s); }

std::string Words(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); }

std::vector<std::string> OptionNames(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const OptionDoc& o : c.options)
    if (!o.positional)
      for (const std::string& n : o.names) out.push_back(n);
  return out;
}

std::vector<std::string> SubcommandNames(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const CommandDoc& s : c.subcommands) out.push_back(CommandName(s));
  return out;
}

std::string PositionalWords(const CommandDoc& c) {
  const OptionDoc* p = FirstPositional(c);
  if (p == nullptr) return "''";
  switch (KindOf(*p)) {
    case ValueKind::kNodes: return "nodes";
    case ValueKind::kChoices: return SingleQuoted("words:" + Words(p->choices));
    case ValueKind::kFree: return "''";
    default: return "files";
  }
}

std::string CompletionScript(const std::string& shell, const CommandDoc& root) {
  return shell == "bash" ? BashCompletion(root) : shell == "zsh" ? ZshCompletion(root) : FishCompletion(root);
}

std::string NodeCompletionWords(const std::vector<std::string>& nodes,
                                const std::vector<std::string>& groups) {
  auto safe = [](const std::string& name) {
    return !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                                std::string::npos;
  };
  std::string out;
  for (const std::string& n : nodes)
    if (safe(n)) out += n + "\n";
  for (const std::string& g : groups)
    if (safe(g)) out += "@" + g + "\n";
  return out;
}

int PositionalCount(const CommandDoc& c) {
  int n = 0;
  for (const OptionDoc& o : c.options) n += o.positional ? 1 : 0;
  return n;
}

std::string ValueOptions(const CommandDoc& c) {
  std::string out = " ";
  for (const OptionDoc& o : c.options)
    if (!o.positional && !o.value.empty())
      for (const std::string& n : o.names) out += n + " ";
  return out;
}

namespace {

// The value arm of each option of `c` that takes a value, under each of its names.
std::string ValueArms(const CommandDoc& c, const CaseScript& s) {
  std::string out;
  for (const OptionDoc& o : c.options) {
    if (o.positional) continue;
    for (const std::string& n : o.names) {
      const std::string pat = SingleQuoted(c.path + "|" + n);
      switch (KindOf(o)) {
        case ValueKind::kNone: break;
        case ValueKind::kChoices:
          out += fmt::format(fmt::runtime(s.choices), pat,
                             s.quote_choices ? SingleQuoted(Words(o.choices)) : Words(o.choices));
          break;
        case ValueKind::kNodes: out += fmt::format(fmt::runtime(s.nodes), pat); break;
        case ValueKind::kDirectory: out += fmt::format(fmt::runtime(s.directory), pat); break;
        case ValueKind::kFile: out += fmt::format(fmt::runtime(s.file), pat); break;
        case ValueKind::kFree: out += fmt::format(fmt::runtime(s.free), pat); break;
      }
    }
  }
  return out;
}

}  // namespace

std::string CaseScriptFor(const CommandDoc& root, const CaseScript& s) {
  std::string values, commands;
  WalkCommands(root, [&](const CommandDoc& c) {
    values += ValueArms(c, s);
    commands += s.command_arm(c);
  });
  return std::string(s.helpers) +
         fmt::format(fmt::runtime(s.function), QuotedPaths(root, "|"), commands, values);
}

std::string QuotedPaths(const CommandDoc& root, std::string_view sep) {
  std::string out;
  WalkCommands(root, [&](const CommandDoc& c) {
    if (&c != &root) out += (out.empty() ? "" : std::string(sep)) + SingleQuoted(c.path);
  });
  return out;
}

}  // namespace plumb::cli
