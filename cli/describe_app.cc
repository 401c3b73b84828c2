// The CLI11 tree as data (cli/describe_app.h), for the man pages and completions.
#include "cli/describe_app.h"

#include <sstream>

namespace plumb::cli {

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

// One option as --help shows it; its names, or a positional's name.
OptionDoc DescribeOption(const CLI::Option& o) {
  OptionDoc od;
  od.positional = !o.nonpositional();
  od.required = o.get_required();
  if (od.positional) {
    od.names.push_back(o.get_name(true));
  } else {
    for (const std::string& s : o.get_snames()) od.names.push_back("-" + s);
    for (const std::string& l : o.get_lnames()) od.names.push_back("--" + l);
  }
  // A flag expects no value (CLI11 keeps its type size at 1); --resume [RUN] expects 0 or 1.
  if (od.positional || o.get_expected_max() > 0) SplitTypeName(o.get_type_name(), od);
  od.value_optional = !od.positional && o.get_expected_min() == 0 && o.get_expected_max() > 0;
  od.description = o.get_description();
  od.default_value = o.get_default_str();
  return od;
}

}  // namespace

CommandDoc DescribeCommand(const CLI::App& app, const std::string& path) {
  CommandDoc d;
  d.path = path;
  d.description = app.get_description();
  d.footer = app.get_footer();
  for (const CLI::Option* o : app.get_options())
    if (!o->get_group().empty()) d.options.push_back(DescribeOption(*o));   // "": hidden
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    d.subcommands.push_back(DescribeCommand(*sub, path + " " + sub->get_name()));
  }
  return d;
}

}  // namespace plumb::cli
