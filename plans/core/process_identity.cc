#include "plans/core/process_identity.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace plumb::plans {
namespace {

std::string BootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  return id;
}

}  // namespace

std::string ProcessStart(int64_t pid) {
  if (pid <= 0) return {};
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return {};
  // Field 2 is "(comm)" and may hold spaces or parentheses: count fields after the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  // After comm: state is field 3; starttime is field 22, i.e. the 20th after comm.
  for (int i = 3; i <= 22 && (rest >> field); ++i) {
    if (i == 22) return BootId() + "/" + field;
  }
  return {};
}

std::string HostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string UserName() {
  if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name) return pw->pw_name;
  const char* u = std::getenv("USER");
  return u ? u : std::to_string(geteuid());
}

bool OwnerAlive(int64_t pid, const std::string& start) {
  if (pid <= 0) return false;
  const bool running = kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  if (!running) return false;
  if (start.empty()) return true;   // not recorded (an older journal): the safe side
  const std::string now = ProcessStart(pid);
  return now.empty() || now == start;
}

}  // namespace plumb::plans
