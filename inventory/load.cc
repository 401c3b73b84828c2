#include "inventory/load.h"
#include "inventory/trust_policy.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "inventory/checks.h"
#include "inventory/coherence.h"
#include "inventory/git_source.h"
#include "inventory/resolve.h"
#include "inventory/version.h"
#include "schemas/json_pointer.h"
#include "schemas/suggest.h"
#include "schemas/validate.h"
#include "schemas/yaml_json.h"

namespace plumb::inventory {

using nlohmann::json;
using schemas::Marks;
using schemas::PointerAppend;
using schemas::YamlDocument;

namespace {

// A cluster file is kilobytes; an inventory of 100,000 nodes is about 11 MB. Refuse absurd ones
// (a generator gone wrong) before parsing them.
constexpr size_t kMaxFileBytes = 64 << 20;

std::optional<long> Int(const json& o, const char* k) {
  if (!o.is_object()) return std::nullopt;
  auto it = o.find(k);
  if (it == o.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<long>();
}

const json& Obj(const json& o, const char* k) {
  static const json kEmpty = json::object();
  if (!o.is_object()) return kEmpty;
  auto it = o.find(k);
  return it != o.end() && it->is_object() ? *it : kEmpty;
}

std::vector<std::string> Strings(const json& o, const char* k) {
  std::vector<std::string> out;
  if (!o.is_object()) return out;
  auto it = o.find(k);
  if (it == o.end() || !it->is_array()) return out;
  for (const auto& x : *it) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

int Seconds(const json& o, const char* k, int fallback) {
  auto d = ParseDuration(schemas::StringMember(o, k));
  return d ? static_cast<int>(*d) : fallback;
}

// Leaves (non-mappings) of `v` below `pointer`, with their locations, relative to `base`.
void CollectLeaves(const json& v, const std::string& pointer, const std::string& base,
                   const Marks& marks, OriginMap& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      CollectLeaves(it.value(), PointerAppend(pointer, it.key()), base, marks, out);
    }
    return;
  }
  if (v.is_object()) return;
  out[pointer.substr(base.size())] = marks.At(pointer);
}

// "x-..." keys are a place for YAML anchors; they are not desired state.
void StripExtensions(json& pins, OriginMap& origins) {
  if (!pins.is_object()) return;
  for (auto it = pins.begin(); it != pins.end();) {
    if (it.key().rfind("x-", 0) == 0) {
      std::string ptr = PointerAppend("", it.key());
      for (auto o = origins.begin(); o != origins.end();) {
        o = schemas::PointerUnder(o->first, ptr) ? origins.erase(o) : std::next(o);
      }
      it = pins.erase(it);
    } else {
      ++it;
    }
  }
}

class Loader {
 public:
  Loader(const FileSource& files, LoadedCluster& out) : files_(files), out_(out) {}

  void Run() {
    LoadInventory();
    LoadDir("stacks", "stack.schema.json", [this](const std::string& name, YamlDocument& doc) {
      AddStack(name, doc);
    });
    LoadDir("rollouts", "rollout.schema.json", [this](const std::string& name, YamlDocument& doc) {
      AddRollout(name, doc);
    });
    LoadWaivers();
    // policy.yaml judges the commits after this one (plans/trust/commit_trust.h); a broken one is
    // caught here, where it is written, not when it is first needed.
    diags().Append(LoadTrustPolicy(files_).diags);
    if (!inventory_) return;
    docs_.inventory = inventory_.get();
    CheckNodes(cluster(), docs_, diags());
    CheckGroups(cluster(), docs_, diags());
    ResolveNodes();
    CheckRollouts(cluster(), docs_, diags());
    CheckWaivers(cluster(), diags());
    // Coherence compares pins; on files that failed their schema it would only add noise.
    if (!schema_failed_) {
      const auto& rules = BuiltinCompatRules();
      if (rules.ok()) {
        CheckCoherence(*rules, out_.desired, out_.diags);
      } else {
        out_.diags.Add(rules.error());
      }
    }
  }

 private:
  Diagnostics& diags() { return out_.diags; }
  Cluster& cluster() { return out_.cluster; }

