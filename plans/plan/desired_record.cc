#include "plans/plan/desired_record.h"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "inventory/node_pattern.h"
#include "plans/core/digest.h"
#include "plans/plan/keys.h"

namespace plumb::plans {
namespace {

using nlohmann::json;

// Indexes of the waivers whose `nodes` names `node`, read as WaiverSet reads them (no groups).
std::vector<size_t> WaiversNaming(const std::vector<inventory::NodePattern>& patterns,
                                  const std::string& node) {
  std::vector<size_t> out;
  for (size_t i = 0; i < patterns.size(); ++i)
    if (patterns[i].Matches(node)) out.push_back(i);
  return out;
}

json ImageOf(const inventory::NodeDesired& nd, const inventory::Cluster& cluster,
             const std::vector<size_t>& waivers) {
  json w = json::array();
  // keys and expires decide what is left alone; reason and owner do not.
  for (size_t i : waivers)
    w.push_back({{"keys", cluster.waivers[i].keys}, {"expires", cluster.waivers[i].expires}});
  return {{"desired", *nd.desired}, {"rollout", nd.rollout}, {"waivers", std::move(w)}};
}

std::vector<std::string> FilesOf(const inventory::NodeDesired& nd,
                                 const inventory::Cluster& cluster, bool waived) {
  std::set<std::string> files = {"inventory.yaml"};
  if (auto s = cluster.stacks.find(nd.stack); s != cluster.stacks.end() && !s->second.file.empty())
    files.insert(s->second.file);
  if (auto r = cluster.rollouts.find(nd.rollout);
      r != cluster.rollouts.end() && !r->second.file.empty())
    files.insert(r->second.file);
  for (const auto& [pointer, where] : *nd.origins)
    if (!where.file.empty()) files.insert(where.file);
  if (waived) files.insert("waivers.yaml");
  return {files.begin(), files.end()};
}

// The value at `pointer`, or null when absent (a pointer through a scalar included).
json At(const json& doc, const std::string& pointer) {
  try {
    const json::json_pointer ptr(pointer);
    return doc.contains(ptr) ? doc.at(ptr) : json();
  } catch (const std::exception&) {
    return json();
  }
}

std::string Show(const json& v) {
  if (v.is_null()) return "(absent)";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

json DesiredImage(const inventory::NodeDesired& nd, const inventory::Cluster& cluster) {
  std::vector<inventory::NodePattern> patterns;
  for (const inventory::Waiver& w : cluster.waivers) patterns.emplace_back(w.nodes);
  return ImageOf(nd, cluster, WaiversNaming(patterns, nd.node));
}

std::vector<std::string> DesiredFiles(const inventory::NodeDesired& nd,
                                      const inventory::Cluster& cluster) {
  std::vector<inventory::NodePattern> patterns;
  for (const inventory::Waiver& w : cluster.waivers) patterns.emplace_back(w.nodes);
  return FilesOf(nd, cluster, !WaiversNaming(patterns, nd.node).empty());
}

void RecordDesiredState(Plan& plan, const inventory::Cluster& cluster,
                        const DesiredByNode& desired, const inventory::FileSource* files) {
  std::vector<inventory::NodePattern> patterns;
  for (const inventory::Waiver& w : cluster.waivers) patterns.emplace_back(w.nodes);
  // Nodes in the same groups share their merged values (inventory::Shared): one hash for all.
  using Key = std::tuple<const void*, const void*, std::string, std::vector<size_t>>;
  std::map<Key, std::string> digest_of;
  std::set<std::string> all_files;
  for (NodePlan& n : plan.nodes) {
    auto it = desired.find(n.node);
    if (it == desired.end()) continue;   // CheckPlanAgainstCommit names such a node
    const inventory::NodeDesired& nd = it->second;
    std::vector<size_t> waivers = WaiversNaming(patterns, n.node);
    Key key{nd.desired.Id(), nd.origins.Id(), nd.rollout, waivers};
    auto cached = digest_of.find(key);
    if (cached != digest_of.end()) {
      n.desired_digest = cached->second;
      continue;
    }
    json image = ImageOf(nd, cluster, waivers);
    std::string digest = JsonDigest(image);
    digest_of.emplace(std::move(key), digest);
    n.desired_digest = digest;
    DesiredState& state = plan.desired_states[digest];
    std::vector<std::string> from = FilesOf(nd, cluster, !waivers.empty());
    if (state.image.is_null()) {
      state.image = std::move(image);
      state.files = from;
    } else {   // equal values from other files (two stacks alike): name every file
      std::set<std::string> merged(state.files.begin(), state.files.end());
      merged.insert(from.begin(), from.end());
      state.files.assign(merged.begin(), merged.end());
    }
    all_files.insert(from.begin(), from.end());
  }
  if (!files) return;
  for (const std::string& path : all_files) {
    auto text = files->Read(path);
    if (text.ok() && text->has_value()) plan.desired_files[path] = "sha256:" + Sha256Hex(**text);
  }
}

std::vector<std::string> ImageDifferences(const json& planned, const json& now) {
  std::vector<std::string> out;
  auto member = [](const json& image, const char* key) {
    return image.is_object() && image.contains(key) ? image.at(key) : json();
  };
  const json a = member(planned, "desired"), b = member(now, "desired");
  std::set<std::string> pointers;
  for (const std::string& p : LeafPointers(a)) pointers.insert(p);
  for (const std::string& p : LeafPointers(b)) pointers.insert(p);
  for (const std::string& p : pointers) {
    const json va = At(a, p), vb = At(b, p);
    if (va != vb) out.push_back(fmt::format("{}: {} -> {}", schemas::PointerToKey(p), Show(va), Show(vb)));
  }
  for (const char* key : {"rollout", "waivers"})
    if (member(planned, key) != member(now, key))
      out.push_back(fmt::format("{}: {} -> {}", key, Show(member(planned, key)), Show(member(now, key))));
  return out;
}

}  // namespace plumb::plans
