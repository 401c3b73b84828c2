#pragma once
/// Finding, in a YAML file's text, the one long block sequence worth parsing in pieces: a
/// 100,000-node inventory is 100,000 `- {...}` lines under `nodes:`, and yaml-cpp reads it at
/// ~2.5 MB/s on one core. Text only, no parsing: ParseYaml (yaml_json.cc) parses the pieces
/// and the rest, and reads the file whole whenever the pieces do not make the same document.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plumb::schemas {

/// A block sequence that is the value of a top-level key written alone on its line (`nodes:`),
/// its items each starting at the same indentation with "- ".
struct LongSequence {
  std::string key;
  int key_line = 0;   ///< 1-based line of `key:` (at column 1)
  size_t begin = 0;   ///< byte offset of the first item's line
  size_t end = 0;     ///< byte offset just past the sequence's last line (or the text's end)
  int indent = 0;     ///< column (0-based) of each item's '-'
  /// Each item's first byte (its line's start) and 1-based line number, in order.
  std::vector<size_t> item_starts;
  std::vector<int> item_lines;
};

/// The top-level block sequence with the most items, if it has at least `min_items`. A
/// sequence whose lines are not all blank, comments, "- " at its indentation or deeper is not
/// offered (a line that would end it anywhere but at column 0, a tab in an indentation), nor
/// any in a text with a directive (`%TAG` changes what tags mean, and only the whole read has
/// it) or whose sequence runs to a last line without its newline.
std::optional<LongSequence> FindLongSequence(std::string_view text, size_t min_items);

}  // namespace plumb::schemas