  std::optional<YamlDocument> ReadDoc(const std::string& path, bool required) {
    auto text = files_.Read(path);
    if (!text) {
      diags().Add(text.error());
      return std::nullopt;
    }
    if (!text->has_value()) {
      if (required) {
        const Source& s = cluster().source;
        std::string at = s.working_tree ? "in the working tree" : fmt::format("at {}", s.ref);
        diags().Add(Diagnostic::Error(
            "source.missing-inventory", fmt::format("no {} in {} {}", path, s.repo, at),
            Location{path, 0, 0}, {},
            "a cluster repo has inventory.yaml at its top; see examples/minimal"));
      }
      return std::nullopt;
    }
    if ((*text)->size() > kMaxFileBytes) {
      diags().Add(Diagnostic::Error("source.too-large",
                                    fmt::format("{} is {} bytes; plumb reads at most {}", path,
                                                (*text)->size(), kMaxFileBytes),
                                    Location{path, 0, 0}, {},
                                    "a 100,000-node inventory is about 11 MB: is this file generated by mistake?"));
      return std::nullopt;
    }
    size_t before = diags().ErrorCount();
    auto doc = schemas::ParseYaml(**text, path, diags());
    if (diags().ErrorCount() != before) schema_failed_ = true;
    return doc;
  }

  bool Validate(const YamlDocument& doc, std::string_view schema) {
    bool ok = schemas::ValidateDocument(doc, schema, diags());
    if (!ok) schema_failed_ = true;
    return ok;
  }

  Location At(const YamlDocument& doc, const std::string& pointer) { return doc.marks.At(pointer); }

  void LoadInventory() {
    auto doc = ReadDoc("inventory.yaml", true);
    if (!doc) return;
    inventory_ = std::make_unique<YamlDocument>(std::move(*doc));
    Validate(*inventory_, "inventory.schema.json");
    const json& j = inventory_->json;
    Cluster& c = cluster();
    c.name = schemas::StringMember(j, "cluster");
    const json& ssh = Obj(Obj(j, "defaults"), "ssh");
    if (auto u = schemas::StringMember(ssh, "user"); !u.empty()) c.ssh.user = u;
    if (auto p = Int(ssh, "port")) c.ssh.port = static_cast<int>(*p);
    c.ssh.known_hosts = schemas::StringMember(ssh, "known_hosts");
    c.ssh.identity = schemas::StringMember(ssh, "identity");
    c.ssh.connect_timeout_s = Seconds(ssh, "connect_timeout", c.ssh.connect_timeout_s);
    c.ssh.command_timeout_s = Seconds(ssh, "command_timeout", c.ssh.command_timeout_s);
    c.ssh.jump = schemas::StringMember(ssh, "jump");
    const json& bmc = Obj(Obj(j, "defaults"), "bmc");
    c.bmc.ca = schemas::StringMember(bmc, "ca");
    c.bmc.fingerprint = schemas::StringMember(bmc, "fingerprint");
    c.bmc.credentials = schemas::StringMember(bmc, "credentials");

    if (auto nodes = j.find("nodes"); j.is_object() && nodes != j.end() && nodes->is_array()) {
      for (size_t i = 0; i < nodes->size(); ++i) {
        const json& n = (*nodes)[i];
        std::string ptr = PointerAppend("/nodes", i);
        Node node;
        node.name = schemas::StringMember(n, "name");
        node.address = schemas::StringMember(n, "address");
        if (auto p = Int(n, "ssh_port")) node.ssh_port = static_cast<int>(*p);
        node.ssh_jump_own = schemas::StringMember(Obj(n, "ssh"), "jump");
        node.bmc = schemas::StringMember(n, "bmc");
        node.bmc_system = schemas::StringMember(n, "bmc_system");
        node.rack = schemas::StringMember(n, "rack");
        node.leaf = schemas::StringMember(n, "leaf");
        node.nvlink_domain = schemas::StringMember(n, "nvlink_domain");
        node.groups = Strings(n, "groups");
        for (auto it = Obj(n, "labels").begin(); it != Obj(n, "labels").end(); ++it) {
          if (it->is_string()) node.labels[it.key()] = it->get<std::string>();
        }
        node.where = At(*inventory_, ptr);
        docs_.node_pointers.push_back(ptr);
        c.nodes.push_back(std::move(node));
      }
    }
    const json& groups = Obj(j, "groups");
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      std::string ptr = PointerAppend("/groups", it.key());
      Group g;
      g.name = it.key();
      g.parents = Strings(it.value(), "parents");
      g.stack = schemas::StringMember(it.value(), "stack");
      g.rollout = schemas::StringMember(it.value(), "rollout");
      g.ssh_jump = schemas::StringMember(Obj(it.value(), "ssh"), "jump");
      g.where = inventory_->marks.KeyAt(ptr);
      if (auto o = it.value().find("overrides"); it->is_object() && o != it->end() && o->is_object()) {
        g.overrides = *o;
        std::string base = PointerAppend(ptr, "overrides");
        CollectLeaves(*o, base, base, inventory_->marks, g.override_origins);
        StripExtensions(g.overrides, g.override_origins);
      }
      c.groups[g.name] = std::move(g);
    }
    for (Node& n : c.nodes) n.ssh_jump = JumpFor(c, n);
  }

