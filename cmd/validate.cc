// plumb validate: load the cluster repo at a ref, check it, and say so.
#include <cstdio>

#include <fmt/format.h>

#include "cmd/command.h"
#include "cmd/repo_load.h"
#include "inventory/load.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kValidateVerb = "validate";

namespace {

std::string Plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

int ShowValidation(const GlobalOptions& g, const inventory::LoadedCluster& lc) {
  const auto& c = lc.cluster;
  std::string at = fmt::format("at {} (ref {})", c.source.commit.substr(0, 12), c.source.ref);
  if (c.source.working_tree) {
    at = fmt::format("in the working tree of {} ({})", c.source.repo,
                     c.source.commit.empty() ? "not a git repository"
                                             : "HEAD " + c.source.commit.substr(0, 12));
  }
  if (g.format == "json") {
    nlohmann::json out = {
        {"valid", lc.ok()},
        {"repo", c.source.repo},
        {"ref", c.source.ref},
        {"commit", c.source.commit},
        {"working_tree", c.source.working_tree},
        {"cluster", c.name},
        {"counts",
         {{"nodes", c.nodes.size()}, {"groups", c.groups.size()}, {"stacks", c.stacks.size()},
          {"rollouts", c.rollouts.size()}, {"waivers", c.waivers.size()}}},
        {"errors", lc.diags.ErrorCount()},
        {"warnings", lc.diags.WarningCount()},
        {"diagnostics", lc.diags.ToJson()},
    };
    std::printf("%s\n", out.dump(2).c_str());
    return ExitCodeFor(kValidateVerb, lc.ok() ? Outcome::kOk : Outcome::kInvalid);
  }
  std::fputs(lc.diags.ToText().c_str(), stderr);
  if (!lc.ok()) {
    std::fprintf(stderr, "invalid: %s, %s\n",
                 Plural(lc.diags.ErrorCount(), "error", "errors").c_str(),
                 Plural(lc.diags.WarningCount(), "warning", "warnings").c_str());
    return ExitCodeFor(kValidateVerb, Outcome::kInvalid);
  }
  std::printf("valid: cluster %s, %s, %s, %s, %s, %s %s%s\n", c.name.c_str(),
              Plural(c.nodes.size(), "node", "nodes").c_str(),
              Plural(c.groups.size(), "group", "groups").c_str(),
              Plural(c.stacks.size(), "stack", "stacks").c_str(),
              Plural(c.rollouts.size(), "rollout", "rollouts").c_str(),
              Plural(c.waivers.size(), "waiver", "waivers").c_str(), at.c_str(),
              lc.diags.WarningCount() ? fmt::format(", {}", Plural(lc.diags.WarningCount(),
                                                                   "warning", "warnings"))
                                            .c_str()
                                      : "");
  return ExitCodeFor(kValidateVerb, Outcome::kOk);
}

int RunValidate(const GlobalOptions& g) {
  auto lc = std::make_unique<inventory::LoadedCluster>(LoadRepo(g.repo, g.ref, g.working_tree));
  int rc = ShowValidation(g, *lc);
  KeepUntilExit(std::move(lc));
  return rc;
}

}  // namespace

void RegisterValidate(CLI::App& app, GlobalOptions& global, std::function<int()>& run) {
  auto* sub = app.add_subcommand(
      "validate",
      "Check the cluster repo at a git ref: schemas, references, group cycles, pin coherence");
  AddSourceOptions(*sub, global);
  sub->add_option("--format", global.format, "Output: text (diagnostics on stderr) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  sub->footer(
      "Reads inventory.yaml, stacks/*.yaml, rollouts/*.yaml and waivers.yaml as committed at\n"
      "--ref (no checkout) and reports every problem at once as file:line:column with the key\n"
      "and a hint.\n\n"
      "Examples:\n"
      "  plumb validate                          # the repo in ., at HEAD\n"
      "  plumb validate --repo pod-a --ref main  # a branch (or a tag, or a short SHA)\n"
      "  plumb validate --working-tree           # uncommitted edits, with a warning\n"
      "  plumb validate --format json | jq '.diagnostics[] | select(.severity==\"error\")'");
  sub->callback([&run, &global] { run = [&global] { return RunValidate(global); }; });
}

}  // namespace plumb::cmd
