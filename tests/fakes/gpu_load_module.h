#pragma once
/// For `plumb health` tests: an on-demand health module that loads every GPU (like dcgm). The
/// node prints 1 (a real /bin/sh runs its check script); it passes when that is at most
/// /health/load/max. And a ShellFactory of local /bin/sh shells that counts what it opened
/// (atomically: the health run opens shells from its worker threads).
#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/check_result.h"
#include "modules/module.h"
#include "modules/probe_script.h"
#include "modules/transport/local_shell.h"
#include "plans/observe/gather.h"

namespace plumb::fakes {

class GpuLoadModule final : public modules::Module {
 public:
  GpuLoadModule() {
    info_.name = "load";
    info_.owns = {"/health/load"};
    info_.kind = modules::ModuleInfo::Kind::kHealth;
    info_.on_demand = true;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::string CheckScript(const nlohmann::json&) const override { return "plumb_run value printf '%s' 1"; }
  Result<modules::Facts> ParseProbe(std::string_view out, int) const override {
    auto parts = modules::ParseFramedParts(out);
    if (!parts) return parts.error();
    const modules::ProbePart* p = modules::FindPart(*parts, "value");
    if (!p) return Diagnostic::Error("probe.load", "no value");
    return nlohmann::json{{"value", std::stoi(p->text)}};
  }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override {
    return {};
  }
  std::vector<modules::CheckResult> Checks(const nlohmann::json& desired,
                                           const modules::Facts& facts) const override {
    const int max = desired["health"]["load"].value("max", 0);
    const int v = facts.value("value", -1);
    return {{"load", "load.value", "load", "GPU 0",
             v <= max ? modules::CheckStatus::kPass : modules::CheckStatus::kFail, v, {{"max", max}}, ""}};
  }

 private:
  modules::ModuleInfo info_;
};

struct LocalShells final : plans::ShellFactory {
  std::unique_ptr<transport::Shell> Open(const inventory::Node&) override {
    ++opened;
    return std::make_unique<transport::LocalShell>();
  }
  std::atomic<int> opened{0};
};

}  // namespace plumb::fakes
