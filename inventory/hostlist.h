#pragma once
/// Slurm-style host lists: "gpu[001-016],login01". One compressor for every report, so a set of
/// nodes is spelled the same way in a plan, a diff and a drift report.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::inventory {

/// `names` (any order, duplicates ignored) as a Slurm host list. Names that end in digits are
/// grouped by prefix and digit width (zero padding is kept: gpu001..gpu016 -> "gpu[001-016]",
/// a run of one is written without brackets); other names are listed as they are. Groups are
/// sorted by prefix, ranges by number. Empty input gives "".
std::string CompressHostlist(const std::vector<std::string>& names);

/// The names a host list stands for, in the order written: "gpu[001-003,007],cpu1" ->
/// gpu001 gpu002 gpu003 gpu007 cpu1. std::nullopt when `list` is not a valid host list
/// (unbalanced brackets, a range running backwards, more than `max_names` names).
std::optional<std::vector<std::string>> ExpandHostlist(const std::string& list,
                                                       size_t max_names = 1'000'000);

/// The numbers one pair of brackets stands for, each zero-padded to the width of its range's
/// start: "1-3,05" -> {"1", "2", "3", "05"}; "08-10" -> {"08", "09", "10"}. The one reader of
/// Slurm's bracket ranges (host lists here, node patterns in node_pattern.cc). std::nullopt
/// when `body` is not a list of such ranges (empty, a non-digit, a range running backwards, a
/// number of more than 18 digits) or stands for more than `max_names` numbers.
std::optional<std::vector<std::string>> ExpandRangeList(std::string_view body, size_t max_names);

}  // namespace plumb::inventory
