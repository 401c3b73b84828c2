// Terminal colour for text reports (cmd/color.h).
#include "cmd/color.h"

#include <cstdlib>
#include <unistd.h>

namespace plumb::cmd {

bool TerminalCanDraw(int fd) {
  return plans::report::TerminalDraws(isatty(fd) == 1, std::getenv("TERM"));
}

bool ColorOn(const std::string& mode, std::FILE* stream) {
  return plans::report::ColourWanted(mode, std::getenv("NO_COLOR"), TerminalCanDraw(fileno(stream)));
}

}  // namespace plumb::cmd
