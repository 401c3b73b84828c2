// Man pages (roff, man(7) macros) from the CLI's own description (cmd/cli_doc.h) and, for
// plumb-repo(5), from the JSON Schemas compiled into the binary: what `--help` and `plumb
// validate` say is what the pages say.
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cmd/cli_doc.h"
#include "schemas/ascii.h"
#include "schemas/embedded.h"

namespace plumb::cmd {

namespace {

// Text for roff: a backslash is \e, a hyphen \- (so option names copy and paste as ASCII), and
// a line may not start with a control character ('.' or '\'').
std::string Roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string Header(const std::string& name, int section, const std::string& version) {
  // No date: the pages are generated at every build and must be byte-identical across builds.
  return fmt::format(".TH {} {} \"\" \"plumb {}\" \"plumb manual\"\n", Roff(schemas::AsciiUpper(name)), section,
                     version);
}

// One option as a tagged paragraph: names and value in bold/italic, then what --help says.
std::string OptionEntry(const OptionDoc& o) {
  std::string tag;
  for (const std::string& n : o.names) tag += (tag.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", Roff(n));
  if (o.positional) tag = fmt::format("\\fI{}\\fR", Roff(o.names.front()));
  else if (!o.value.empty())
    tag += o.value_optional ? fmt::format(" [\\fI{}\\fR]", Roff(o.value))
                            : fmt::format(" \\fI{}\\fR", Roff(o.value));
  std::string body = Roff(o.description);
  if (!o.choices.empty()) {
    std::string vals;
    for (const std::string& c : o.choices) vals += (vals.empty() ? "" : ", ") + Roff(c);
    body += fmt::format("\n.br\nOne of: {}", vals);
  }
  if (!o.default_value.empty()) body += fmt::format("\n.br\nDefault: {}", Roff(o.default_value));
  if (o.required) body += "\n.br\nRequired.";
  return fmt::format(".TP\n{}\n{}\n", tag, body);
}

std::string Synopsis(const CommandDoc& c) {
  std::string s = fmt::format(".B {}\n", Roff(c.path));
  std::string rest = "[\\fIOPTIONS\\fR]";
  for (const OptionDoc& o : c.options)
    if (o.positional)
      rest += o.required ? fmt::format(" \\fI{}\\fR", Roff(schemas::AsciiUpper(o.names.front())))
                         : fmt::format(" [\\fI{}\\fR]", Roff(schemas::AsciiUpper(o.names.front())));
  if (!c.subcommands.empty()) rest += " \\fISUBCOMMAND\\fR";
  return s + rest + "\n";
}

// A paragraph of the footer as it is, in a no-fill block: examples and tables keep their columns.
std::string Verbatim(const std::string& text) { return ".nf\n" + Roff(text) + "\n.fi\n"; }

// The footer's paragraphs sorted into sections: "Examples:" and "Exit codes:" get their own,
// the rest is description.
struct FooterParts {
  std::string description, examples, exit_codes;
};

FooterParts SplitFooter(const std::string& footer) {
  FooterParts p;
  for (const std::string& para : FooterParagraphs(footer)) {
    auto strip_title = [&para] { return para.substr(para.find('\n') == std::string::npos ? para.size() : para.find('\n') + 1); };
    if (para.rfind("Examples:", 0) == 0) p.examples += Verbatim(strip_title());
    else if (para.rfind("Exit codes:", 0) == 0) p.exit_codes += Verbatim(strip_title());
    else p.description += ".PP\n" + Roff(para) + "\n";
  }
  return p;
}

std::string CommandBody(const CommandDoc& c, bool nested) {
  std::string out;
  const FooterParts f = SplitFooter(c.footer);
  if (nested) {
    out += fmt::format(".SS {}\n", Roff(c.path));
    out += Synopsis(c) + ".PP\n" + Roff(c.description) + "\n" + f.description;
    for (const OptionDoc& o : c.options) out += OptionEntry(o);
    if (!f.examples.empty()) out += ".PP\nExamples:\n" + f.examples;
    if (!f.exit_codes.empty()) out += ".PP\nExit codes:\n" + f.exit_codes;
    for (const CommandDoc& s : c.subcommands) out += CommandBody(s, true);
    return out;
  }
  out += ".SH SYNOPSIS\n" + Synopsis(c);
  out += ".SH DESCRIPTION\n" + Roff(c.description) + "\n" + f.description;
  if (!c.options.empty()) {
    out += ".SH OPTIONS\n";
    for (const OptionDoc& o : c.options) out += OptionEntry(o);
  }
  if (!c.subcommands.empty()) {
    out += ".SH SUBCOMMANDS\n";
    for (const CommandDoc& s : c.subcommands) out += CommandBody(s, true);
  }
  if (!f.examples.empty()) out += ".SH EXAMPLES\n" + f.examples;
  if (!f.exit_codes.empty()) out += ".SH EXIT STATUS\n" + f.exit_codes;
  return out;
}

}  // namespace

std::string ManPage(const CommandDoc& cmd, const CommandDoc& root, const std::string& version) {
  const std::string name = ManPageName(cmd.path);
  std::string out = Header(name, 1, version);
  out += fmt::format(".SH NAME\n{} \\- {}\n", Roff(name), Roff(FirstLineOf(cmd.description)));
  out += CommandBody(cmd, false);
  out += ".SH SEE ALSO\n\\fBplumb\\fR(1), \\fBplumb\\-repo\\fR(5)\n";
  return out;
}

std::string RootManPage(const CommandDoc& root, const std::string& version) {
  std::string out = Header("plumb", 1, version);
  out += ".SH NAME\nplumb \\- keep a GPU cluster's software stack, firmware and fabric where a "
         "reviewed git commit says\n";
  out += ".SH SYNOPSIS\n.B plumb\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  // The root's description ends with the exit code summary: its own section below.
  const std::string& d = root.description;
  const auto codes = d.find("\n\nExit codes");
  out += ".SH DESCRIPTION\n" + Roff(d.substr(0, codes)) + "\n";
  out += ".PP\nEach command has a page of its own: \\fBplumb\\-\\fR\\fIcommand\\fR(1); "
         "the cluster repo's files are described in \\fBplumb\\-repo\\fR(5).\n";
  out += ".SH COMMANDS\n";
  for (const CommandDoc& s : root.subcommands)
    out += fmt::format(".TP\n\\fB{}\\fR(1)\n{}\n", Roff(ManPageName(s.path)), Roff(s.description));
  out += ".SH OPTIONS\n";
  for (const OptionDoc& o : root.options) out += OptionEntry(o);
  if (codes != std::string::npos) out += ".SH EXIT STATUS\n" + Verbatim(d.substr(codes + 2));
  out += ".SH ENVIRONMENT\n.TP\n\\fBNO_COLOR\\fR\nWhen set to a non\\-empty value, no colour, as "
         "\\fB\\-\\-color=never\\fR.\n";
  out += ".SH SEE ALSO\n\\fBplumb\\-repo\\fR(5)";
  for (const CommandDoc& s : root.subcommands)
    out += fmt::format(", \\fB{}\\fR(1)", Roff(ManPageName(s.path)));
  out += "\n";
  return out;
}

namespace {

// The keys one schema describes, depth first: "ssh.command_timeout  duration  description".
void SchemaKeys(const nlohmann::json& schema, const nlohmann::json& node, const std::string& key,
                int depth, std::string& out) {
  const nlohmann::json* n = &node;
  std::string type;
  // A $ref to the schema's own definitions: follow it once for the description and keys.
  if (n->contains("$ref") && (*n)["$ref"].is_string()) {
    const std::string ref = (*n)["$ref"];
    type = ref.substr(ref.rfind('/') + 1);
    const std::string def = type;
    if (schema.contains("definitions") && schema["definitions"].contains(def)) n = &schema["definitions"][def];
  }
  if (n->contains("type") && (*n)["type"].is_string()) type = (*n)["type"].get<std::string>();
  std::string text;
  if (node.contains("description")) text = node["description"].get<std::string>();
  else if (n->contains("description")) text = (*n)["description"].get<std::string>();
  if (!key.empty()) {
    out += fmt::format(".TP\n\\fB{}\\fR", Roff(key));
    if (!type.empty()) out += fmt::format(" (\\fI{}\\fR)", Roff(type));
    out += "\n" + (text.empty() ? std::string("\\(em") : Roff(text)) + "\n";
  }
  if (depth >= 4) return;
  const std::string prefix = key.empty() ? "" : key + ".";
  if (n->contains("properties") && (*n)["properties"].is_object())
    for (auto it = (*n)["properties"].begin(); it != (*n)["properties"].end(); ++it)
      SchemaKeys(schema, it.value(), prefix + it.key(), depth + 1, out);
  // A mapping of names (nodes, groups, stacks' per-name maps): one entry for its members.
  if (n->contains("additionalProperties") && (*n)["additionalProperties"].is_object() &&
      !key.empty())
    SchemaKeys(schema, (*n)["additionalProperties"], prefix + "<name>", depth + 1, out);
  if (n->contains("items") && (*n)["items"].is_object() && !key.empty())
    SchemaKeys(schema, (*n)["items"], key + "[]", depth + 1, out);
}

}  // namespace

std::string RepoManPage(const std::string& version) {
  std::string out = Header("plumb-repo", 5, version);
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
  // The repo's files, in the order a reader meets them; their schema titles name the file.
  for (const char* name : {"inventory.schema.json", "stack.schema.json", "rollout.schema.json",
                           "policy.schema.json", "waivers.schema.json"}) {
    auto text = schemas::FindEmbedded(name);
    if (!text) continue;
    const nlohmann::json schema = nlohmann::json::parse(*text, nullptr, false);
    if (schema.is_discarded()) continue;
    const std::string title = schema.value("title", name);
    const auto open = title.find('('), close = title.rfind(')');
    const std::string file = open != std::string::npos && close > open
                                 ? title.substr(open + 1, close - open - 1) : title;
    out += fmt::format(".SH {}\n{}\n", Roff(schemas::AsciiUpper(file)), Roff(schema.value("description", "")));
    SchemaKeys(schema, schema, "", 0, out);
  }
  out += ".SH EXAMPLES\nComplete cluster repos are installed under "
         "\\fI/usr/share/doc/plumb/examples\\fR (in the source tree: \\fIexamples/\\fR).\n";
  out += ".SH SEE ALSO\n\\fBplumb\\fR(1), \\fBplumb\\-validate\\fR(1), \\fBplumb\\-schemas\\fR(1), "
         "\\fBplumb\\-show\\fR(1)\n";
  return out;
}

}  // namespace plumb::cmd
