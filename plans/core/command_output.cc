#include "plans/core/command_output.h"

#include "plans/core/atomic_file.h"
#include "schemas/exit_codes.h"

namespace plumb::plans {

Status WriteOutputTo(const std::string& path, std::ostream& std_out, const WriteReport& write) {
  if (path.empty() || path == "-") {
    write(std_out);
    std_out.flush();
    if (!std_out)   // a closed pipe, a full disk: the report did not get out
      return Diagnostic::Error("output.write", "cannot write the output to stdout");
    return OkStatus();
  }
  return WriteFileAtomically(path, write);
}

Status WriteTextTo(const std::string& path, std::ostream& std_out, const std::string& text) {
  return WriteOutputTo(path, std_out, [&text](std::ostream& out) { out.write(text.data(), text.size()); });
}

int EmitOutcome(std::string_view verb, const CommandOutcome& o, const OutputTarget& to,
                std::ostream& out, std::ostream& err) {
  if (Status st = WriteOutputTo(to.path, out, o.render); !st.ok()) {
    err << st.error().ToString() << "\n";
    return ExitCodeFor(verb, Outcome::kError);
  }
  // Machine output went to the file or stdout; the verdict goes to stderr for the log.
  if (to.ForMachine() && !o.verdict.empty()) err << o.verdict << "\n";
  return o.exit_code;
}

std::string JsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace plumb::plans
