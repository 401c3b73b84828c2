// The command pages plumb(1) and plumb-VERB(1) (cli/man_page.h).
#include "cli/man_page.h"

#include <fmt/format.h>

#include "cli/roff.h"
#include "schemas/ascii.h"

namespace plumb::cli {

namespace {

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

// The footer's paragraphs sorted into sections: "Examples:" and "Exit codes:" get their own,
// the rest is description.
struct FooterParts {
  std::string description, examples, exit_codes;
};

// A titled paragraph without its title line ("Examples:\n  a" -> "  a").
std::string WithoutTitle(const std::string& para) {
  const auto nl = para.find('\n');
  return para.substr(nl == std::string::npos ? para.size() : nl + 1);
}

FooterParts SplitFooter(const std::string& footer) {
  FooterParts p;
  for (const std::string& para : FooterParagraphs(footer)) {
    if (para.rfind("Examples:", 0) == 0) p.examples += Verbatim(WithoutTitle(para));
    else if (para.rfind("Exit codes:", 0) == 0) p.exit_codes += Verbatim(WithoutTitle(para));
    else p.description += ".PP\n" + Roff(para) + "\n";
  }
  return p;
}

// A command below a page's own: a subsection, with its commands below it in turn.
std::string NestedCommandBody(const CommandDoc& c) {
  const FooterParts f = SplitFooter(c.footer);
  std::string out = fmt::format(".SS {}\n", Roff(c.path));
  out += Synopsis(c) + ".PP\n" + Roff(c.description) + "\n" + f.description;
  for (const OptionDoc& o : c.options) out += OptionEntry(o);
  if (!f.examples.empty()) out += ".PP\nExamples:\n" + f.examples;
  if (!f.exit_codes.empty()) out += ".PP\nExit codes:\n" + f.exit_codes;
  for (const CommandDoc& s : c.subcommands) out += NestedCommandBody(s);
  return out;
}

// The command a page is about: sections of their own.
std::string PageCommandBody(const CommandDoc& c) {
  const FooterParts f = SplitFooter(c.footer);
  std::string out = ".SH SYNOPSIS\n" + Synopsis(c);
  out += ".SH DESCRIPTION\n" + Roff(c.description) + "\n" + f.description;
  if (!c.options.empty()) {
    out += ".SH OPTIONS\n";
    for (const OptionDoc& o : c.options) out += OptionEntry(o);
  }
  if (!c.subcommands.empty()) {
    out += ".SH SUBCOMMANDS\n";
    for (const CommandDoc& s : c.subcommands) out += NestedCommandBody(s);
  }
  if (!f.examples.empty()) out += ".SH EXAMPLES\n" + f.examples;
  if (!f.exit_codes.empty()) out += ".SH EXIT STATUS\n" + f.exit_codes;
  return out;
}

}  // namespace

std::string ManPage(const CommandDoc& cmd, const CommandDoc& root, const std::string& version) {
  const std::string name = ManPageName(cmd.path);
  std::string out = ManHeader(name, 1, version);
  out += fmt::format(".SH NAME\n{} \\- {}\n", Roff(name), Roff(FirstLineOf(cmd.description)));
  out += PageCommandBody(cmd);
  out += ".SH SEE ALSO\n\\fBplumb\\fR(1), \\fBplumb\\-repo\\fR(5)\n";
  return out;
}

std::string RootManPage(const CommandDoc& root, const std::string& version) {
  std::string out = ManHeader("plumb", 1, version);
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

std::vector<std::pair<std::string, std::string>> ManPages(const CommandDoc& root,
                                                          const std::string& version) {
  std::vector<std::pair<std::string, std::string>> pages = {
      {"man1/plumb.1", RootManPage(root, version)}, {"man5/plumb-repo.5", RepoManPage(version)}};
  for (const CommandDoc& verb : root.subcommands)
    pages.emplace_back("man1/" + ManPageName(verb.path) + ".1", ManPage(verb, root, version));
  return pages;
}

}  // namespace plumb::cli
