#include "plans/probe_sections.h"

#include <fmt/format.h>

namespace plumb::plans {

std::string BuildProbeScript(const std::vector<const modules::Module*>& modules,
                             std::string_view nonce) {
  // LC_ALL=C: tools print the formats the parsers were written against. Each snippet runs in a
  // subshell with stdin closed, so an `exit` or a stray read cannot affect the others. The
  // newline before each end marker keeps it on its own line; the splitter removes it again.
  std::string s = "LC_ALL=C; export LC_ALL\n";
  for (const modules::Module* m : modules) {
    std::string body = m->ProbeScript();
    if (body.empty()) continue;
    std::string name(m->Name());
    s += fmt::format("printf '@@plumb:{0}:begin:{1}\\n'\n(\n{2}\n) </dev/null\n"
                     "printf '\\n@@plumb:{0}:end:{1}:%d\\n' $?\n",
                     nonce, name, body);
  }
  return s;
}

Result<std::map<std::string, ProbeSection>> SplitProbeOutput(std::string_view out,
                                                             std::string_view nonce) {
  std::map<std::string, ProbeSection> sections;
  const std::string begin = fmt::format("@@plumb:{}:begin:", nonce);
  const std::string end = fmt::format("\n@@plumb:{}:end:", nonce);
  size_t pos = 0;
  bool any = false;
  while (true) {
    size_t b = out.find(begin, pos);
    if (b == std::string_view::npos) break;
    any = true;
    size_t name_start = b + begin.size();
    size_t nl = out.find('\n', name_start);
    if (nl == std::string_view::npos) break;
    std::string name(out.substr(name_start, nl - name_start));
    std::string marker = end + name + ":";
    // The end marker starts with the newline the script printed before it, so the section is
    // exactly the bytes between the begin line and that newline.
    size_t e = out.find(marker, nl + 1);
    if (e == std::string_view::npos) {
      return Diagnostic::Error("probe.output",
                               fmt::format("probe output ends inside section '{}' (truncated: "
                                           "the node closed the session or the script died)",
                                           name));
    }
    ProbeSection sec;
    sec.out = std::string(out.substr(nl + 1, e - (nl + 1)));
    size_t status_start = e + marker.size();
    size_t status_end = out.find('\n', status_start);
    std::string status(out.substr(status_start, status_end == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : status_end - status_start));
    try {
      sec.exit_status = std::stoi(status);
    } catch (...) {
      return Diagnostic::Error("probe.output",
                               fmt::format("bad exit status '{}' in section '{}'", status, name));
    }
    sections[name] = std::move(sec);
    pos = status_end == std::string_view::npos ? out.size() : status_end;
  }
  if (!any) {
    return Diagnostic::Error("probe.output",
                             "the probe printed no section markers: is /bin/sh a POSIX shell, and "
                             "does the login print to stdout?");
  }
  return sections;
}

}  // namespace plumb::plans
