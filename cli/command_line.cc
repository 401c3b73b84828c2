#include "cli/command_line.h"

#include <vector>

#include <fmt/format.h>

#include "schemas/suggest.h"

namespace plumb::cli {

std::optional<std::string> UnknownVerb(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;
    std::vector<std::string> verbs;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == word) return std::nullopt;
      verbs.push_back(sub->get_name());
    }
    std::string out = fmt::format("plumb: error: unknown command '{}'\n", schemas::Printable(word));
    const std::string best = schemas::DidYouMean(word, verbs);
    if (!best.empty()) out += fmt::format("  hint: did you mean 'plumb {}'?\n", best);
    return out + "  hint: plumb --help lists the commands\n";
  }
  return std::nullopt;
}

void AddColorOption(CLI::App& app, std::string& color) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;   // hidden verbs print no report
    sub->add_option("--color", color, "Colour: auto (a terminal, NO_COLOR unset), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->capture_default_str();
    AddColorOption(*sub, color);
  }
}

bool RepoIsGiven(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {   // the parsed ones
    if (sub->get_name() == "apply") return true;
    if (const CLI::Option* o = sub->get_option_no_throw("--repo"); o != nullptr && o->count() > 0)
      return true;
    if (RepoIsGiven(*sub)) return true;
  }
  return false;
}

void AddRetiredCountLimit(CLI::App& sub, std::string& value) {
  sub.add_option("--limit", value)->group("");
}

std::optional<std::string> RetiredCountLimitRefusal(std::string_view verb, const std::string& value) {
  if (value.empty()) return std::nullopt;
  std::string out = fmt::format(
      "plumb {}: error: --limit takes node patterns elsewhere; the number shown is --last N\n", verb);
  // A number meant a count; anything else was a node (pattern): history takes one node as its
  // argument, runs lists runs and points there.
  const bool count = value.find_first_not_of("0123456789") == std::string::npos;
  const bool one_node = value.find_first_of("*?[],@! '\"$\\") == std::string::npos;
  const std::string shown = schemas::Printable(value);
  if (count) return out + fmt::format("  hint: plumb {} --last {}\n", verb, shown);
  if (verb == "history" && one_node)
    return out + fmt::format("  hint: plumb history {}   (one node's steps)\n", shown);
  if (verb == "history") return out + "  hint: plumb history NODE takes one node's name, no pattern\n";
  return out + fmt::format("  hint: plumb history NODE shows one node's steps; plumb {} lists runs\n", verb);
}

}  // namespace plumb::cli
