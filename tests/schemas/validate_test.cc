// Schema validation: a table of bad inputs with the exact diagnostics they must produce, and a
// hostile-value corpus that every field reaching a node must reject.
#include <doctest/doctest.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "schemas/embedded.h"
#include "schemas/validate.h"
#include "schemas/yaml_json.h"

using namespace plumb;
using namespace plumb::schemas;

namespace {

Diagnostics Check(const std::string& schema, const std::string& file, const std::string& yaml) {
  Diagnostics d;
  auto doc = ParseYaml(yaml, file, d);
  REQUIRE_MESSAGE(doc, yaml);
  ValidateDocument(*doc, schema, d);
  d.Sort();
  return d;
}

struct BadInput {
  const char* schema;
  const char* file;
  const char* yaml;
  const char* expected;  // Diagnostics::ToText(), exactly
};

// Columns are 1-based and point at the offending key (unknown/bad keys) or value.
const BadInput kBadInputs[] = {
    {"stack.schema.json", "stacks/h100.yaml", "kernel: 5.15.0\nnvidia:\n  drivr: 550.90.07\n",
     "stacks/h100.yaml:3:3: error: unknown key 'drivr' [key: nvidia.drivr]\n"
     "  hint: did you mean 'driver'?\n"},
    {"stack.schema.json", "stacks/h100.yaml", "nvidia: { driver: 550.90.07, cuda: 12.4 }\n",
     "stacks/h100.yaml:1:36: error: wrong type: expected a CUDA toolkit version like \"12.4.1\" "
     "(quote two-part versions: \"12.4\"), got the number 12.4 [key: nvidia.cuda]\n"
     "  hint: YAML read this as a number; quote it to keep it text: \"12.4\"\n"},
    {"stack.schema.json", "stacks/h100.yaml", "nvidia: { cuda: 12.10 }\n",
     "stacks/h100.yaml:1:17: error: wrong type: expected a CUDA toolkit version like \"12.4.1\" "
     "(quote two-part versions: \"12.4\"), got the number 12.10 [key: nvidia.cuda]\n"
     "  hint: YAML read this as a number; quote it to keep it text: \"12.10\"\n"},
    {"stack.schema.json", "stacks/h100.yaml",
     "packages:\n  datacenter-gpu-manager: \"1:3.3.7; reboot\"\n",
     "stacks/h100.yaml:2:27: error: invalid value \"1:3.3.7; reboot\" "
     "[key: packages.datacenter-gpu-manager]\n"
     "  hint: expected an exact package version like \"1:3.3.7\" or 1.16.2-1; it contains ';', a "
     "shell metacharacter\n"},
    {"stack.schema.json", "stacks/h100.yaml",
     "sysctl:\n  net.core.rmem_max: 1\n  \"vm.swappiness;\": 10\n",
     "stacks/h100.yaml:3:3: error: invalid key \"vm.swappiness;\" [key: sysctl.vm.swappiness;]\n"
     "  hint: expected a sysctl key like net.core.rmem_max; it contains ';', a shell "
     "metacharacter\n"},
    {"stack.schema.json", "stacks/h100.yaml", "fabric:\n  infiniband: { state: ACTVE }\n",
     "stacks/h100.yaml:2:24: error: invalid value \"ACTVE\" [key: fabric.infiniband.state]\n"
     "  hint: did you mean 'ACTIVE'? (one of: ACTIVE, INIT, ARMED, DOWN)\n"},
    {"stack.schema.json", "stacks/h100.yaml", "services:\n  nvidia-persistenced: { enabled: yes }\n",
     "stacks/h100.yaml:2:35: error: wrong type: expected true or false, got the text \"yes\" "
     "[key: services.nvidia-persistenced.enabled]\n"
     "  hint: write true or false (yes, no, on and off are text in YAML 1.2)\n"},
    {"stack.schema.json", "stacks/h100.yaml", "firmware:\n  BMC: \"24.09.17\\nreboot\"\n",
     "stacks/h100.yaml:2:8: error: invalid value \"24.09.17\\nreboot\" [key: firmware.BMC]\n"
     "  hint: expected a firmware version like \"24.09.17\" or \"A47 v2.60\"; it contains the control character "
     "\\n\n"},
    {"stack.schema.json", "stacks/h100.yaml", "kernel: \"--force\"\n",
     "stacks/h100.yaml:1:9: error: invalid value \"--force\" [key: kernel]\n"
     "  hint: expected a kernel release like 5.15.0-119-generic; it starts with '-' (it could be "
     "read as a command option)\n"},
    {"stack.schema.json", "stacks/h100.yaml", "nvidia: 550\n",
     "stacks/h100.yaml:1:9: error: wrong type: expected a mapping with driver, cuda, nccl, "
     "fabricmanager, persistence_mode, got the number 550 [key: nvidia]\n"},
    // Every unknown key of one mapping, not just the first (valijson alone stops at one).
    {"stack.schema.json", "stacks/h100.yaml", "nvidia: { drivr: 1, cudaa: \"2\" }\nofeed: x\n",
     "stacks/h100.yaml:1:11: error: unknown key 'drivr' [key: nvidia.drivr]\n"
     "  hint: did you mean 'driver'?\n"
     "stacks/h100.yaml:1:21: error: unknown key 'cudaa' [key: nvidia.cudaa]\n"
     "  hint: did you mean 'cuda'?\n"
     "stacks/h100.yaml:2:1: error: unknown key 'ofeed' [key: ofeed]\n"
     "  hint: did you mean 'ofed'?\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "max_unavailable: 0\n",
     "rollouts/r.yaml:1:18: error: value 0 is out of range [key: max_unavailable]\n"
     "  hint: must be at least 1\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "max_unavailable: 10 %\n",
     "rollouts/r.yaml:1:18: error: invalid value \"10 %\" [key: max_unavailable]\n"
     "  hint: expected a node count like 4 or a percentage from 1% to 100% like \"10%\"; it contains a space\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "max_unavailable: 150%\n",
     "rollouts/r.yaml:1:18: error: invalid value \"150%\" [key: max_unavailable]\n"
     "  hint: expected a node count like 4 or a percentage from 1% to 100% like \"10%\"\n"},
    {"stack.schema.json", "stacks/s.yaml", "nvidia: { persistence_mode: \"true\" }\n",
     "stacks/s.yaml:1:29: error: wrong type: expected true or false, got the text \"true\" [key: nvidia.persistence_mode]\n"
     "  hint: remove the quotes: true\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "max_failures: \"2\"\n",
     "rollouts/r.yaml:1:15: error: wrong type: expected a whole number, got the text \"2\" [key: max_failures]\n"
     "  hint: remove the quotes: 2\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "max_unavailable: 0%\n",
     "rollouts/r.yaml:1:18: error: invalid value \"0%\" [key: max_unavailable]\n"
     "  hint: expected a node count like 4 or a percentage from 1% to 100% like \"10%\"\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "health: [ \"nvidia-smi -L | tee /tmp/x\" ]\n",
     "rollouts/r.yaml:1:11: error: invalid value \"nvidia-smi -L | tee /tmp/x\" [key: health[0]]\n"
     "  hint: expected a plain command like \"nvidia-smi -L\" (no shell metacharacters; put "
     "pipelines in a script on the node); it contains '|', a shell metacharacter\n"},
    {"rollout.schema.json", "rollouts/r.yaml", "drain: { scheduler: slurmm, timeout: 4 hours }\n",
     "rollouts/r.yaml:1:21: error: invalid value \"slurmm\" [key: drain.scheduler]\n"
     "  hint: did you mean 'slurm'? (one of: slurm, kubernetes, none)\n"
     "rollouts/r.yaml:1:38: error: invalid value \"4 hours\" [key: drain.timeout]\n"
     "  hint: expected a duration like \"90s\", \"10m\" or \"4h\"; it contains a space\n"},
    {"inventory.schema.json", "inventory.yaml", "cluster: pod-a\nnodes:\n  - { name: gpu001 }\n",
     "inventory.yaml:3:5: error: missing required key 'address' [key: nodes[0].address]\n"
     "  hint: add 'address: ...' to this entry\n"},
    {"inventory.schema.json", "inventory.yaml", "cluster: Pod_A\nnodes: []\n",
     "inventory.yaml:1:10: error: invalid value \"Pod_A\" [key: cluster]\n"
     "  hint: expected a cluster name like pod-a (lower case, digits, -)\n"
     "inventory.yaml:2:8: error: list is empty [key: nodes]\n"
     "  hint: expected a list of nodes\n"},
    {"inventory.schema.json", "inventory.yaml", "nodes: [ { name: n1, address: n1.example } ]\n",
     "inventory.yaml:1:1: error: missing required key 'cluster' [key: cluster]\n"
     "  hint: add 'cluster: ...' to this file\n"},
    {"inventory.schema.json", "inventory.yaml",
     "cluster: a\nnodes:\n  - { name: n1, address: n1.example, bmc: http://n1-bmc.example }\n",
     "inventory.yaml:3:43: error: invalid value \"http://n1-bmc.example\" [key: nodes[0].bmc]\n"
     "  hint: expected an https:// BMC URL like https://gpu001-bmc.pod-a.example\n"},
    // A secret typed into the credentials reference is never echoed.
    {"inventory.schema.json", "inventory.yaml",
     "cluster: a\ndefaults:\n  bmc: { credentials: \"admin:hunter2\" }\n"
     "nodes: [ { name: n, address: n.example } ]\n",
     "inventory.yaml:3:23: error: invalid value (not shown: this field must not hold a secret) "
     "[key: defaults.bmc.credentials]\n"
     "  hint: expected a reference to the secret, \"env:VAR\" or \"file:/path\" (never the secret "
     "itself)\n"},
    // Group overrides are checked against the stack schema (a cross-file $ref).
    {"inventory.schema.json", "inventory.yaml",
     "cluster: a\nnodes: [ { name: n, address: n.example } ]\n"
     "groups:\n  g: { overrides: { nvidia: { drvier: x }, kernel: \"$(reboot)\" } }\n",
     "inventory.yaml:4:31: error: unknown key 'drvier' [key: groups.g.overrides.nvidia.drvier]\n"
     "  hint: did you mean 'driver'?\n"
     "inventory.yaml:4:52: error: invalid value \"$(reboot)\" [key: groups.g.overrides.kernel]\n"
     "  hint: expected a kernel release like 5.15.0-119-generic; it contains '$', a shell "
     "metacharacter\n"},
    // Health thresholds: typed and bounded, a wrong one named with its key.
    {"stack.schema.json", "stacks/h100.yaml", "health:\n  dcgm: { level: 7 }\n",
     "stacks/h100.yaml:2:18: error: value 7 is out of range [key: health.dcgm.level]\n"
     "  hint: must be between 1 and 4\n"},
    {"stack.schema.json", "stacks/h100.yaml", "health:\n  nccl_bw: { min_busbw_gbps: fast }\n",
     "stacks/h100.yaml:2:30: error: wrong type: expected a bandwidth in GB/s like 350, got the text \"fast\" "
     "[key: health.nccl_bw.min_busbw_gbps]\n"},
    {"stack.schema.json", "stacks/h100.yaml", "health:\n  nccl_bw: { max_wrong: 0 }\n",
     "stacks/h100.yaml:2:12: error: missing required key 'min_busbw_gbps' [key: health.nccl_bw.min_busbw_gbps]\n"
     "  hint: add 'min_busbw_gbps: ...' to this entry\n"},
    {"stack.schema.json", "stacks/h100.yaml", "health:\n  gpu_health: { forbid_throttle: [hw_slowdwn], forbid_xids: [0] }\n",
     "stacks/h100.yaml:2:35: error: invalid value \"hw_slowdwn\" [key: health.gpu_health.forbid_throttle[0]]\n"
     "  hint: did you mean 'hw_slowdown'? (one of: gpu_idle, applications_clocks_setting, sw_power_cap, "
     "hw_slowdown, sync_boost, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, "
     "display_clock_setting)\n"
     "stacks/h100.yaml:2:62: error: value 0 is out of range [key: health.gpu_health.forbid_xids[0]]\n"
     "  hint: must be between 1 and 1000\n"},
    {"stack.schema.json", "stacks/h100.yaml", "health:\n  ib_health: { max_counters: { SymbolErrorCounter: -1 } }\n  gpu_helth: {}\n",
     "stacks/h100.yaml:2:52: error: value -1 is out of range [key: health.ib_health.max_counters.SymbolErrorCounter]\n"
     "  hint: must be between 0 and 4294967295\n"
     "stacks/h100.yaml:3:3: error: unknown key 'gpu_helth' [key: health.gpu_helth]\n"
     "  hint: did you mean 'gpu_health'?\n"},
    {"waivers.schema.json", "waivers.yaml",
     "waivers:\n  - { nodes: \"gpu*\", keys: \"sysctl.*\", reason: x, owner: alice }\n",
     "waivers.yaml:2:5: error: missing required key 'expires' [key: waivers[0].expires]\n"
     "  hint: add 'expires: ...' to this entry\n"
     "waivers.yaml:2:48: error: value \"x\" is too short [key: waivers[0].reason]\n"
     "  hint: expected why this is waived\n"},
};

}  // namespace

TEST_CASE("schemas are built in, valid JSON, draft-07") {
  for (const char* name : {"inventory.schema.json", "stack.schema.json", "rollout.schema.json",
                           "waivers.schema.json", "policy.schema.json"}) {
    CAPTURE(name);
    const nlohmann::json* s = SchemaJson(name);
    REQUIRE(s != nullptr);
    CHECK((*s)["$schema"] == "http://json-schema.org/draft-07/schema#");
  }
  CHECK(FindEmbedded("rules/compat.yaml"));
  CHECK_FALSE(FindEmbedded("nope.json"));
}

TEST_CASE("every pattern in every schema compiles as an ECMAScript regex") {
  int patterns = 0;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "pattern" && it->is_string()) {
          CAPTURE(it->get<std::string>());
          CHECK_NOTHROW(std::regex(it->get<std::string>()));
          ++patterns;
        }
        walk(it.value());
      }
    } else if (j.is_array()) {
      for (const auto& x : j) walk(x);
    }
  };
  for (const auto& f : EmbeddedFiles()) {
    if (f.name.find(".schema.json") != std::string_view::npos) walk(*SchemaJson(f.name));
  }
  CHECK(patterns > 30);
}

