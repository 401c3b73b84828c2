#pragma once
// A small command tree, described by hand as the CLI describes its own (cli/describe_app.h), for
// the completion and man page tests: a root with global options, a verb with options of every
// kind the scripts tell apart, and a verb with a nested command taking a NODE.
#include "cli/command_doc.h"

namespace plumb::cli::testing {

/// Does `text` hold `part`?
inline bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline OptionDoc Flag(std::vector<std::string> names, std::string description) {
  OptionDoc o;
  o.names = std::move(names);
  o.description = std::move(description);
  return o;
}

inline OptionDoc Valued(std::vector<std::string> names, std::string value, std::string description,
                        std::vector<std::string> choices = {}) {
  OptionDoc o = Flag(std::move(names), std::move(description));
  o.value = std::move(value);
  o.choices = std::move(choices);
  return o;
}

inline OptionDoc Positional(std::string name, std::string description, bool required) {
  OptionDoc o = Flag({std::move(name)}, std::move(description));
  o.value = "TEXT";
  o.positional = true;
  o.required = required;
  return o;
}

inline CommandDoc SmallTree() {
  CommandDoc inventory{"plumb bmc inventory", "Read a BMC's inventory", "", {}, {}};
  inventory.options.push_back(Positional("node", "The node", true));
  CommandDoc bmc{"plumb bmc", "Talk to BMCs: read, apply", "", {}, {inventory}};
  CommandDoc plan{"plumb plan", "Make a plan\nof what would change", "", {}, {}};
  plan.footer = "Reads every node.\n\nExamples:\n  plumb plan --limit gpu01\n\nExit codes:\n  0  ok";
  plan.options.push_back(Valued({"--limit"}, "TEXT", "Only these nodes"));
  plan.options.push_back(Valued({"--format"}, "TEXT", "Output format", {"text", "json"}));
  plan.options.push_back(Valued({"--ref"}, "TEXT", "Git ref"));
  plan.options.push_back(Valued({"--timeout"}, "INT", "Seconds"));
  OptionDoc resume = Valued({"--resume"}, "RUN", "Resume a run");
  resume.value_optional = true;
  plan.options.push_back(resume);
  plan.options.push_back(Positional("out", "Where to write it", false));
  CommandDoc root{"plumb", "Keep a cluster where git says.\n\nExit codes:\n  0  success", "", {},
                  {plan, bmc}};
  root.options.push_back(Flag({"-v", "--verbose"}, "Say more: every step"));
  root.options.push_back(Valued({"--repo"}, "TEXT", "The cluster repo"));
  OptionDoc color = Valued({"--color"}, "TEXT", "Colour", {"auto", "always", "never"});
  color.default_value = "auto";
  root.options.push_back(color);
  return root;
}

}  // namespace plumb::cli::testing
