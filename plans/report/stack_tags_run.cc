#include "plans/report/stack_tags_run.h"

#include <fmt/format.h>

namespace plumb::plans::report {

StackTagsRun TagStacksAfterRead(const ReadRunResult& rr, const Schedulers& schedulers) {
  StackTagsRun run;
  // "In sync" must mean every pin was compared: keys no module of this run checked (firmware
  // and BIOS without BMC reads, say) would tag a node whose stack nobody verified.
  for (const Diagnostic& d : rr.run.diags.items())
    if (d.code == "plan.unchecked") {
      run.diags.Add(Diagnostic::Error(
          "stack.unchecked", "stack tags not written: " + d.message, {}, {},
          "read every pinned key (BMCs included) so that in sync means the whole stack"));
      return run;
    }
  auto view = ReadStackView(schedulers, rr.loaded.desired);
  if (!view) {
    Diagnostic d = view.error();
    d.message = "stack tags not written: " + d.message;
    d.severity = Severity::kError;
    run.diags.Add(d);
    return run;
  }
  const auto changes =
      StackTagChanges(rr.run.plan, rr.loaded.desired, *view, rr.loaded.cluster.source.commit);
  run.written = WriteStackTags(schedulers, rr.loaded.desired, *view, changes, run.diags);
  return run;
}

std::string StackTagsText(const StackTagsRun& run) {
  std::string out;
  for (const auto& c : run.written)
    out += fmt::format("stack tag: {} shows {} (was {}: {})\n", c.node, modules::TagText(c.now),
                       modules::TagText(c.was), c.why);
  if (run.ok()) out += fmt::format("stack tags: {} written\n", run.written.size());
  if (!run.diags.empty()) out += run.diags.ToText();
  return out;
}

}  // namespace plumb::plans::report
