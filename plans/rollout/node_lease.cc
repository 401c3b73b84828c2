#include "plans/rollout/node_lease.h"

#include <sstream>

#include <fmt/format.h>

#include "modules/transport/shell.h"
#include "plans/rollout/rollout.h"

namespace plumb::plans {
namespace {

using transport::ShellQuote;

// A host or user name goes into a `key=value` line of the lease file: keep it one line.
std::string OneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '=') c = '_';
  return s;
}

}  // namespace

std::string LeaseScript(std::string_view op, const std::string& dir, const LeaseHolder& me,
                        std::chrono::seconds ttl) {
  // flock serialises every lease operation on the node: read, decide and write are one step,
  // so two runs can never both see "free" and both take it. The file is replaced by rename.
  // Output: one status line, then the other holder's lines when there is one.
  return fmt::format(
      R"SH(d={dir}; f="$d/lease"; op={op}; run={run}; ttl={ttl}
command -v flock >/dev/null 2>&1 || {{ echo "plumb-lease: flock(1) not found on the node (util-linux)" >&2; exit 70; }}
mkdir -p "$d" || exit 71
exec 9>>"$d/lease.lock" || exit 71
flock -w 30 9 || {{ echo "plumb-lease: $d/lease.lock stayed locked for 30s" >&2; exit 75; }}
now=$(date +%s)
cur_run=; cur_exp=0; cur_host=; cur_pid=
if [ -f "$f" ]; then
  cur_run=$(sed -n 's/^run=//p' "$f" | head -n 1)
  cur_host=$(sed -n 's/^host=//p' "$f" | head -n 1)
  cur_pid=$(sed -n 's/^pid=//p' "$f" | head -n 1)
  cur_exp=$(sed -n 's/^expires=//p' "$f" | head -n 1)
  case "$cur_exp" in ''|*[!0-9]*) cur_exp=0 ;; esac
fi
other() {{ echo "$1"; cat "$f"; }}
write() {{
  printf 'run=%s\nhost=%s\npid=%s\nuser=%s\nsince=%s\nexpires=%s\n' "$run" {host} {pid} {user} "$now" "$((now + ttl))" >"$f.tmp.$$" &&
    mv -f "$f.tmp.$$" "$f" || exit 72
}}
case "$op" in
  acquire)
    if [ -n "$cur_run" ] && [ "$cur_run" != "$run" ]; then
      if [ "$cur_exp" -gt "$now" ]; then other held; exit 0; fi
      other took-over; write; exit 0
    fi
    write; echo taken ;;
  renew)
    # Ours only if this very process wrote it: the same run resumed by another process (after
    # a crash, or elsewhere after the cluster lock expired) has taken the node over.
    if [ "$cur_run" != "$run" ] || [ "$cur_host" != {host} ] || [ "$cur_pid" != {pid} ]; then
      if [ -f "$f" ]; then other lost; else echo lost; fi; exit 0
    fi
    write; echo taken ;;
  release)
    if [ "$cur_run" = "$run" ] && [ "$cur_host" = {host} ] && [ "$cur_pid" = {pid} ]; then rm -f "$f"; fi
    echo released ;;
esac
)SH",
      fmt::arg("dir", ShellQuote(dir)), fmt::arg("op", ShellQuote(op)),
      fmt::arg("run", ShellQuote(OneLine(me.run))), fmt::arg("ttl", ttl.count()),
      fmt::arg("host", ShellQuote(OneLine(me.host))), fmt::arg("pid", me.pid),
      fmt::arg("user", ShellQuote(OneLine(me.user))));
}

Result<LeaseReply> ParseLeaseReply(std::string_view out) {
  std::istringstream in{std::string(out)};
  std::string status;
  while (std::getline(in, status) && status.empty()) {
  }
  LeaseReply r;
  if (status == "taken") r.kind = LeaseReply::Kind::kTaken;
  else if (status == "took-over") r.kind = LeaseReply::Kind::kTookOver;
  else if (status == "held") r.kind = LeaseReply::Kind::kHeld;
  else if (status == "lost") r.kind = LeaseReply::Kind::kLost;
  else if (status == "released") r.kind = LeaseReply::Kind::kReleased;
  else
    return Diagnostic::Error("lease.reply",
                             fmt::format("unexpected answer from the lease script: '{}'",
                                         status.substr(0, 80)));
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k == "run") r.other.run = v;
    else if (k == "host") r.other.host = v;
    else if (k == "user") r.other.user = v;
    else if (k == "pid") r.other.pid = std::atoll(v.c_str());
    else if (k == "expires") r.other.expires = std::atoll(v.c_str());
  }
  return r;
}

namespace {

class ShellLeases final : public NodeLeases {
 public:
  ShellLeases(NodeTransport& t, std::string dir, std::chrono::milliseconds timeout)
      : t_(t), dir_(std::move(dir)), timeout_(timeout) {}

  Result<LeaseReply> Acquire(const std::string& node, const LeaseHolder& me,
                             std::chrono::seconds ttl) override {
    return Run(node, LeaseScript("acquire", dir_, me, ttl));
  }
  Result<LeaseReply> Renew(const std::string& node, const LeaseHolder& me,
                           std::chrono::seconds ttl) override {
    return Run(node, LeaseScript("renew", dir_, me, ttl));
  }
  Status Release(const std::string& node, const LeaseHolder& me) override {
    auto r = Run(node, LeaseScript("release", dir_, me, std::chrono::seconds(0)));
    if (!r) return r.error();
    return OkStatus();
  }

 private:
  Result<LeaseReply> Run(const std::string& node, const std::string& script) {
    auto sh = t_.Connect(node);
    if (!sh) return sh.error();
    auto out = (*sh)->Run(script, timeout_);
    if (!out) return out.error();
    if (out->exit_status != 0) {
      std::string err = out->err.empty() ? out->out : out->err;
      while (!err.empty() && err.back() == '\n') err.pop_back();
      return Diagnostic::Error("lease.node",
                               fmt::format("lease on {}: exit {}: {}", node, out->exit_status, err));
    }
    return ParseLeaseReply(out->out);
  }

  NodeTransport& t_;
  std::string dir_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<NodeLeases> MakeShellLeases(NodeTransport& transport, std::string dir,
                                            std::chrono::milliseconds timeout) {
  return std::make_unique<ShellLeases>(transport, std::move(dir), timeout);
}

}  // namespace plumb::plans
