#pragma once
/// "gather: 37/256 nodes (2 unreadable)", rewritten in place as nodes are read; erased when all
/// are. For a terminal only (the caller checks that it draws \r and erase-line): never in a CI
/// log.
#include <cstdio>
#include <string>

#include "plans/observe/gather.h"

namespace plumb::plans {

class NodeProgressLine : public ProgressObserver {
 public:
  NodeProgressLine(std::string label, std::FILE* out) : label_(std::move(label)), out_(out) {}
  void OnNodeDone(const NodeObservation& n, size_t done, size_t total) override;

 private:
  std::string label_;
  std::FILE* out_;
  size_t failed_ = 0;
};

}  // namespace plumb::plans
