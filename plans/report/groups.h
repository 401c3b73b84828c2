#pragma once
/// Nodes alike shown once: the plan and drift reports print the nodes whose lines are identical
/// under one host list, the groups in the order their first node comes.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace plumb::plans::report {

/// Values grouped by a key (the lines they would print), each group in the order its key was
/// first added, and the values of a group in the order they were added.
template <class T>
class GroupsInOrder {
 public:
  struct Group {
    std::string key;
    std::vector<T> members;
  };
  void Add(const std::string& key, T value) {
    auto [at, fresh] = index_.try_emplace(key, groups_.size());
    if (fresh) groups_.push_back({key, {}});
    groups_[at->second].members.push_back(std::move(value));
  }
  const std::vector<Group>& groups() const { return groups_; }
  bool empty() const { return groups_.empty(); }

 private:
  std::map<std::string, size_t> index_;
  std::vector<Group> groups_;
};

}  // namespace plumb::plans::report
