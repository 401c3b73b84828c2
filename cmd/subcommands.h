#pragma once
/// The subcommand table (ninja's ChooseTool): one line per cmd/<name>.cc.
#include "cmd/command.h"

namespace plumb::cmd {

void RegisterVersion(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterValidate(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterShow(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterSchemas(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterGather(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterFacts(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterBmc(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterApply(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterRuns(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterHistory(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterPlan(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterDiff(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterDrift(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterHealth(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterAcceptance(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterAudit(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterWatch(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterModules(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterExitCodes(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterCompletion(CLI::App&, GlobalOptions&, std::function<int()>&);
void RegisterMan(CLI::App&, GlobalOptions&, std::function<int()>&);

/// Ends every subcommand's --help with its rows of the exit code table (cmd/exit_codes.cc).
void AppendExitCodeHelp(CLI::App& app, const std::string& prefix = "");

inline constexpr Register kSubcommands[] = {
    RegisterVersion,
    RegisterValidate,
    RegisterShow,
    RegisterSchemas,
    RegisterGather,
    RegisterFacts,
    RegisterBmc,
    RegisterApply,
    RegisterRuns,
    RegisterHistory,
    RegisterPlan,
    RegisterDiff,
    RegisterDrift,
    RegisterHealth,
    RegisterAcceptance,
    RegisterAudit,
    RegisterWatch,
    RegisterModules,
    RegisterExitCodes,
    RegisterCompletion,
    RegisterMan,
};

}  // namespace plumb::cmd