TEST_CASE("bad inputs: exact location, key, message and hint for each") {
  for (const auto& c : kBadInputs) {
    CAPTURE(c.yaml);
    Diagnostics d = Check(c.schema, c.file, c.yaml);
    CHECK(d.ToText() == c.expected);
  }
}

TEST_CASE("the examples' files validate") {
  for (const char* ok : {"kernel: 5.15.0-119-generic\nnvidia: { driver: 550.90.07, cuda: 12.4.1, "
                         "nccl: 2.21.5-1+cuda12.4, fabricmanager: 550.90.07 }\n"
                         "packages: { datacenter-gpu-manager: \"1:3.3.7\" }\n"
                         "sysctl: { net.ipv4.tcp_rmem: \"4096 87380 6291456\", vm.swappiness: 10 }\n"
                         "kernel_modules: { nvidia: { NVreg_EnableStreamMemOPs: \"1\" } }\n",
                         "health:\n"
                         "  dcgm: { level: 4, timeout_s: 7200, fail_on_warn: true }\n"
                         "  gpu_health: { expected_gpus: 8, max_uncorrected_ecc: 0, max_aggregate_uncorrected_ecc: 10,\n"
                         "                require_ecc: true, allow_remap_pending: false, allow_remap_failure: false,\n"
                         "                forbid_xids: [48, 79], forbid_throttle: [hw_slowdown, sw_thermal_slowdown] }\n"
                         "  nccl_bw: { min_busbw_gbps: 350.5, max_wrong: 0, max_bytes: 8G, timeout_s: 600 }\n"
                         "  ib_health: { max_counters: { SymbolErrorCounter: 10, VL15Dropped: 100 } }\n"}) {
    Diagnostics d = Check("stack.schema.json", "s.yaml", ok);
    CHECK_MESSAGE(d.empty(), d.ToText());
  }
}

