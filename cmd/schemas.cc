// plumb schemas: the JSON Schemas (and rules) compiled into plumb, for editors and CI.
#include <cstdio>

#include "cli/about_commands.h"
#include "cli/schema_files.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "schemas/embedded.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kSchemasVerb = "schemas";

namespace {

int RunSchemas(const cli::SchemasArgs& o) {
  if (!o.print.empty()) {
    auto text = schemas::FindEmbedded(o.print);
    if (!text) {
      std::fprintf(stderr, "plumb: error: no built-in file '%s' (plumb schemas lists them)\n",
                   o.print.c_str());
      return ExitCodeFor(kSchemasVerb, Outcome::kError);
    }
    std::fwrite(text->data(), 1, text->size(), stdout);
    return ExitCodeFor(kSchemasVerb, Outcome::kOk);
  }
  if (o.out.empty()) {
    std::fputs(cli::EmbeddedFileList(schemas::EmbeddedFiles()).c_str(), stdout);
    return ExitCodeFor(kSchemasVerb, Outcome::kOk);
  }
  Status st = cli::WriteEmbeddedFiles(schemas::EmbeddedFiles(), o.out, WriteOutput, [](const std::string& p) {
    std::printf("wrote %s\n", p.c_str());
  });
  if (!st) {
    std::fprintf(stderr, "plumb: error: %s\n", st.error().message.c_str());
    return ExitCodeFor(kSchemasVerb, Outcome::kError);
  }
  return ExitCodeFor(kSchemasVerb, Outcome::kOk);
}

}  // namespace

void RegisterSchemas(CLI::App& app, GlobalOptions&, std::function<int()>& run) {
  static cli::SchemasArgs opts;
  CLI::App* sub = cli::AddSchemasCommand(app, opts);
  sub->callback([&run] { run = [] { return RunSchemas(opts); }; });
}

}  // namespace plumb::cmd
