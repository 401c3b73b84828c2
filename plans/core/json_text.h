#pragma once
/// Writing a big JSON document piece by piece with exactly the bytes nlohmann's dump(2) gives
/// for the whole tree: reports too big to build as one tree (10,000 nodes) are streamed, and
/// tested equal to the tree's text.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plumb::plans {

/// Appends `v` as dump(2) writes it when it sits `depth` levels down in a bigger document:
/// every line after the first indented by 2 x depth spaces. (Each '\n' dump writes is layout:
/// it escapes those inside strings.) Bytes that are not UTF-8 are written as U+FFFD.
void AppendIndented(std::string& out, const nlohmann::json& v, int depth);

/// The same bytes from `compact`, a value as dump() writes it with no indent (which is what a
/// digest hashes): the text is re-laid out, no tree is built. For a document too big to hold
/// twice, kept compact and indented only as it is written.
void AppendIndentedCompact(std::string& out, std::string_view compact, int depth);

}  // namespace plumb::plans
