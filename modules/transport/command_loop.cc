#include "modules/transport/command_loop.h"

#include <random>

#include <fmt/format.h>

#include "modules/transport/shell.h"

namespace plumb::transport {

std::string CommandLoopScript() {
  // `read` takes the header line byte by byte (POSIX: never past the newline on a pipe), then
  // `head -c` exactly the command's bytes; the trailing "x" keeps the command's own trailing
  // newlines through $( ). A header that is not "<digits> plumb-end-<hex> <digits>", a failed
  // `head`, or fewer bytes than announced (bytes: LC_ALL=C) end the loop: the client sees the
  // channel's EOF, drops the session and opens a new one, never a reply out of step. (The
  // commands themselves run with the session's environment, as Run's do: LC_ALL=C is only the
  // length check's, in a subshell.) Variables are prefixed so no command sees or breaks them.
  return "while IFS=' ' read -r plumb_loop_n plumb_loop_m plumb_loop_s; do\n"
         "  case $plumb_loop_n:$plumb_loop_s in ''|*[!0-9:]*|:*|*:) exit 2 ;; esac\n"
         "  case $plumb_loop_m in plumb-end-*[!0-9a-f]*|plumb-end-) exit 2 ;; plumb-end-*) ;; *) exit 2 ;; esac\n"
         "  plumb_loop_c=$(head -c \"$plumb_loop_n\" && echo x) || exit 2\n"
         "  plumb_loop_c=${plumb_loop_c%x}\n"
         "  [ \"$(LC_ALL=C; echo ${#plumb_loop_c})\" -eq \"$plumb_loop_n\" ] || exit 2\n"
         "  plumb_loop_t=; command -v timeout >/dev/null 2>&1 && plumb_loop_t=timeout\n"
         "  if [ -n \"$plumb_loop_t\" ]; then timeout -s KILL \"$plumb_loop_s\" /bin/sh -c \"$plumb_loop_c\" </dev/null\n"
         "  else /bin/sh -c \"$plumb_loop_c\" </dev/null; fi\n"
         "  printf '\\n%s %s\\n' \"$plumb_loop_m\" \"$?\"\n"
         "done\n";
}

std::string NewLoopMarker() {
  std::random_device rd;
  std::string m = "plumb-end-";
  for (int i = 0; i < 4; ++i) m += fmt::format("{:08x}", rd());
  return m;
}

std::string CommandLoopRequest(std::string_view command, std::string_view marker, long timeout_s) {
  return fmt::format("{} {} {}\n{}", command.size(), marker, timeout_s < 1 ? 1 : timeout_s, command);
}

std::optional<LoopReply> TakeLoopReply(std::string& stream, std::string_view marker) {
  const std::string end = fmt::format("\n{} ", marker);
  size_t at = stream.find(end);
  if (at == std::string::npos) return std::nullopt;
  size_t status_at = at + end.size();
  size_t nl = stream.find('\n', status_at);
  if (nl == std::string::npos) return std::nullopt;   // the status line is still arriving
  std::string_view status(stream.data() + status_at, nl - status_at);
  if (status.empty() || status.size() > 3 || status.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  LoopReply r;
  r.out = stream.substr(0, at);
  r.exit_status = std::stoi(std::string(status));
  stream.erase(0, nl + 1);
  return r;
}

}  // namespace plumb::transport
