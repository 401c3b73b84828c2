// plumb modules: the module registry as a table: each module, the desired keys it checks,
// what it reads, how it changes a node and how much that disturbs it. The README's module
// table is this command's markdown (a test keeps the two equal).
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/command.h"
#include "modules/registry.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kModulesVerb = "modules";
namespace {

// "/nvidia/driver" -> "nvidia.driver"; keys with everything below them.
std::string Keys(const modules::ModuleInfo& info) {
  std::string out;
  for (std::string_view p : info.owns) {
    std::string k(p.substr(1));
    for (char& c : k)
      if (c == '/') c = '.';
    out += (out.empty() ? "" : ", ") + fmt::format("`{}`", k);
  }
  return out.empty() ? "-" : out;
}

int RunModules(const GlobalOptions& g) {
  if (g.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const modules::Module* m : modules::AllModules()) {
      const auto& i = m->Info();
      nlohmann::json owns = nlohmann::json::array(), after = nlohmann::json::array();
      for (auto p : i.owns) owns.push_back(std::string(p));
      for (auto a : i.after) after.push_back(std::string(a));
      all.push_back({{"name", std::string(i.name)},
                     {"owns", owns},
                     {"channel", i.channel == modules::Channel::kBmc ? "bmc" : "ssh"},
                     {"after", after},
                     {"reads", std::string(i.reads)},
                     {"changes", std::string(i.changes)},
                     {"disruption", i.DisruptionText()},
                     {"kind", i.IsHealth() ? "health" : "state"},
                     {"on_demand", i.on_demand}});
    }
    std::printf("%s\n", all.dump(2).c_str());
    return ExitCodeFor(kModulesVerb, Outcome::kOk);
  }
  std::string out = "| module | reads | desired key | change | disruption |\n"
                    "|---|---|---|---|---|\n";
  for (const modules::Module* m : modules::AllModules()) {
    const auto& i = m->Info();
    out += fmt::format("| {}{} | {} | {} | {} | {} |\n", i.name,
                       i.channel == modules::Channel::kBmc ? " (BMC)" : "", i.reads, Keys(i),
                       i.changes, i.DisruptionText());
  }
  std::fputs(out.c_str(), stdout);
  return ExitCodeFor(kModulesVerb, Outcome::kOk);
}

}  // namespace

void RegisterModules(CLI::App& app, GlobalOptions& g, std::function<int()>& run) {
  auto* sub = app.add_subcommand(
      "modules", "List the modules: the desired keys each checks, what it reads, how it changes "
                 "a node and how much that disturbs it");
  sub->add_option("--format", g.format, "text (a markdown table) | json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->footer("Examples:\n"
              "  plumb modules                   the table (the README's module table)\n"
              "  plumb modules --format json     for scripts and tests");
  sub->callback([&run, &g] { run = [&g] { return RunModules(g); }; });
}

}  // namespace plumb::cmd
