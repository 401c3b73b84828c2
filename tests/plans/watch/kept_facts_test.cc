// KeptFacts: what the watch keeps of a node between reads reads back as the planner's input.
#include <doctest/doctest.h>

#include "modules/registry.h"
#include "plans/watch/kept_facts.h"

using namespace plumb;

TEST_CASE("kept facts: facts, module errors and digest survive the compact form") {
  plans::NodeObservation o;
  o.node = "n1";
  o.reachable = true;
  nlohmann::json kernel = {{"release", "5.15.0"}, {"boot_id", "b1"}, {"manager", "dpkg"}};
  o.facts.emplace("kernel", Result<modules::Facts>(kernel));
  o.facts.emplace("sysctl", Result<modules::Facts>(nlohmann::json{{"values", {{"vm.swappiness", "60"}}}}));
  o.facts.emplace("ofed", Result<modules::Facts>(Diagnostic::Error("probe.ofed", "garbled")));
  o.facts_digest = plans::FactsDigest(o.facts);
  CHECK(plans::watch::BootIdOf(o, modules::AllModules()) == "b1");
  const plans::NodeFacts direct = plans::ToNodeFacts(o);

  plans::watch::KeptFacts k = plans::watch::KeptFacts::From(std::move(o));
  plans::NodeFacts back = k.ToNodeFacts();
  CHECK(back.readable);
  CHECK(back.facts == direct.facts);
  CHECK(back.module_errors == direct.module_errors);
  CHECK(back.module_errors.count("ofed"));
  CHECK(back.facts_digest == direct.facts_digest);
  CHECK(k.facts_cbor.size() < direct.facts.dump().size());
}

TEST_CASE("kept facts: an unreadable observation keeps its reason; no boot id without kernel facts") {
  plans::NodeObservation o;
  o.node = "n1";
  o.error = Diagnostic::Error("ssh.refused", "n1: connection refused");
  CHECK(plans::watch::BootIdOf(o, modules::AllModules()).empty());
  plans::watch::KeptFacts k = plans::watch::KeptFacts::From(std::move(o));
  CHECK_FALSE(k.readable);
  CHECK(k.ToNodeFacts().unreadable_reason == "n1: connection refused");
  CHECK(k.ToNodeFacts().facts.empty());
}
