// plumb __man DIR (hidden): writes the man pages, DIR/man1/plumb.1, DIR/man1/plumb-VERB.1 and
// DIR/man5/plumb-repo.5, from the same CLI definition --help prints (cli/describe_app.h). The
// build runs it (cmake/Install.cmake), so the installed pages are this binary's.
#include <cstdio>
#include <filesystem>

#include "cli/about_commands.h"
#include "cli/describe_app.h"
#include "cli/man_page.h"
#include "cmd/command.h"
#include "cmd/read_run.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kManVerb = "__man";

namespace {

int RunMan(const CLI::App& app, const std::string& dir) {
  const auto pages = cli::ManPages(cli::DescribeCommand(app, "plumb"), PLUMB_VERSION);
  std::error_code ec;
  for (const char* sub : {"man1", "man5"}) std::filesystem::create_directories(dir + "/" + sub, ec);
  for (const auto& [name, text] : pages) {
    if (Status st = WriteOutput(dir + "/" + name, text); !st.ok()) {
      std::fprintf(stderr, "%s\n", st.error().ToString().c_str());
      return ExitCodeFor(kManVerb, Outcome::kError);
    }
  }
  return ExitCodeFor(kManVerb, Outcome::kOk);
}

}  // namespace

void RegisterMan(CLI::App& app, GlobalOptions& /*g*/, std::function<int()>& run) {
  static std::string dir;
  CLI::App* sub = cli::AddManCommand(app, dir);
  sub->callback([&run, &app] { run = [&app] { return RunMan(app, dir); }; });
}

}  // namespace plumb::cmd
