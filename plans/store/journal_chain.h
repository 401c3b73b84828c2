#pragma once
/// The journal's hash chain as pure functions (the SQLite journal reads and writes it, see
/// plans/store/sqlite_journal.cc): each entry holds a row's image as written and the hash of the
/// entry before it, so an edited, deleted, inserted or reordered row or entry shows.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/store/journal.h"

namespace plumb::plans::chain {

/// One chain entry: the row `key` of table `tbl` as `image` (canonical JSON), written by `how`
/// ("write", or "adopt": taken in by migration 3 as it was).
struct Entry {
  int64_t seq = 0;
  std::string tbl, key, how, image, prev, hash;
};

/// "sha256:" over every field but the hash itself.
std::string EntryHash(const Entry& e);

/// The entry that chains `image` (canonical JSON) of row `key` of `tbl` after `last` (nullptr:
/// the chain is empty): its seq, previous hash and own hash filled in.
Entry NextEntry(const Entry* last, std::string tbl, std::string key, std::string how, std::string image);

/// A row as it is now, with its image (as the journal would chain it).
struct Row {
  std::string tbl, key;
  nlohmann::json image;
};

/// "steps row 17 (run R, node n1, step verify)": a row named as an auditor would look for it.
std::string RowName(const std::string& tbl, const std::string& key, const nlohmann::json& image);

/// "outcome \"failed\" in the chain, \"ok\" now; error ..." for every field that differs.
std::string FieldChanges(const nlohmann::json& was, const nlohmann::json& now);

/// Replays `entries` (in seq order) and compares every row of `rows` with its last chained
/// image; `anchor`, when set, must be the hash of some entry (a head recorded elsewhere).
ChainReport Verify(const std::vector<Entry>& entries, const std::vector<Row>& rows,
                   const std::string& anchor);

}  // namespace plumb::plans::chain
