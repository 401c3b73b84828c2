#include "plans/store/journal_chain.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plans/core/digest.h"

namespace plumb::plans::chain {

Entry NextEntry(const Entry* last, std::string tbl, std::string key, std::string how, std::string image) {
  Entry e;
  e.tbl = std::move(tbl);
  e.key = std::move(key);
  e.how = std::move(how);
  e.image = std::move(image);
  e.seq = last != nullptr ? last->seq + 1 : 1;
  e.prev = last != nullptr ? last->hash : "";
  e.hash = EntryHash(e);
  return e;
}

std::string EntryHash(const Entry& e) {
  // Every field but the hash itself; the newline cannot occur in the fields before `image`.
  return "sha256:" + Sha256Hex(fmt::format("{}\n{}\n{}\n{}\n{}\n{}", e.prev, e.seq, e.tbl, e.key,
                                           e.how, e.image));
}

std::string RowName(const std::string& tbl, const std::string& key, const nlohmann::json& image) {
  auto f = [&](const char* k) { return image.is_object() ? image.value(k, "") : std::string(); };
  if (tbl == "steps")
    return fmt::format("steps row {} (run {}, node {}, step {})", key, f("run_id"), f("node"),
                       f("step"));
  if (tbl == "runs") return fmt::format("run {}", key);
  if (tbl == "nodes") return fmt::format("nodes row {}", key);
  return fmt::format("facts row {} (run {}, node {}, {})", key, f("run_id"), f("node"), f("phase"));
}

std::string FieldChanges(const nlohmann::json& was, const nlohmann::json& now) {
  std::string out;
  std::set<std::string> keys;
  if (was.is_object())
    for (auto it = was.begin(); it != was.end(); ++it) keys.insert(it.key());
  if (now.is_object())
    for (auto it = now.begin(); it != now.end(); ++it) keys.insert(it.key());
  for (const std::string& k : keys) {
    const nlohmann::json a = was.is_object() && was.contains(k) ? was.at(k) : nlohmann::json();
    const nlohmann::json b = now.is_object() && now.contains(k) ? now.at(k) : nlohmann::json();
    if (a == b) continue;
    out += fmt::format("{}{} {} in the chain, {} now", out.empty() ? "" : "; ", k, a.dump(),
                       b.dump());
  }
  return out;
}

namespace {

// The entries in order: each follows the one before it (seq and previous hash), each hash
// matches its content. Fills `last_of_row` with each row's last entry.
void ReplayEntries(const std::vector<Entry>& entries, ChainReport& r,
                   std::map<std::pair<std::string, std::string>, const Entry*>& last_of_row,
                   std::map<std::string, int64_t>& seq_of_hash) {
  for (const Entry& e : entries) seq_of_hash[e.hash] = e.seq;
  std::string prev;
  int64_t expect = 1;
  for (const Entry& e : entries) {
    if (e.seq != expect)
      r.problems.push_back(
          e.seq > expect
              ? fmt::format("chain entries {}..{} are missing: deleted", expect, e.seq - 1)
              : fmt::format("chain entry {} is out of sequence (after entry {})", e.seq, expect - 1));
    if (e.prev != prev) {
      auto other = seq_of_hash.find(e.prev);
      if (other != seq_of_hash.end() && other->second != e.seq - 1)
        r.problems.push_back(fmt::format("chain entry {} ({}) was written after entry {}, not "
                                         "after entry {}: entries were reordered",
                                         e.seq, RowName(e.tbl, e.key, nlohmann::json()),
                                         other->second, expect - 1));
      else if (e.seq == expect)
        r.problems.push_back(fmt::format("chain entry {} does not follow the entry before it "
                                         "(its previous hash is not that entry's): the entry "
                                         "before it was edited or replaced",
                                         e.seq));
    }
    if (EntryHash(e) != e.hash) {
      auto img = nlohmann::json::parse(e.image, nullptr, false);
      r.problems.push_back(fmt::format("chain entry {} ({}) was edited: its hash does not match "
                                       "its content",
                                       e.seq, RowName(e.tbl, e.key, img)));
    }
    if (e.how == "adopt") ++r.adopted;
    last_of_row[{e.tbl, e.key}] = &e;
    prev = e.hash;
    expect = e.seq + 1;
  }
}

}  // namespace

ChainReport Verify(const std::vector<Entry>& entries, const std::vector<Row>& rows,
                   const std::string& anchor) {
  ChainReport r;
  std::map<std::pair<std::string, std::string>, const Entry*> last_of_row;
  std::map<std::string, int64_t> seq_of_hash;
  ReplayEntries(entries, r, last_of_row, seq_of_hash);
  r.entries = static_cast<int64_t>(entries.size());
  r.head = entries.empty() ? "" : entries.back().hash;
  if (!anchor.empty() && !seq_of_hash.count(anchor))
    r.problems.push_back(fmt::format("the recorded head {} is not in the chain: the chain was "
                                     "rewritten (or cut) since it was recorded",
                                     anchor));
  // Every row as it is now against its last chained image.
  std::set<std::pair<std::string, std::string>> seen;
  for (const Row& row : rows) {
    seen.insert({row.tbl, row.key});
    auto it = last_of_row.find({row.tbl, row.key});
    if (it == last_of_row.end()) {
      r.problems.push_back(fmt::format("{} is not in the chain: it was written outside plumb",
                                       RowName(row.tbl, row.key, row.image)));
      continue;
    }
    if (CanonicalJson(row.image) != it->second->image)
      r.problems.push_back(fmt::format(
          "{} was edited after it was written (chain entry {}): {}",
          RowName(row.tbl, row.key, row.image), it->second->seq,
          FieldChanges(nlohmann::json::parse(it->second->image, nullptr, false), row.image)));
  }
  for (const auto& [row, e] : last_of_row)
    if (!seen.count(row))
      r.problems.push_back(fmt::format(
          "{} was deleted (chain entry {} recorded it)",
          RowName(row.first, row.second, nlohmann::json::parse(e->image, nullptr, false)), e->seq));
  return r;
}

}  // namespace plumb::plans::chain
