// `plumb facts merge` over files (MergeFactsFiles, plans/observe/facts_merge.h).
#include <fmt/format.h>

#include "plans/core/command_output.h"
#include "plans/observe/facts_merge.h"
#include "schemas/exit_codes.h"

namespace plumb::plans {

int MergeFactsFiles(const std::vector<std::string>& parts, const MergeOptions& options,
                    const std::string& file, std::ostream& out, std::ostream& err) {
  constexpr std::string_view kVerb = "facts merge";
  SnapshotMerge merge(options);
  Diagnostics diags;
  size_t nodes_read = 0;
  for (const std::string& path : parts) {
    const size_t part = merge.BeginPart(path);
    // Each part streams in one node at a time: the merge holds every node once.
    auto header = ReadObservedState(path, [&](NodeObservation&& n) {
      ++nodes_read;
      merge.AddNode(part, std::move(n));
    });
    if (!header.ok()) {
      diags.Add(header.error());   // every unreadable part is named, not only the first
      continue;
    }
    merge.EndPart(part, *header);
  }
  Result<ObservedState> merged = diags.HasErrors()
                                     ? Result<ObservedState>(Diagnostic::Error("facts.merge", "not merged"))
                                     : merge.Finish(diags);
  err << diags.ToText();
  if (!merged.ok()) {
    err << fmt::format("error: {} part(s) not merged; nothing was written\n", parts.size());
    return ExitCodeFor(kVerb, Outcome::kRefused);
  }
  Status written = WriteOutputTo(file, out, [&merged](std::ostream& o) { WriteObservedStateJson(*merged, o); });
  if (!written.ok()) {
    err << written.error().ToString() << "\n";
    return ExitCodeFor(kVerb, Outcome::kError);
  }
  err << fmt::format("merged {} part(s): {} node(s) ({} read), commit {}, gathered from {}{}{}\n",
                     parts.size(), merged->nodes.size(), nodes_read,
                     merged->commit.empty() ? "(mixed or not recorded)" : merged->commit.substr(0, 12),
                     merged->gathered_at.empty() ? "(not recorded)" : merged->gathered_at,
                     file.empty() ? "" : " -> ", file);
  return ExitCodeFor(kVerb, Outcome::kOk);
}

}  // namespace plumb::plans