TEST_CASE("overlong values are refused without running a regex over them") {
  std::string huge(100000, 'a');
  Diagnostics d = Check("stack.schema.json", "s.yaml", "kernel: " + huge + "\n");
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].message == "value is too long (100000 bytes)");
  CHECK(d.items()[0].key_path == "kernel");
}

// ---- hostile values ------------------------------------------------------------------------

namespace {

// One field that reaches a node (as an argument, a file, a URL, a unit name...). @V@ is where the
// hostile text goes, as a YAML double-quoted string; `key` is the key path the error must name
// (a prefix, for fields that are themselves keys).
struct Field {
  const char* schema;
  const char* yaml;
  const char* key;
  const char* prefix = "";  // a valid start, so the hostile part is what must be refused
};

const char* kInv = "cluster: c\nnodes: [ { name: n1, address: n1.example } ]\n";

const Field kFields[] = {
    {"stack.schema.json", "kernel: @V@", "kernel"},
    {"stack.schema.json", "nvidia: { driver: @V@ }", "nvidia.driver"},
    {"stack.schema.json", "nvidia: { cuda: @V@ }", "nvidia.cuda"},
    {"stack.schema.json", "nvidia: { nccl: @V@ }", "nvidia.nccl"},
    {"stack.schema.json", "nvidia: { fabricmanager: @V@ }", "nvidia.fabricmanager"},
    {"stack.schema.json", "ofed: @V@", "ofed"},
    {"stack.schema.json", "packages: { dcgm: @V@ }", "packages.dcgm"},
    {"stack.schema.json", "packages: { @V@: \"1.0\" }", "packages."},
    {"stack.schema.json", "sysctl: { vm.x: @V@ }", "sysctl.vm.x"},
    {"stack.schema.json", "sysctl: { @V@: 1 }", "sysctl."},
    {"stack.schema.json", "services: { @V@: { enabled: true } }", "services."},
    {"stack.schema.json", "kernel_modules: { @V@: {} }", "kernel_modules."},
    {"stack.schema.json", "kernel_modules: { nvidia: { @V@: 1 } }", "kernel_modules.nvidia."},
    {"stack.schema.json", "kernel_modules: { nvidia: { p: @V@ } }", "kernel_modules.nvidia.p"},
    {"stack.schema.json", "firmware: { @V@: \"1.0\" }", "firmware."},
    {"stack.schema.json", "firmware: { BMC: @V@ }", "firmware.BMC"},
    {"stack.schema.json", "firmware_images: { BMC: @V@ }", "firmware_images.BMC"},
    {"stack.schema.json", "firmware_images: { BMC: @V@ }", "firmware_images.BMC", "https://fw.example/"},
    {"stack.schema.json", "firmware_images: { BMC: @V@ }", "firmware_images.BMC", "file:/srv/"},
    {"stack.schema.json", "firmware_images: { @V@: \"https://fw.example/bmc.bin\" }", "firmware_images."},
    {"stack.schema.json", "bios: { @V@: Enabled }", "bios."},
    {"stack.schema.json", "bios: { WorkloadProfile: @V@ }", "bios.WorkloadProfile"},
    {"inventory.schema.json", "cluster: @V@\nnodes: [ { name: n1, address: n1.example } ]", "cluster"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: @V@, address: n1.example } ]", "nodes[0].name"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: @V@ } ]", "nodes[0].address"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, bmc: @V@ } ]", "nodes[0].bmc"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, bmc: @V@ } ]", "nodes[0].bmc", "https://b.example/"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, bmc: \"https://b.example\", bmc_system: @V@ } ]", "nodes[0].bmc_system"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, rack: @V@ } ]", "nodes[0].rack"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, leaf: @V@ } ]", "nodes[0].leaf"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, nvlink_domain: @V@ } ]", "nodes[0].nvlink_domain"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, groups: [@V@] } ]", "nodes[0].groups[0]"},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, labels: { @V@: x } } ]", "nodes[0].labels."},
    {"inventory.schema.json", "cluster: c\nnodes: [ { name: n1, address: a.example, labels: { sku: @V@ } } ]", "nodes[0].labels.sku"},
    {"inventory.schema.json", "defaults: { ssh: { user: @V@ } }", "defaults.ssh.user"},
    {"inventory.schema.json", "defaults: { ssh: { known_hosts: @V@ } }", "defaults.ssh.known_hosts"},
    {"inventory.schema.json", "defaults: { ssh: { identity: @V@ } }", "defaults.ssh.identity"},
    {"inventory.schema.json", "defaults: { ssh: { connect_timeout: @V@ } }", "defaults.ssh.connect_timeout"},
    {"inventory.schema.json", "defaults: { bmc: { ca: @V@ } }", "defaults.bmc.ca"},
    {"inventory.schema.json", "defaults: { bmc: { fingerprint: @V@ } }", "defaults.bmc.fingerprint"},
    {"inventory.schema.json", "defaults: { bmc: { credentials: @V@ } }", "defaults.bmc.credentials"},
    {"inventory.schema.json", "defaults: { bmc: { credentials: @V@ } }", "defaults.bmc.credentials", "file:/etc/"},
    {"inventory.schema.json", "defaults: { bmc: { credentials: @V@ } }", "defaults.bmc.credentials", "env:"},
    {"inventory.schema.json", "groups: { @V@: {} }", "groups."},
    {"inventory.schema.json", "groups: { g: { parents: [@V@] } }", "groups.g.parents[0]"},
    {"inventory.schema.json", "groups: { g: { stack: @V@ } }", "groups.g.stack"},
    {"inventory.schema.json", "groups: { g: { rollout: @V@ } }", "groups.g.rollout"},
    {"inventory.schema.json", "groups: { g: { overrides: { packages: { x: @V@ } } } }", "groups.g.overrides.packages.x"},
    {"stack.schema.json", "health: { nccl_bw: { min_busbw_gbps: 1, max_bytes: @V@ } }", "health.nccl_bw.max_bytes"},
    {"stack.schema.json", "health: { ib_health: { max_counters: { @V@: 0 } } }", "health.ib_health.max_counters."},
    {"rollout.schema.json", "health: [ @V@ ]", "health[0]"},
    {"rollout.schema.json", "failure_domain: { by: @V@ }", "failure_domain.by"},
    {"rollout.schema.json", "window: { cron: @V@, duration: 1h }", "window.cron"},
};

