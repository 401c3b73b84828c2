// Stand-in for inventory::LoadCluster until branch `inventory` lands: reads only what gather
// needs (defaults.ssh, nodes, groups' parents) from inventory.yaml in the working tree.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "cmd/gather_support.h"
#include "plans/gather.h"
#include "plans/probe_sections.h"

namespace plumb::cmd {
namespace {

int Seconds(const YAML::Node& n, int fallback) {
  if (!n) return fallback;
  std::string s = n.as<std::string>();
  int mult = 1;
  if (!s.empty() && std::string("smh").find(s.back()) != std::string::npos) {
    mult = s.back() == 's' ? 1 : s.back() == 'm' ? 60 : 3600;
    s.pop_back();
  }
  return std::stoi(s) * mult;
}

}  // namespace

std::string RepoRoot(const GlobalOptions& g) { return g.repo; }

Result<inventory::Cluster> LoadClusterForGather(const GlobalOptions& g) {
  std::string path = g.repo + "/inventory.yaml";
  try {
    YAML::Node root = YAML::LoadFile(path);
    inventory::Cluster c;
    c.name = root["cluster"].as<std::string>("");
    if (auto ssh = root["defaults"]["ssh"]) {
      c.ssh.user = ssh["user"].as<std::string>(c.ssh.user);
      c.ssh.port = ssh["port"].as<int>(c.ssh.port);
      c.ssh.known_hosts = ssh["known_hosts"].as<std::string>("");
      c.ssh.identity = ssh["identity"].as<std::string>("");
      c.ssh.connect_timeout_s = Seconds(ssh["connect_timeout"], c.ssh.connect_timeout_s);
      c.ssh.command_timeout_s = Seconds(ssh["command_timeout"], c.ssh.command_timeout_s);
    }
    for (const auto& n : root["nodes"]) {
      inventory::Node node;
      node.name = n["name"].as<std::string>();
      node.address = n["address"].as<std::string>();
      if (n["ssh_port"]) node.ssh_port = n["ssh_port"].as<int>();
      if (n["groups"]) node.groups = n["groups"].as<std::vector<std::string>>();
      c.nodes.push_back(std::move(node));
    }
    for (const auto& kv : root["groups"]) {
      inventory::Group gr;
      gr.name = kv.first.as<std::string>();
      if (kv.second["parents"]) gr.parents = kv.second["parents"].as<std::vector<std::string>>();
      c.groups.emplace(gr.name, std::move(gr));
    }
    return c;
  } catch (const std::exception& e) {
    return Diagnostic::Error("inventory.load", fmt::format("{}: {}", path, e.what()));
  }
}

ModuleSet GatherModules() { return {}; }

std::string ProbeScriptFor(const std::vector<const modules::Module*>& modules) {
  return plans::BuildProbeScript(modules, plans::NewNonce());
}

}  // namespace plumb::cmd
