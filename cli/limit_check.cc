#include "cli/limit_check.h"

#include <string>
#include <string_view>

namespace plumb::cli {
namespace {

bool IsLimitOption(const CLI::Option& o) { return o.check_lname("limit") || o.check_lname("node"); }

// "--limit", or "--limit/--node" for an option with both names.
std::string Names(const CLI::Option& o) {
  std::string out;
  for (const std::string& n : o.get_lnames()) out += (out.empty() ? "--" : "/--") + n;
  return out;
}

// The 1-based position on the command line of the option carrying `value` (as `--limit V` or
// `--limit=V`), 0 when it cannot be told.
int ArgumentOf(const CLI::Option& o, const std::string& value, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    for (const std::string& n : o.get_lnames()) {
      const std::string flag = "--" + n;
      if ((a == flag && i + 1 < argc && argv[i + 1] == value) || a == flag + "=" + value) return i;
    }
  }
  return 0;
}

// Depth first over the parsed subcommands; `verb` is the path so far ("bmc apply").
std::optional<std::string> Check(const CLI::App& app, const std::string& verb, int argc,
                                 char** argv, const LimitJudge& names_no_node) {
  for (const CLI::Option* o : app.get_options()) {
    if (!IsLimitOption(*o) || o->count() == 0) continue;
    for (const std::string& value : o->results()) {
      auto none = names_no_node(value);
      if (!none) continue;
      const int at = ArgumentOf(*o, value, argc, argv);
      const std::string where = at > 0 ? " (argument " + std::to_string(at) + ")" : "";
      std::string message = none->message;
      if (message.rfind("--limit", 0) == 0) message = Names(*o) + message.substr(7);
      std::string text = "plumb " + verb + ": error: " + message + where + "\n";
      // runs and history took a count with --limit once (now --last); the rest take nodes.
      if (o->get_group().empty())
        text += "  hint: plumb " + verb + " --last N counts; --limit is not taken here\n";
      else
        text += "  hint: " + none->hint + "\n";
      return text;
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) {   // the parsed ones
    const std::string path = verb.empty() ? sub->get_name() : verb + " " + sub->get_name();
    if (auto text = Check(*sub, path, argc, argv, names_no_node)) return text;
  }
  return std::nullopt;
}

}  // namespace

std::vector<char*> SplitEmptyLimitValues(int argc, char** argv) {
  static char empty[] = "";
  std::vector<char*> out;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i > 0 && (a == "--limit=" || a == "--node=")) {
      static char limit[] = "--limit", node[] = "--node";
      out.push_back(a == "--limit=" ? limit : node);
      out.push_back(empty);
      continue;
    }
    if (i > 0 && a == "--") {   // the rest are arguments, not options
      out.insert(out.end(), argv + i, argv + argc);
      break;
    }
    out.push_back(argv[i]);
  }
  out.push_back(nullptr);   // argv[argc], as main's
  return out;
}

std::optional<std::string> LimitNamingNoNode(const CLI::App& app, int argc, char** argv,
                                             const LimitJudge& names_no_node) {
  return Check(app, "", argc, argv, names_no_node);
}

}  // namespace plumb::cli