std::vector<std::string> HostileValues() {
  std::vector<std::string> v = {
      "1.0;reboot", "1.0|cat", "1.0&x", "1.0`id`", "$(id)", "1.0$(id)", "1.0)", "1.0(x",
      "1.0>x", "1.0<x", "1.0\nx", "1.0\rx", "1.0'x", "1.0\"x", "1.0\\x", "1.0\x01",
      "1.0\xCD\xBE",       // U+037E GREEK QUESTION MARK, looks like ';'
      "1.0\xEF\xBC\x9B",   // U+FF1B FULLWIDTH SEMICOLON
      "1.0\xE2\x80\xA4x",  // U+2024 ONE DOT LEADER, looks like '.'
      "1.0\xC2\xA0x",      // U+00A0 NO-BREAK SPACE
      "-rf", "--force", "1.0 ;x", "../../etc/passwd;", std::string(300, '1'),
  };
  return v;
}

std::string YamlQuoted(const std::string& s) {
  // JSON strings are YAML double-quoted scalars; dump() escapes control characters.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Replace(std::string s, const std::string& what, const std::string& with) {
  s.replace(s.find(what), what.size(), with);
  return s;
}

}  // namespace

TEST_CASE("hostile values are rejected for every field that reaches a node") {
  int checked = 0;
  for (const auto& f : kFields) {
    for (const auto& hostile : HostileValues()) {
      // After a valid prefix, a '-' or a long run of digits is harmless (mid-URL, mid-path).
      if (*f.prefix != '\0' && (hostile[0] == '-' || hostile.size() > 256)) continue;
      std::string yaml = Replace(f.yaml, "@V@", YamlQuoted(f.prefix + hostile));
      if (std::string(f.schema) == "inventory.schema.json" && yaml.find("nodes:") == std::string::npos)
        yaml += std::string("\n") + kInv;
      CAPTURE(yaml);
      Diagnostics d;
      auto doc = ParseYaml(yaml, "f.yaml", d);
      REQUIRE(doc);
      ValidateDocument(*doc, f.schema, d);
      bool named = false;
      for (const auto& diag : d.items()) {
        named |= diag.key_path.rfind(f.key, 0) == 0 && diag.where.line > 0;
        // Whatever the value, the rendering stays ASCII and one line per message.
        std::string text = diag.ToString();
        bool plain = true;
        for (unsigned char c : text) plain &= (c >= 0x20 && c < 0x7f) || c == '\n';
        CHECK_MESSAGE(plain, text);
        CHECK(diag.message.find('\n') == std::string::npos);
      }
      CHECK_MESSAGE(named, d.ToText());
      ++checked;
    }
  }
  CHECK(checked > 1200);
}