  void LoadDir(const std::string& dir, std::string_view schema,
               const std::function<void(const std::string&, YamlDocument&)>& add) {
    auto names = files_.List(dir);
    if (!names) {
      diags().Add(names.error());
      return;
    }
    for (const auto& file : *names) {
      std::string name;
      for (const char* ext : {".yaml", ".yml"}) {
        std::string e = ext;
        if (file.size() > e.size() && file.compare(file.size() - e.size(), e.size(), e) == 0)
          name = file.substr(0, file.size() - e.size());
      }
      if (name.empty()) continue;  // READMEs and other files may live beside them
      std::string path = dir + "/" + file;
      auto doc = ReadDoc(path, false);
      if (!doc) {
        // Unreadable or not YAML (already reported): still register the name, so references
        // to it do not add a misleading "unknown stack" on top.
        YamlDocument empty;
        empty.file = path;
        empty.json = json::object();
        empty.unreadable = true;   // its own error says why; "pins nothing" would be noise
        add(name, empty);
        continue;
      }
      if (doc->json.is_null()) doc->json = json::object();  // an empty file is an empty stack
      Validate(*doc, schema);
      add(name, *doc);
    }
  }

  void AddStack(const std::string& name, YamlDocument& doc) {
    if (cluster().stacks.count(name)) {
      diags().Add(Diagnostic::Error("inventory.duplicate-stack",
                                    fmt::format("stack '{}' is defined twice (.yaml and .yml)", name),
                                    Location{doc.file, 0, 0}, {}, "keep one of the two files"));
      return;
    }
    Stack s;
    s.name = name;
    s.file = doc.file;
    if (doc.json.is_object()) {
      s.pins = doc.json;
      CollectLeaves(doc.json, "", "", doc.marks, s.origins);
      StripExtensions(s.pins, s.origins);
    }
    if (!doc.unreadable && (!s.pins.is_object() || s.pins.empty()))
      diags().Add(Diagnostic::Warning(
          "inventory.empty-stack", fmt::format("stack '{}' pins nothing", name),
          Location{doc.file, 1, 1}, {},
          "an empty or comment-only file: the nodes on this stack are not checked for anything"));
    cluster().stacks[name] = std::move(s);
  }

