#include "plans/session/local_apply_world.h"

#include <cstdio>
#include <iostream>

#include "inventory/load.h"
#include "plans/core/command_output.h"
#include "plans/core/file_text.h"
#include "plans/plan/plan_json.h"

namespace plumb::plans {

Result<Plan> LocalApplyWorld::ReadPlanFile(const std::string& path) {
  std::optional<std::string> text = ReadFileText(path);
  if (!text) return Diagnostic::Error("apply.plan", "cannot read plan file " + path);
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return Diagnostic::Error("apply.plan", path + " is not JSON");
  return PlanFromJson(j);
}

Result<std::string> LocalApplyWorld::ResolveCommit(const std::string& repo, const std::string& ref) {
  return inventory::ResolveCommit(repo, ref);
}

Status LocalApplyWorld::Write(const std::string& path, const std::string& text) {
  return WriteTextTo(path, std::cout, text);
}

void LocalApplyWorld::Err(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

void LocalApplyWorld::Out(const std::string& text) { std::fputs(text.c_str(), stdout); }

std::chrono::system_clock::time_point LocalApplyWorld::Now() {
  return std::chrono::system_clock::now();
}

}  // namespace plumb::plans