TEST_CASE("ordinary values pass the same fields (the patterns are not just 'reject all')") {
  const std::pair<const char*, const char*> kGood[] = {
      {"kernel: @V@", "5.15.0-119-generic"}, {"nvidia: { driver: @V@ }", "550.90.07"},
      {"nvidia: { cuda: @V@ }", "12.4"},      {"nvidia: { nccl: @V@ }", "2.21.5-1+cuda12.4"},
      {"ofed: @V@", "24.07-0.6.1.0"},         {"packages: { dcgm: @V@ }", "1:3.3.7"},
      {"packages: { @V@: \"1.0\" }", "libnccl2"}, {"sysctl: { @V@: 1 }", "net.ipv4.tcp_rmem"},
      {"services: { @V@: { enabled: true } }", "nvidia-fabricmanager.service"},
      {"firmware: { @V@: \"1.0\" }", "GPU0 Firmware"}, {"bios: { WorkloadProfile: @V@ }", "HPC"},
      // Versions as vendors report them (issue 32): iLO's date, the ROM family and its date in
      // parentheses, HPE Cray EX's BMC build with its time stamp.
      {"firmware: { BMC: @V@ }", "2.70 May 16 2022"}, {"firmware: { BMC: @V@ }", "A47 v2.60"},
      {"firmware: { BMC: @V@ }", "A47 v2.58 (05/19/2022)"},
      {"firmware: { BMC: @V@ }", "nc.1.6.19-5-shasta-release.arm.2022-02-25T01:38:09+00:00.d20b426"},
      {"bios: { @V@: Enabled }", "Core Performance Boost"},
      {"firmware_images: { BMC: @V@ }", "https://fw.example:8443/images/bmc-24.09.17.bin"},
      {"firmware_images: { BMC: @V@ }", "file:/srv/firmware/bios_1.9.0.bin"},
      {"power: @V@", "On"},
      {"health: { nccl_bw: { min_busbw_gbps: 350, max_bytes: @V@ } }", "8G"},
      {"health: { nccl_bw: { min_busbw_gbps: 350, max_bytes: @V@ } }", "1073741824"},
      {"health: { ib_health: { max_counters: { @V@: 0 } } }", "SymbolErrorCounter"},
  };
  for (const auto& [tmpl, value] : kGood) {
    std::string yaml = Replace(tmpl, "@V@", YamlQuoted(value));
    Diagnostics d = Check("stack.schema.json", "s.yaml", yaml);
    CHECK_MESSAGE(d.empty(), yaml, "\n", d.ToText());
  }
}

TEST_CASE("validate: an empty value's error is at its own line") {
  // `kernel:` left empty on line 2 was reported at line 3, where the next key starts.
  Diagnostics d = Check("stack.schema.json", "stacks/h100.yaml",
                        "nvidia: { driver: 550.90.07 }\nkernel:\nsysctl:\n  vm.swappiness: 10\n");
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].where.ToString() == "stacks/h100.yaml:2:1");
  CHECK(d.items()[0].key_path == "kernel");
}
