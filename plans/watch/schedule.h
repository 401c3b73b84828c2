#pragma once
/// When the watch reads each node: node starts spread over the interval (not all at once), and
/// a failed node retried with exponential backoff and jitter. Pure functions of their inputs.
#include <chrono>
#include <cstddef>

namespace plumb::plans::watch {

/// Offset of node `index` (of `count`) in every round: `index/count` of `spread` x `interval`.
/// spread 1: node starts evenly over the whole interval; 0: all at the round's start.
std::chrono::milliseconds SlotOffset(size_t index, size_t count, std::chrono::milliseconds interval,
                                     double spread);

/// Delay before retrying a node that failed `failures` (>= 1) times in a row: base x 2^(n-1),
/// at most `cap`, of which the upper half is jitter (`random01` in [0, 1)): "equal jitter", so
/// nodes that dropped together (a switch reboot) do not all reconnect at the same moment, and
/// a retry never comes sooner than half the backoff.
std::chrono::milliseconds RetryDelay(int failures, std::chrono::milliseconds base,
                                     std::chrono::milliseconds cap, double random01);

}  // namespace plumb::plans::watch
