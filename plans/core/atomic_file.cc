#include "plans/core/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace plumb::plans {

Status WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::string& code) {
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0)
    return Diagnostic::Error(code, fmt::format("cannot create a temp file next to '{}': {}", path,
                                               std::strerror(errno)));
  ::close(fd);
  auto fail = [&](std::string message) {
    std::remove(tmp.c_str());
    return Diagnostic::Error(code, std::move(message));
  };
  try {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    if (!out) return fail(fmt::format("cannot write '{}'", tmp));
    write(out);
    if (!out.flush()) return fail(fmt::format("cannot write '{}'", tmp));
  } catch (const std::exception& e) {
    return fail(fmt::format("'{}' not written: {}", path, e.what()));
  }
  // mkstemp makes the file 0600; an output file is as readable as any other output.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp.c_str(), 0666 & ~mask);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, std::strerror(errno)));
  return OkStatus();
}

}  // namespace plumb::plans
