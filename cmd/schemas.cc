// plumb schemas: the JSON Schemas (and rules) compiled into plumb, for editors and CI.
#include <cstdio>
#include <filesystem>
#include <fstream>

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
  namespace fs = std::filesystem;
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
  for (const auto& f : schemas::EmbeddedFiles()) {
    if (o.out.empty()) {
      std::printf("%.*s\n", static_cast<int>(f.name.size()), f.name.data());
      continue;
    }
    fs::path p = fs::path(o.out) / std::string(f.name);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    Status st = ec ? Status(Diagnostic::Error("output.write", "cannot create " +
                                                             p.parent_path().string()))
                   : WriteOutput(p.string(), std::string(f.contents));
    if (!st) {
      std::fprintf(stderr, "plumb: error: %s\n", st.error().message.c_str());
      return ExitCodeFor(kSchemasVerb, Outcome::kError);
    }
    std::printf("wrote %s\n", p.string().c_str());
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
