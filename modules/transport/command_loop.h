#pragma once
/// A command loop: one long-lived /bin/sh on the node that runs command after command sent on
/// its stdin, so that a command run again and again (plumb watch's probe) costs one request and
/// one reply on a channel kept open, not a channel's open, exec, exit status and close (about
/// ten SSH packets each way, most of a steady watch read's client CPU).
///
/// Wire format, all on the loop's stdin/stdout:
///   request:  "<bytes> <marker> <timeout_s>\n" then exactly <bytes> bytes of the command;
///   reply:    the command's stdout, then "\n<marker> <exit status>\n".
/// Each command runs as `Shell::Run` runs it: `/bin/sh -c COMMAND`, stdin from /dev/null, under
/// `timeout -s KILL` where the node has it. The marker is fresh and random per request, so no
/// command output can end a reply early. The loop ends when its stdin does (channel closed).
#include <optional>
#include <string>
#include <string_view>

namespace plumb::transport {

/// The loop itself: a POSIX sh script, run once per session (needs `head -c`, coreutils).
std::string CommandLoopScript();

/// A fresh marker: "plumb-end-" and 32 random hex digits.
std::string NewLoopMarker();

/// The request that runs `command` with `marker`, killed on the node after `timeout_s` (>= 1).
std::string CommandLoopRequest(std::string_view command, std::string_view marker, long timeout_s);

struct LoopReply {
  std::string out;      ///< the command's stdout
  int exit_status = 0;  ///< its exit status (the loop prints $?)
};

/// Takes one complete reply for `marker` off the front of `stream` (what the loop printed so
/// far), or nullopt while its end line has not arrived. A malformed end line is nullopt too
/// (the caller's deadline ends the wait).
std::optional<LoopReply> TakeLoopReply(std::string& stream, std::string_view marker);

/// Replies up to this many bytes (stdout and stderr together) leave the loop running; after a
/// bigger one the caller closes the loop's channel and the next command starts a fresh loop.
/// Why: libssh keeps a channel's receive buffer at the largest size it ever grew to, for the
/// channel's life. A watch keeps one loop per node for hours, and its first round's full probe
/// outputs (15 KB on the testbed, 100 KB and more on a real node) would otherwise pin that much
/// per node; its steady reads are a one-line "unchanged", which keep the loop.
inline constexpr size_t kLoopKeepReplyBytes = 4096;

/// Whether a loop that just sent a reply of `reply_bytes` is kept for the next command.
inline bool KeepLoopAfter(size_t reply_bytes) { return reply_bytes <= kLoopKeepReplyBytes; }

}  // namespace plumb::transport
