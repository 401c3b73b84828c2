// `plumb watch`'s flags as the Watcher's options.
#include <doctest/doctest.h>

#include "plans/watch/watch_flags.h"

using namespace plumb;
using namespace std::chrono_literals;

namespace {

class FlagsModule final : public modules::Module {
 public:
  FlagsModule(std::string name, bool health) : name_(std::move(name)) {
    info_.name = name_;
    if (health) info_.kind = modules::ModuleInfo::Kind::kHealth;
  }
  const modules::ModuleInfo& Info() const override { return info_; }
  std::vector<modules::Action> Diff(const nlohmann::json&, const modules::Facts&) const override {
    return {};
  }

 private:
  std::string name_;
  modules::ModuleInfo info_;
};

}  // namespace

TEST_CASE("watch flags: durations in any form, --once is one round with every node at once") {
  plans::watch::WatchFlags f;
  f.interval = "5m";
  f.ref_poll = "30";   // plain seconds
  f.spread = 0.5;
  f.rounds = 3;
  f.limit = "@h100";
  auto o = plans::watch::WatchOptionsFrom(f);
  REQUIRE(o.ok());
  CHECK(o->interval == 300s);
  CHECK(o->ref_poll == 30s);
  CHECK(o->spread == 0.5);
  CHECK(o->rounds == 3);
  CHECK(o->limit == "@h100");
  f.once = true;
  o = plans::watch::WatchOptionsFrom(f);
  REQUIRE(o.ok());
  CHECK(o->rounds == 1);
  CHECK(o->spread == 0.0);
}

TEST_CASE("watch flags: what is out of range is refused, naming the flags") {
  plans::watch::WatchFlags f;
  SUBCASE("an interval under a second") { f.interval = "0s"; }
  SUBCASE("a ref poll that is not a duration") { f.ref_poll = "soon"; }
  SUBCASE("fanout 0") { f.fanout = 0; }
  SUBCASE("negative rounds") { f.rounds = -1; }
  SUBCASE("spread over 1") { f.spread = 1.5; }
  auto o = plans::watch::WatchOptionsFrom(f);
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().code == "watch.flags");
  CHECK(o.error().message.find("--") == 0);
}

TEST_CASE("watch flags: a watch follows pins, not the health modules") {
  FlagsModule kernel("kernel", false), gpu("gpu_health", true), sysctl("sysctl", false);
  auto m = plans::watch::WatchedModules({&kernel, &gpu, &sysctl});
  REQUIRE(m.size() == 2);
  CHECK(m[0] == &kernel);
  CHECK(m[1] == &sysctl);
}