  void AddRollout(const std::string& name, YamlDocument& doc) {
    const json& j = doc.json;
    RolloutPolicy r;
    r.name = name;
    r.file = doc.file;
    r.where = Location{doc.file, 1, 1};
    const json& drain = Obj(j, "drain");
    std::string sched = schemas::StringMember(drain, "scheduler");
    r.scheduler = sched == "kubernetes" ? DrainScheduler::kKubernetes
                  : sched == "none"     ? DrainScheduler::kNone
                                        : DrainScheduler::kSlurm;
    r.drain_timeout_s = Seconds(drain, "timeout", r.drain_timeout_s);
    r.scheduler_timeout_s = Seconds(drain, "scheduler_timeout", r.scheduler_timeout_s);
    if (auto n = Int(j, "max_unavailable")) {
      r.max_unavailable_count = static_cast<int>(*n);
    } else if (auto pct = schemas::StringMember(j, "max_unavailable"); !pct.empty() && pct.back() == '%') {
      auto v = ParseDotted(pct.substr(0, pct.size() - 1));
      if (v && v->size() == 1) {
        r.max_unavailable_count = static_cast<int>((*v)[0]);
        r.max_unavailable_is_percent = true;
      }
    }
    const json& fd = Obj(j, "failure_domain");
    r.domain_by = schemas::StringMember(fd, "by");
    r.domain_mode = schemas::StringMember(fd, "mode") == "aligned" ? DomainMode::kAligned : DomainMode::kSpread;
    if (auto n = Int(fd, "at_once")) r.domain_at_once = static_cast<int>(*n);
    if (auto n = Int(j, "canary")) r.canary = static_cast<int>(*n);
    if (auto n = Int(j, "max_failures")) r.max_failures = static_cast<int>(*n);
    r.health = Strings(j, "health");
    r.health_timeout_s = Seconds(j, "health_timeout", r.health_timeout_s);
    if (schemas::StringMember(j, "unhealthy") == "change") r.unhealthy = RolloutPolicy::Unhealthy::kChange;
    const json& w = Obj(j, "window");
    r.window_cron = schemas::StringMember(w, "cron");
    r.window_duration_s = Seconds(w, "duration", 0);
    docs_.rollouts[name] = doc.marks;
    cluster().rollouts[name] = std::move(r);
  }

  void LoadWaivers() {
    auto doc = ReadDoc("waivers.yaml", false);
    if (!doc) return;
    Validate(*doc, "waivers.schema.json");
    auto list = doc->json.is_object() ? doc->json.find("waivers") : doc->json.end();
    if (!doc->json.is_object() || list == doc->json.end() || !list->is_array()) return;
    for (size_t i = 0; i < list->size(); ++i) {
      const json& w = (*list)[i];
      const std::string at = PointerAppend("/waivers", i);
      Waiver waiver;
      waiver.nodes = schemas::StringMember(w, "nodes");
      waiver.keys = schemas::StringMember(w, "keys");
      waiver.reason = schemas::StringMember(w, "reason");
      waiver.owner = schemas::StringMember(w, "owner");
      waiver.expires = schemas::StringMember(w, "expires");
      waiver.where = doc->marks.At(at);
      waiver.index = static_cast<int>(i);
      waiver.expires_at = doc->marks.At(at + "/expires");
      waiver.nodes_at = doc->marks.At(at + "/nodes");
      cluster().waivers.push_back(std::move(waiver));
    }
  }

  void ResolveNodes() {
    std::set<std::string> seen;
    // Groups whose own definition already has an error (a `stak:` typo): "gets no stack" on
    // each of their nodes would only bury the cause under follow-ons.
    std::set<std::string> broken_groups;
    for (const Diagnostic& d : diags().items()) {
      if (d.severity != Severity::kError || d.key_path.rfind("groups.", 0) != 0) continue;
      const std::string rest = d.key_path.substr(7);
      broken_groups.insert(rest.substr(0, rest.find('.')));
    }
    // ResolveNode reads only a node's groups (and its name): nodes with the same groups get
    // the same desired state, merged once and then copied (10,000 nodes in one group:
    // 0.16 s -> 0.11 s).
    std::map<std::vector<std::string>, NodeDesired> by_groups;
    for (size_t i = 0; i < cluster().nodes.size(); ++i) {
      const Node& n = cluster().nodes[i];
      if (n.name.empty() || !seen.insert(n.name).second) continue;
      auto merged = by_groups.find(n.groups);
      if (merged == by_groups.end())
        merged = by_groups.emplace(n.groups, ResolveNode(cluster(), n)).first;
      NodeDesired nd = merged->second;
      nd.node = n.name;
      bool unknown_group = std::any_of(n.groups.begin(), n.groups.end(), [&](const auto& g) {
        return !cluster().groups.count(g);
      });
      // With an unknown group the node's stack is unknowable; that error is already there.
      const bool broken = std::any_of(nd.groups.begin(), nd.groups.end(), [&](const auto& g) {
        return broken_groups.count(g) > 0;
      });
      // A node must get a stack (what it runs) and a rollout policy (how apply changes it:
      // plan cannot batch a node without one).
      auto missing = [&](const char* key, const char* noun, const char* more) {
        std::string gl;
        for (const auto& g : n.groups) gl += (gl.empty() ? "" : ", ") + g;
        diags().Add(Diagnostic::Error(
            fmt::format("inventory.no-{}", key), fmt::format("node '{}' gets no {}", n.name, noun),
            n.where, schemas::KeyPath(docs_.node_pointers[i], inventory_->json),
            n.groups.empty()
                ? fmt::format("give it groups: [...] with a group that sets {}: <name>{}", key, more)
                : fmt::format("none of its groups ({}) or their parents sets {}: <name>{}", gl, key,
                              more)));
      };
      if (!unknown_group && !broken) {
        if (nd.stack.empty()) missing("stack", "stack", "");
        if (nd.rollout.empty()) missing("rollout", "rollout policy", " (rollouts/<name>.yaml)");
      }
      out_.desired[n.name] = std::move(nd);
    }
  }

