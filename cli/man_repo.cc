// plumb-repo(5) (cli/man_page.h): the cluster repo's files, each key described by the JSON
// Schema compiled into the binary, so the page says what `plumb validate` checks.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/man_page.h"
#include "cli/roff.h"
#include "schemas/ascii.h"
#include "schemas/embedded.h"

namespace plumb::cli {

namespace {

// A schema node as the page describes it: the node a $ref leads to, its type and its text.
struct SchemaEntry {
  const nlohmann::json* node = nullptr;
  std::string type;
  std::string text;
};

// A $ref to the schema's own definitions is followed once, for the description and keys.
SchemaEntry ResolveEntry(const nlohmann::json& schema, const nlohmann::json& node) {
  SchemaEntry e{&node, "", ""};
  if (node.contains("$ref") && node["$ref"].is_string()) {
    const std::string ref = node["$ref"];
    e.type = ref.substr(ref.rfind('/') + 1);
    if (schema.contains("definitions") && schema["definitions"].contains(e.type))
      e.node = &schema["definitions"][e.type];
  }
  const nlohmann::json& n = *e.node;
  if (n.contains("type") && n["type"].is_string()) e.type = n["type"].get<std::string>();
  if (node.contains("description")) e.text = node["description"].get<std::string>();
  else if (n.contains("description")) e.text = n["description"].get<std::string>();
  return e;
}

// The keys one schema describes, depth first: "ssh.command_timeout  duration  description".
void SchemaKeys(const nlohmann::json& schema, const nlohmann::json& node, const std::string& key,
                int depth, std::string& out) {
  const SchemaEntry e = ResolveEntry(schema, node);
  if (!key.empty()) {
    out += fmt::format(".TP\n\\fB{}\\fR", Roff(key));
    if (!e.type.empty()) out += fmt::format(" (\\fI{}\\fR)", Roff(e.type));
    out += "\n" + (e.text.empty() ? std::string("\\(em") : Roff(e.text)) + "\n";
  }
  if (depth >= 4) return;
  const nlohmann::json& n = *e.node;
  const std::string prefix = key.empty() ? "" : key + ".";
  if (n.contains("properties") && n["properties"].is_object())
    for (auto it = n["properties"].begin(); it != n["properties"].end(); ++it)
      SchemaKeys(schema, it.value(), prefix + it.key(), depth + 1, out);
  // A mapping of names (nodes, groups, stacks' per-name maps): one entry for its members.
  if (n.contains("additionalProperties") && n["additionalProperties"].is_object() && !key.empty())
    SchemaKeys(schema, n["additionalProperties"], prefix + "<name>", depth + 1, out);
  if (n.contains("items") && n["items"].is_object() && !key.empty())
    SchemaKeys(schema, n["items"], key + "[]", depth + 1, out);
}

// One file's section, from its schema ("inventory.schema.json"); "" when it is not embedded.
std::string RepoFileSection(const char* name) {
  auto text = schemas::FindEmbedded(name);
  if (!text) return "";
  const nlohmann::json schema = nlohmann::json::parse(*text, nullptr, false);
  if (schema.is_discarded()) return "";
  // The schema's title names the file: "plumb inventory (inventory.yaml)".
  const std::string title = schema.value("title", name);
  const auto open = title.find('('), close = title.rfind(')');
  const std::string file =
      open != std::string::npos && close > open ? title.substr(open + 1, close - open - 1) : title;
  std::string out = fmt::format(".SH {}\n{}\n", Roff(schemas::AsciiUpper(file)),
                                Roff(schema.value("description", "")));
  SchemaKeys(schema, schema, "", 0, out);
  return out;
}

}  // namespace

std::string RepoManPage(const std::string& version) {
  std::string out = ManHeader("plumb-repo", 5, version);
  out += ".SH NAME\nplumb\\-repo \\- the files of a plumb cluster repo\n";
  out += ".SH SYNOPSIS\n.nf\ninventory.yaml\nstacks/\\fIname\\fR.yaml\nrollouts/\\fIname\\fR.yaml\n"
         "policy.yaml\nwaivers.yaml\n.fi\n";
  out += ".SH DESCRIPTION\nA cluster repo is a git repository that says what every node of one "
         "cluster must run. \\fBplumb\\fR reads it at a git ref (a commit a reviewer approved), "
         "never from the working tree unless told (\\fB\\-\\-working\\-tree\\fR). "
         "\\fBinventory.yaml\\fR names the nodes, their SSH and BMC access and their groups; a "
         "group names the stack and rollout its nodes follow; \\fBstacks/\\fR pin the software, "
         "firmware and settings; \\fBrollouts/\\fR say how changes roll (batches, drain, "
         "max_unavailable); \\fBpolicy.yaml\\fR (optional) asks for signed commits; "
         "\\fBwaivers.yaml\\fR (optional) holds justified, expiring exceptions to drift.\n"
         ".PP\nEvery file is checked against a JSON Schema compiled into plumb "
         "(\\fBplumb schemas \\-\\-out DIR\\fR writes them for an editor); \\fBplumb validate\\fR "
         "reports every error with its file:line and key. The keys below are the schemas' own "
         "descriptions.\n";
  // The repo's files, in the order a reader meets them.
  for (const char* name : {"inventory.schema.json", "stack.schema.json", "rollout.schema.json",
                           "policy.schema.json", "waivers.schema.json"})
    out += RepoFileSection(name);
  out += ".SH EXAMPLES\nComplete cluster repos are installed under "
         "\\fI/usr/share/doc/plumb/examples\\fR (in the source tree: \\fIexamples/\\fR).\n";
  out += ".SH SEE ALSO\n\\fBplumb\\fR(1), \\fBplumb\\-validate\\fR(1), \\fBplumb\\-schemas\\fR(1), "
         "\\fBplumb\\-show\\fR(1)\n";
  return out;
}

}  // namespace plumb::cli
