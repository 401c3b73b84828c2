#pragma once
/// How a rollout's progress is drawn as it happens: plain lines (CI logs), JSON lines (--format
/// json), or a live table on a terminal (one row per node of the batch, redrawn in place and
/// once a second, so a long wait shows its time move). Written to the stream given; colour is
/// the caller's (plans/report/colour.h, applied by cmd/ for a terminal only).
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "plans/rollout/observer.h"

namespace plumb::plans::report {

enum class ProgressKind { kLines, kJson, kTable };

/// Colours a whole line (kLines) or one status word (kTable); empty: none.
struct ProgressColors {
  std::function<std::string(std::string_view)> line;
  std::function<std::string(std::string_view)> status;
};

std::unique_ptr<Observer> MakeProgressObserver(ProgressKind kind, std::FILE* out,
                                               ProgressColors colors = {});

/// The line kLines prints for `e` (uncoloured), or nullopt when it prints none (a step's start,
/// a batch's end: the lines around them say it).
std::optional<std::string> ProgressLine(const RolloutEvent& e);

/// "4.2s", "1m05s": how long, in a progress line.
std::string ProgressDuration(long long ms);

}  // namespace plumb::plans::report
