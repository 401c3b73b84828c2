// plumb schemas: the JSON Schemas (and rules) compiled into plumb, for editors and CI.
#include <cstdio>

#include "cli/schema_files.h"
#include "cmd/command.h"
#include "cmd/read_run.h"
#include "schemas/embedded.h"

namespace plumb::cmd {

// This command's row of the exit code table (schemas/exit_codes.h).
constexpr std::string_view kSchemasVerb = "schemas";

namespace {

struct SchemasOptions {
  std::string out;
  std::string print;
};

int RunSchemas(const SchemasOptions& o) {
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
  static SchemasOptions opts;
  auto* sub = app.add_subcommand(
      "schemas", "List, print or write out the JSON Schemas plumb validates with (for editors)");
  sub->add_option("--out", opts.out, "Write every schema into this directory");
  sub->add_option("--print", opts.print, "Print one file, e.g. stack.schema.json");
  sub->footer(
      "The same schemas `plumb validate` uses, compiled into the binary. Write them next to\n"
      "your cluster repo and point yaml-language-server at them for completion and checks.\n\n"
      "Examples:\n"
      "  plumb schemas                               # list them\n"
      "  plumb schemas --out .schemas                # then, at the top of stacks/h100.yaml:\n"
      "  # yaml-language-server: $schema=../.schemas/stack.schema.json\n"
      "  plumb schemas --print rules/compat.yaml     # the CUDA -> driver table");
  sub->callback([&run] { run = [] { return RunSchemas(opts); }; });
}

}  // namespace plumb::cmd