  const FileSource& files_;
  LoadedCluster& out_;
  std::unique_ptr<YamlDocument> inventory_;
  LoadedDocs docs_;
  bool schema_failed_ = false;
};

}  // namespace

LoadedCluster LoadClusterFrom(const FileSource& files, const Source& source) {
  LoadedCluster out;
  out.cluster.source = source;
  try {
    Loader(files, out).Run();
  } catch (const std::exception& e) {
    // Nothing above should throw; if a library does, it is still a diagnostic, not a crash.
    out.diags.Add(Diagnostic::Error("inventory.internal",
                                    fmt::format("unexpected error while loading: {}", e.what())));
  }
  out.diags.Sort();
  return out;
}

Result<std::string> ReadRepoFile(const LoadedCluster& loaded, const std::string& path,
                                 const std::string& key) {
  std::string where = key.empty() ? std::string() : fmt::format(" (named by {})", key);
  if (path.empty()) {
    return Diagnostic::Error("source.missing-file", "empty file path" + where);
  }
  Result<std::optional<std::string>> text = std::optional<std::string>();
  if (path[0] == '/') {
    text = DiskSource("/").Read(path.substr(1));
  } else if (loaded.files) {
    text = loaded.files->Read(path);
  }
  if (!text) return text.error();
  if (!text->has_value()) {
    const Source& s = loaded.cluster.source;
    std::string at = path[0] == '/' ? "on this machine"
                     : s.working_tree ? "in the working tree"
                                      : fmt::format("in {} at {}", s.repo, s.commit.substr(0, 12));
    return Diagnostic::Error("source.missing-file", fmt::format("no file {} {}{}", path, at, where),
                             {}, key, "commit the file, or give an absolute path");
  }
  return std::move(**text);
}

LoadedCluster LoadCluster(const LoadOptions& options) {
  Source source{options.repo, options.ref, "", options.working_tree};
  if (options.working_tree) {
    Diagnostic warn = Diagnostic::Warning(
        "source.working-tree",
        fmt::format("working-tree mode: reading uncommitted files in {}, not a commit",
                    options.repo),
        {}, {}, "fine for validate and plan; apply only what is committed and reviewed");
    if (IsGitRepo(options.repo)) {
      auto head = ResolveCommit(options.repo, "HEAD");
      if (head) source.commit = *head;
    }
    source.ref = "working-tree";
    auto disk = std::make_shared<DiskSource>(options.repo, /*repo=*/true);
    LoadedCluster out = LoadClusterFrom(*disk, source);
    out.files = disk;
    Diagnostics all;
    all.Add(std::move(warn));
    all.Append(out.diags);
    if (options.is_checked) CheckPinnedKeys(out.cluster, options.is_checked, all);
    out.diags = std::move(all);
    return out;
  }
  auto git = GitTreeSource::Open(options.repo, options.ref);
  if (!git) {
    LoadedCluster out;
    out.cluster.source = source;
    out.diags.Add(git.error());
    return out;
  }
  source.commit = (*git)->commit();
  std::shared_ptr<GitTreeSource> tree = std::move(*git);
  LoadedCluster out = LoadClusterFrom(*tree, source);
  out.files = tree;
  if (options.is_checked) {
    CheckPinnedKeys(out.cluster, options.is_checked, out.diags);
    out.diags.Sort();
  }
  return out;
}

}  // namespace plumb::inventory
