// The CLI11 tree as data (cmd/cli_doc.h), for the man pages and completions.
#include "cmd/cli_doc.h"

#include <sstream>

namespace plumb::cmd {

namespace {

// CLI11 prints an option's type and its checks as "TEXT:{text,json}"; the braces are the
// IsMember set, the only values the option takes.
void SplitTypeName(const std::string& full, OptionDoc& od) {
  od.value = full.substr(0, full.find(':'));
  const auto open = full.find('{');
  const auto close = full.find('}', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return;
  std::stringstream in(full.substr(open + 1, close - open - 1));
  for (std::string v; std::getline(in, v, ',');)
    if (!v.empty()) od.choices.push_back(v);
}

}  // namespace

CommandDoc DescribeCommand(const CLI::App& app, const std::string& path) {
  CommandDoc d;
  d.path = path;
  d.description = app.get_description();
  d.footer = app.get_footer();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;   // hidden, as --help hides it
    OptionDoc od;
    od.positional = !o->nonpositional();
    od.required = o->get_required();
    if (od.positional) {
      od.names.push_back(o->get_name(true));
    } else {
      for (const std::string& s : o->get_snames()) od.names.push_back("-" + s);
      for (const std::string& l : o->get_lnames()) od.names.push_back("--" + l);
    }
    // A flag expects no value (CLI11 keeps its type size at 1); --resume [RUN] expects 0 or 1.
    if (od.positional || o->get_expected_max() > 0) SplitTypeName(o->get_type_name(), od);
    od.value_optional = !od.positional && o->get_expected_min() == 0 && o->get_expected_max() > 0;
    od.description = o->get_description();
    od.default_value = o->get_default_str();
    d.options.push_back(std::move(od));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    d.subcommands.push_back(DescribeCommand(*sub, path + " " + sub->get_name()));
  }
  return d;
}

std::vector<std::string> FooterParagraphs(const std::string& footer) {
  std::vector<std::string> out;
  std::string cur;
  std::stringstream in(footer);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += cur.empty() ? line : "\n" + line;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string FirstLineOf(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string ManPageName(const std::string& path) {
  std::string out;
  std::stringstream in(path);
  std::string word;
  for (int i = 0; i < 2 && in >> word; ++i) out += out.empty() ? word : "-" + word;
  return out;
}

}  // namespace plumb::cmd
