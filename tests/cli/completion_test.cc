// Completion scripts generated from a described command tree (cli/completion.h): each command
// path, option and value kind lands in the script as the shell needs it.
#include <doctest/doctest.h>

#include "cli/completion.h"
#include "cli/completion_words.h"
#include "cli/cli_tree.h"

using namespace plumb::cli;
using plumb::cli::testing::Has;
using plumb::cli::testing::SmallTree;

namespace {

const OptionDoc& OptionOf(const CommandDoc& c, const std::string& name) {
  for (const OptionDoc& o : c.options)
    if (o.names.back() == name) return o;
  FAIL("no option " << name);
  return c.options.front();
}

}  // namespace

TEST_CASE("completion: what the word after each kind of option completes to") {
  const CommandDoc root = SmallTree();
  const CommandDoc& plan = root.subcommands[0];
  CHECK(KindOf(OptionOf(root, "--verbose")) == ValueKind::kNone);
  CHECK(KindOf(OptionOf(root, "--repo")) == ValueKind::kDirectory);
  CHECK(KindOf(OptionOf(root, "--color")) == ValueKind::kChoices);
  CHECK(KindOf(OptionOf(plan, "--limit")) == ValueKind::kNodes);
  CHECK(KindOf(OptionOf(plan, "--ref")) == ValueKind::kFree);
  CHECK(KindOf(OptionOf(plan, "--timeout")) == ValueKind::kFree);    // a number: nothing to list
  CHECK(KindOf(OptionOf(plan, "out")) == ValueKind::kFile);
  CHECK(KindOf(root.subcommands[1].subcommands[0].options[0]) == ValueKind::kNodes);   // "node"
  CHECK(PositionalWords(plan) == "files");
  CHECK(PositionalWords(root) == "''");
  CHECK(PositionalCount(plan) == 1);
  CHECK(ValueOptions(root) == " --repo --color ");
  CHECK(QuotedPaths(root, "|") == "'plumb plan'|'plumb bmc'|'plumb bmc inventory'");
}

TEST_CASE("completion: bash offers each command's words, each option's values") {
  const std::string s = BashCompletion(SmallTree());
  CHECK(s.rfind("# bash completion for plumb.", 0) == 0);
  CHECK(Has(s, "\n      'plumb plan'|'plumb bmc'|'plumb bmc inventory') cmdpath="));
  CHECK(Has(s, "    'plumb') subs='plan bmc'; opts='-v --verbose --repo --color'; "
               "vopts=' --repo --color '; pos=''; npos=0 ;;\n"));
  CHECK(Has(s, "    'plumb bmc inventory') subs=''; opts=''; vopts=' '; pos=nodes; npos=1 ;;\n"));
  CHECK(Has(s, "    'plumb|--color') __plumb_reply -W 'auto always never' ;;\n"));
  CHECK(Has(s, "    'plumb|--repo') __plumb_files -d ;;\n"));
  CHECK(Has(s, "    'plumb plan|--limit') __plumb_complete_nodes ;;\n"));
  CHECK(Has(s, "    'plumb plan|--ref') ;;\n"));
  CHECK_FALSE(Has(s, "'plumb|--verbose')"));   // a flag takes no value
  // The script's own braces reach bash single, not as format escapes.
  CHECK(Has(s, "for ((i = 1; i < ${#__plumb_words[@]} - 1; i++)); do"));
  CHECK(Has(s, "__plumb_reply() {\n"));
  CHECK_FALSE(Has(s, "{{"));
  CHECK(s.size() > 25);
  CHECK(s.substr(s.size() - 25) == "complete -F _plumb plumb\n");
}

TEST_CASE("completion: zsh describes subcommands and options by their first line") {
  const std::string s = ZshCompletion(SmallTree());
  CHECK(s.rfind("#compdef plumb\n", 0) == 0);
  CHECK(Has(s, "    ('plumb') subs=( 'plan:Make a plan' 'bmc:Talk to BMCs\\: read, apply'); "
               "opts=( '-v:Say more\\: every step' '--verbose:Say more\\: every step' "
               "'--repo:The cluster repo' '--color:Colour'); vopts=' --repo --color '; pos=''; "
               "npos=0 ;;\n"));
  CHECK(Has(s, "      ('plumb plan|--format') compadd -- text json ;;\n"));
  CHECK(Has(s, "      ('plumb|--repo') _files -/ ;;\n"));
  CHECK_FALSE(Has(s, "'plumb plan|out')"));   // a positional has no value arm
  CHECK(Has(s, "      ('plumb plan'|'plumb bmc'|'plumb bmc inventory') cmdpath="));
  CHECK(Has(s, "compadd -- ${(f)\"$(command plumb __nodes \"${repo[@]}\" 2>/dev/null)\"}\n"));
  CHECK_FALSE(Has(s, "{{"));
}

TEST_CASE("completion: fish has a line per subcommand and option under its command's path") {
  const std::string s = FishCompletion(SmallTree());
  const std::string at_root = "complete -c plumb -n 'test (__plumb_path) = '\\''plumb'\\'''";
  const std::string at_plan = "complete -c plumb -n 'test (__plumb_path) = '\\''plumb plan'\\'''";
  CHECK(Has(s, "            case 'plumb plan' 'plumb bmc' 'plumb bmc inventory'\n"));
  CHECK(Has(s, at_root + " -a 'plan' -d 'Make a plan'\n"));
  CHECK(Has(s, at_root + " -s v -l verbose -d 'Say more: every step'\n"));
  CHECK(Has(s, at_root + " -l repo -x -a '(__fish_complete_directories)' -d 'The cluster repo'\n"));
  CHECK(Has(s, at_plan + " -l format -x -a 'text json' -d 'Output format'\n"));
  CHECK(Has(s, at_plan + " -l limit -x -a '(__plumb_nodes)' -d 'Only these nodes'\n"));
  CHECK(Has(s, at_plan + " -l timeout -x -d 'Seconds'\n"));
  CHECK(Has(s, at_plan + " -F\n"));   // the positional: a file
  CHECK(Has(s, "complete -c plumb -n 'test (__plumb_path) = '\\''plumb bmc inventory'\\''' "
               "-a '(__plumb_nodes)'\n"));
  CHECK(Has(s, "\ncomplete -c plumb -f\n"));
}

TEST_CASE("completion: __nodes prints nodes, then @groups, leaving out names a shell would expand") {
  CHECK(NodeCompletionWords({"gpu001", "gpu-2.a_b"}, {"h100"}) == "gpu001\ngpu-2.a_b\n@h100\n");
  CHECK(NodeCompletionWords({"$(reboot)", "", "ok", "a b"}, {"`x`", "g"}) == "ok\n@g\n");
  CHECK(NodeCompletionWords({}, {}).empty());
}

TEST_CASE("completion: the script for each shell the CLI takes") {
  const CommandDoc root = SmallTree();
  CHECK(CompletionScript("bash", root) == BashCompletion(root));
  CHECK(CompletionScript("zsh", root) == ZshCompletion(root));
  CHECK(CompletionScript("fish", root) == FishCompletion(root));
  CHECK(CompletionScript("bash", root) != CompletionScript("zsh", root));
}
