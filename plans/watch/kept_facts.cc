#include "plans/watch/kept_facts.h"

namespace plumb::plans::watch {

KeptFacts KeptFacts::From(NodeObservation&& obs) {
  NodeFacts f = plans::ToNodeFacts(std::move(obs));
  KeptFacts k;
  k.readable = f.readable;
  k.unreadable_reason = std::move(f.unreadable_reason);
  if (f.readable) k.facts_cbor = nlohmann::json::to_cbor(f.facts);
  k.module_errors = std::move(f.module_errors);
  k.facts_digest = std::move(f.facts_digest);
  return k;
}

NodeFacts KeptFacts::ToNodeFacts() const {
  NodeFacts f;
  f.readable = readable;
  f.unreadable_reason = unreadable_reason;
  // Written by to_cbor above: it reads back (a failure would be a bug; the node then shows as
  // read with no facts, so its pinned modules make it unreadable rather than in sync).
  if (!facts_cbor.empty())
    f.facts = nlohmann::json::from_cbor(facts_cbor, true, false);
  if (f.facts.is_discarded() || !f.facts.is_object()) f.facts = nlohmann::json::object();
  f.module_errors = module_errors;
  f.facts_digest = facts_digest;
  return f;
}

std::string BootIdOf(const NodeObservation& obs, const std::vector<const modules::Module*>& modules) {
  for (const modules::Module* m : modules) {
    const std::string_view key = m->Info().boot_id_key;
    if (key.empty()) continue;
    auto it = obs.facts.find(std::string(m->Name()));
    if (it == obs.facts.end() || !it->second.ok()) continue;
    const nlohmann::json& k = it->second.value();
    auto b = k.find(std::string(key));
    if (b != k.end() && b->is_string()) return b->get<std::string>();
  }
  return {};
}

}  // namespace plumb::plans::watch
