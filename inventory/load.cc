#include "inventory/load.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <set>

#include <fmt/format.h>

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

constexpr size_t kMaxFileBytes = 4 << 20;  // a cluster file is kilobytes; refuse absurd ones

std::string Str(const json& o, const char* k) {
  if (!o.is_object()) return {};
  auto it = o.find(k);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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
  auto d = ParseDuration(Str(o, k));
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
    if (!inventory_) return;
    CheckNodes();
    CheckGroups();
    ResolveNodes();
    CheckRollouts();
    CheckWaivers();
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
                                    Location{path, 0, 0}));
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
    c.name = Str(j, "cluster");
    const json& ssh = Obj(Obj(j, "defaults"), "ssh");
    if (auto u = Str(ssh, "user"); !u.empty()) c.ssh.user = u;
    if (auto p = Int(ssh, "port")) c.ssh.port = static_cast<int>(*p);
    c.ssh.known_hosts = Str(ssh, "known_hosts");
    c.ssh.identity = Str(ssh, "identity");
    c.ssh.connect_timeout_s = Seconds(ssh, "connect_timeout", c.ssh.connect_timeout_s);
    c.ssh.command_timeout_s = Seconds(ssh, "command_timeout", c.ssh.command_timeout_s);
    const json& bmc = Obj(Obj(j, "defaults"), "bmc");
    c.bmc.ca = Str(bmc, "ca");
    c.bmc.fingerprint = Str(bmc, "fingerprint");
    c.bmc.credentials = Str(bmc, "credentials");

    if (auto nodes = j.find("nodes"); j.is_object() && nodes != j.end() && nodes->is_array()) {
      for (size_t i = 0; i < nodes->size(); ++i) {
        const json& n = (*nodes)[i];
        std::string ptr = PointerAppend("/nodes", i);
        Node node;
        node.name = Str(n, "name");
        node.address = Str(n, "address");
        if (auto p = Int(n, "ssh_port")) node.ssh_port = static_cast<int>(*p);
        node.bmc = Str(n, "bmc");
        node.rack = Str(n, "rack");
        node.leaf = Str(n, "leaf");
        node.nvlink_domain = Str(n, "nvlink_domain");
        node.groups = Strings(n, "groups");
        for (auto it = Obj(n, "labels").begin(); it != Obj(n, "labels").end(); ++it) {
          if (it->is_string()) node.labels[it.key()] = it->get<std::string>();
        }
        node.where = At(*inventory_, ptr);
        node_ptrs_.push_back(ptr);
        c.nodes.push_back(std::move(node));
      }
    }
    const json& groups = Obj(j, "groups");
    for (auto it = groups.begin(); it != groups.end(); ++it) {
      std::string ptr = PointerAppend("/groups", it.key());
      Group g;
      g.name = it.key();
      g.parents = Strings(it.value(), "parents");
      g.stack = Str(it.value(), "stack");
      g.rollout = Str(it.value(), "rollout");
      g.where = inventory_->marks.KeyAt(ptr);
      if (auto o = it.value().find("overrides"); it->is_object() && o != it->end() && o->is_object()) {
        g.overrides = *o;
        std::string base = PointerAppend(ptr, "overrides");
        CollectLeaves(*o, base, base, inventory_->marks, g.override_origins);
      }
      c.groups[g.name] = std::move(g);
    }
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
    }
    cluster().stacks[name] = std::move(s);
  }

  void AddRollout(const std::string& name, YamlDocument& doc) {
    const json& j = doc.json;
    RolloutPolicy r;
    r.name = name;
    r.file = doc.file;
    r.where = Location{doc.file, 1, 1};
    const json& drain = Obj(j, "drain");
    std::string sched = Str(drain, "scheduler");
    r.scheduler = sched == "kubernetes" ? DrainScheduler::kKubernetes
                  : sched == "none"     ? DrainScheduler::kNone
                                        : DrainScheduler::kSlurm;
    r.drain_timeout_s = Seconds(drain, "timeout", r.drain_timeout_s);
    if (auto n = Int(j, "max_unavailable")) {
      r.max_unavailable_count = static_cast<int>(*n);
    } else if (auto pct = Str(j, "max_unavailable"); !pct.empty() && pct.back() == '%') {
      auto v = ParseDotted(pct.substr(0, pct.size() - 1));
      if (v && v->size() == 1) {
        r.max_unavailable_count = static_cast<int>((*v)[0]);
        r.max_unavailable_is_percent = true;
      }
    }
    const json& fd = Obj(j, "failure_domain");
    r.domain_by = Str(fd, "by");
    r.domain_mode = Str(fd, "mode") == "aligned" ? DomainMode::kAligned : DomainMode::kSpread;
    if (auto n = Int(fd, "at_once")) r.domain_at_once = static_cast<int>(*n);
    if (auto n = Int(j, "canary")) r.canary = static_cast<int>(*n);
    if (auto n = Int(j, "max_failures")) r.max_failures = static_cast<int>(*n);
    r.health = Strings(j, "health");
    r.health_timeout_s = Seconds(j, "health_timeout", r.health_timeout_s);
    const json& w = Obj(j, "window");
    r.window_cron = Str(w, "cron");
    r.window_duration_s = Seconds(w, "duration", 0);
    rollout_docs_[name] = doc.marks;
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
      Waiver waiver{Str(w, "nodes"), Str(w, "keys"), Str(w, "reason"), Str(w, "owner"),
                    Str(w, "expires"), doc->marks.At(PointerAppend("/waivers", i))};
      cluster().waivers.push_back(std::move(waiver));
    }
  }

  // Duplicate names, addresses and BMC endpoints; groups a node names that do not exist.
  void CheckNodes() {
    std::map<std::string, const Node*> names, addresses, bmcs;
    std::vector<std::string> group_names;
    for (const auto& [g, _] : cluster().groups) group_names.push_back(g);
    for (size_t i = 0; i < cluster().nodes.size(); ++i) {
      const Node& n = cluster().nodes[i];
      const std::string& ptr = node_ptrs_[i];
      auto dup = [&](std::map<std::string, const Node*>& seen, const std::string& value,
                     const char* field, const char* what) {
        if (value.empty()) return;
        auto [it, fresh] = seen.emplace(value, &n);
        if (fresh) return;
        std::string p = PointerAppend(ptr, field);
        diags().Add(Diagnostic::Error(
            fmt::format("inventory.duplicate-{}", field),
            fmt::format("duplicate {} '{}'", what, schemas::Printable(value)),
            At(*inventory_, p), schemas::KeyPath(p, inventory_->json),
            fmt::format("node '{}' at line {} already has it; each node needs its own",
                        it->second->name, it->second->where.line)));
      };
      dup(names, n.name, "name", "node name");
      dup(addresses, n.address, "address", "node address");
      dup(bmcs, n.bmc, "bmc", "BMC endpoint");
      for (size_t k = 0; k < n.groups.size(); ++k) {
        if (cluster().groups.count(n.groups[k])) continue;
        std::string p = PointerAppend(PointerAppend(ptr, "groups"), k);
        diags().Add(Diagnostic::Error(
            "inventory.unknown-group", fmt::format("unknown group '{}'", n.groups[k]),
            At(*inventory_, p), schemas::KeyPath(p, inventory_->json),
            UnknownHint(n.groups[k], group_names, "define it under groups:")));
      }
    }
  }

  std::string UnknownHint(const std::string& word, const std::vector<std::string>& known,
                          const std::string& otherwise) {
    std::string best = schemas::DidYouMean(word, known);
    if (!best.empty()) return fmt::format("did you mean '{}'?", best);
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    return list.empty() ? otherwise : fmt::format("{} (known: {})", otherwise, list);
  }

  // Unknown parents, stacks and rollouts; cycles in parents (each reported once, as a path).
  void CheckGroups() {
    std::vector<std::string> group_names, stack_names, rollout_names;
    for (const auto& [g, _] : cluster().groups) group_names.push_back(g);
    for (const auto& [s, _] : cluster().stacks) stack_names.push_back(s);
    for (const auto& [r, _] : cluster().rollouts) rollout_names.push_back(r);
    for (const auto& [name, g] : cluster().groups) {
      std::string ptr = PointerAppend("/groups", name);
      for (size_t k = 0; k < g.parents.size(); ++k) {
        if (cluster().groups.count(g.parents[k])) continue;
        std::string p = PointerAppend(PointerAppend(ptr, "parents"), k);
        diags().Add(Diagnostic::Error(
            "inventory.unknown-group", fmt::format("unknown parent group '{}'", g.parents[k]),
            At(*inventory_, p), schemas::KeyPath(p, inventory_->json),
            UnknownHint(g.parents[k], group_names, "define it under groups:")));
      }
      if (!g.stack.empty() && !cluster().stacks.count(g.stack)) {
        std::string p = PointerAppend(ptr, "stack");
        diags().Add(Diagnostic::Error(
            "inventory.unknown-stack", fmt::format("unknown stack '{}'", g.stack),
            At(*inventory_, p), schemas::KeyPath(p, inventory_->json),
            UnknownHint(g.stack, stack_names,
                        fmt::format("there is no stacks/{}.yaml", g.stack))));
      }
      if (!g.rollout.empty() && !cluster().rollouts.count(g.rollout)) {
        std::string p = PointerAppend(ptr, "rollout");
        diags().Add(Diagnostic::Error(
            "inventory.unknown-rollout", fmt::format("unknown rollout policy '{}'", g.rollout),
            At(*inventory_, p), schemas::KeyPath(p, inventory_->json),
            UnknownHint(g.rollout, rollout_names,
                        fmt::format("there is no rollouts/{}.yaml", g.rollout))));
      }
    }
    // Cycles: depth-first search with colours; each cycle is reported at its first group.
    std::map<std::string, int> colour;  // 0 new, 1 on the path, 2 done
    std::vector<std::string> path;
    std::set<std::string> reported;
    std::function<void(const std::string&)> dfs = [&](const std::string& g) {
      colour[g] = 1;
      path.push_back(g);
      for (const auto& p : cluster().groups.at(g).parents) {
        if (!cluster().groups.count(p)) continue;
        if (colour[p] == 1) {
          auto start = std::find(path.begin(), path.end(), p);
          std::vector<std::string> cyc(start, path.end());
          std::vector<std::string> canon = cyc;
          std::sort(canon.begin(), canon.end());
          std::string key;
          for (const auto& c : canon) key += c + ",";
          if (!reported.insert(key).second) continue;
          std::string shown;
          for (const auto& c : cyc) shown += c + " -> ";
          shown += p;
          std::string at = PointerAppend("/groups", cyc.back());
          diags().Add(Diagnostic::Error(
              "inventory.group-cycle", fmt::format("groups inherit in a cycle: {}", shown),
              inventory_->marks.KeyAt(PointerAppend(at, "parents")),
              schemas::KeyPath(PointerAppend(at, "parents"), inventory_->json),
              "a group cannot be its own ancestor; remove one of these parents"));
        } else if (colour[p] == 0) {
          dfs(p);
        }
      }
      path.pop_back();
      colour[g] = 2;
    };
    for (const auto& [g, _] : cluster().groups) {
      if (colour[g] == 0) dfs(g);
    }
  }

  void ResolveNodes() {
    std::set<std::string> seen;
    for (size_t i = 0; i < cluster().nodes.size(); ++i) {
      const Node& n = cluster().nodes[i];
      if (n.name.empty() || !seen.insert(n.name).second) continue;
      NodeDesired nd = ResolveNode(cluster(), n);
      bool unknown_group = std::any_of(n.groups.begin(), n.groups.end(), [&](const auto& g) {
        return !cluster().groups.count(g);
      });
      // With an unknown group the node's stack is unknowable; that error is already there.
      if (nd.stack.empty() && !unknown_group) {
        std::string gl;
        for (const auto& g : n.groups) gl += (gl.empty() ? "" : ", ") + g;
        diags().Add(Diagnostic::Error(
            "inventory.no-stack", fmt::format("node '{}' gets no stack", n.name), n.where,
            schemas::KeyPath(node_ptrs_[i], inventory_->json),
            n.groups.empty()
                ? std::string("give it groups: [...] with a group that sets stack: <name>")
                : fmt::format("none of its groups ({}) or their parents sets stack: <name>", gl)));
      }
      out_.desired[n.name] = std::move(nd);
    }
  }

  // failure_domain.by must name something the nodes carry.
  void CheckRollouts() {
    for (const auto& [name, r] : cluster().rollouts) {
      if (r.domain_by.empty()) continue;
      size_t missing = 0;
      std::string example;
      for (const auto& n : cluster().nodes) {
        if (n.Domain(r.domain_by).empty()) {
          if (missing++ == 0) example = n.name;
        }
      }
      if (missing == 0) continue;
      const Marks& marks = rollout_docs_[name];
      std::string p = "/failure_domain/by";
      bool known = r.domain_by == "rack" || r.domain_by == "leaf" || r.domain_by == "nvlink_domain";
      if (missing == cluster().nodes.size() && !known) {
        diags().Add(Diagnostic::Error(
            "rollout.unknown-domain",
            fmt::format("failure domain '{}' is not rack, leaf, nvlink_domain or a label any node has",
                        r.domain_by),
            marks.At(p), "failure_domain.by",
            schemas::SuggestHint(r.domain_by, {"rack", "leaf", "nvlink_domain"})));
      } else {
        diags().Add(Diagnostic::Warning(
            "rollout.domain-missing",
            fmt::format("{} of {} nodes have no '{}' (e.g. {}); each counts as its own domain",
                        missing, cluster().nodes.size(), r.domain_by, example),
            marks.At(p), "failure_domain.by", "set it on every node in inventory.yaml"));
      }
    }
  }

  // Waivers: a real calendar date; expired ones warn (they no longer excuse anything); a glob
  // that matches no node warns (probably a typo).
  void CheckWaivers() {
    using namespace std::chrono;
    const year_month_day today{floor<days>(system_clock::now())};
    for (const auto& w : cluster().waivers) {
      bool shaped = w.expires.size() == 10 && w.expires[4] == '-' && w.expires[7] == '-' &&
                    std::all_of(w.expires.begin(), w.expires.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; });
      if (shaped) {  // else the schema already said what is wrong
        year_month_day exp{year{std::stoi(w.expires.substr(0, 4))},
                           month{static_cast<unsigned>(std::stoi(w.expires.substr(5, 2)))},
                           day{static_cast<unsigned>(std::stoi(w.expires.substr(8, 2)))}};
        if (!exp.ok()) {
          diags().Add(Diagnostic::Error("waivers.bad-date",
                                        fmt::format("'{}' is not a calendar date", w.expires),
                                        w.where, "expires", "write YYYY-MM-DD, e.g. 2026-12-31"));
        } else if (sys_days{exp} < sys_days{today}) {
          diags().Add(Diagnostic::Warning(
              "waivers.expired",
              fmt::format("waiver for '{}' on '{}' expired on {}", w.nodes, w.keys, w.expires),
              w.where, "expires", "renew it with a new date and reason, or remove it"));
        }
      }
      if (w.nodes.empty()) continue;
      bool any = false;
      for (const auto& n : cluster().nodes) {
        any |= fnmatch(w.nodes.c_str(), n.name.c_str(), 0) == 0;
      }
      if (!any) {
        diags().Add(Diagnostic::Warning(
            "waivers.no-match", fmt::format("waiver for '{}' matches no node", w.nodes), w.where,
            "nodes", "check the glob against the node names in inventory.yaml"));
      }
    }
  }

  const FileSource& files_;
  LoadedCluster& out_;
  std::unique_ptr<YamlDocument> inventory_;
  std::vector<std::string> node_ptrs_;
  std::map<std::string, Marks> rollout_docs_;
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
    LoadedCluster out = LoadClusterFrom(DiskSource(options.repo), source);
    Diagnostics all;
    all.Add(std::move(warn));
    all.Append(out.diags);
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
  return LoadClusterFrom(**git, source);
}

}  // namespace plumb::inventory
