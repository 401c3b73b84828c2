// Man pages generated from a described command tree (cli/man_page.h) and from the embedded
// schemas: sections, options, footers and roff escaping.
#include <doctest/doctest.h>

#include "cli/cli_tree.h"
#include "cli/man_page.h"
#include "cli/roff.h"

using namespace plumb::cli;
using plumb::cli::testing::Has;
using plumb::cli::testing::SmallTree;

TEST_CASE("man: roff escapes hyphens, backslashes and a leading control character") {
  CHECK(Roff("--limit a\\b") == "\\-\\-limit a\\eb");
  CHECK(Roff(".dot\n'quote\nmid.dot") == "\\&.dot\n\\&'quote\nmid.dot");
  CHECK(ManHeader("plumb-plan", 1, "1.2.3") == ".TH PLUMB\\-PLAN 1 \"\" \"plumb 1.2.3\" \"plumb manual\"\n");
}

TEST_CASE("man: a verb's page has its synopsis, options, footer sections and see-also") {
  const CommandDoc root = SmallTree();
  const std::string p = ManPage(root.subcommands[0], root, "1.2.3");
  CHECK(p.rfind(".TH PLUMB\\-PLAN 1 ", 0) == 0);
  CHECK(Has(p, ".SH NAME\nplumb\\-plan \\- Make a plan\n"));   // the first line only
  CHECK(Has(p, ".SH SYNOPSIS\n.B plumb plan\n[\\fIOPTIONS\\fR] [\\fIOUT\\fR]\n"));
  CHECK(Has(p, ".SH DESCRIPTION\nMake a plan\nof what would change\n.PP\nReads every node.\n"));
  CHECK(Has(p, ".TP\n\\fB\\-\\-format\\fR \\fITEXT\\fR\nOutput format\n.br\nOne of: text, json\n"));
  CHECK(Has(p, ".TP\n\\fB\\-\\-resume\\fR [\\fIRUN\\fR]\nResume a run\n"));
  CHECK(Has(p, ".TP\n\\fIout\\fR\nWhere to write it\n"));
  CHECK(Has(p, ".SH EXAMPLES\n.nf\n  plumb plan \\-\\-limit gpu01\n.fi\n"));
  CHECK(Has(p, ".SH EXIT STATUS\n.nf\n  0  ok\n.fi\n"));
  CHECK_FALSE(Has(p, "Examples:"));   // the titles become sections
  CHECK(p.substr(p.find(".SH SEE ALSO")) == ".SH SEE ALSO\n\\fBplumb\\fR(1), \\fBplumb\\-repo\\fR(5)\n");
}

TEST_CASE("man: a nested command is a subsection of its verb's page") {
  const CommandDoc root = SmallTree();
  const std::string p = ManPage(root.subcommands[1], root, "1.2.3");
  CHECK(Has(p, ".B plumb bmc\n[\\fIOPTIONS\\fR] \\fISUBCOMMAND\\fR\n"));
  CHECK(Has(p, ".SH SUBCOMMANDS\n.SS plumb bmc inventory\n.B plumb bmc inventory\n"
               "[\\fIOPTIONS\\fR] \\fINODE\\fR\n.PP\nRead a BMC's inventory\n"
               ".TP\n\\fInode\\fR\nThe node\n.br\nRequired.\n"));
  CHECK_FALSE(Has(p, ".SH OPTIONS"));   // plumb bmc has none of its own
}

TEST_CASE("man: plumb(1) lists the verbs, the global options and the exit codes") {
  const std::string p = RootManPage(SmallTree(), "1.2.3");
  CHECK(p.rfind(".TH PLUMB 1 \"\" \"plumb 1.2.3\" \"plumb manual\"\n", 0) == 0);
  CHECK(Has(p, ".SH DESCRIPTION\nKeep a cluster where git says.\n.PP\n"));
  CHECK(Has(p, ".SH COMMANDS\n.TP\n\\fBplumb\\-plan\\fR(1)\nMake a plan\nof what would change\n"
               ".TP\n\\fBplumb\\-bmc\\fR(1)\nTalk to BMCs: read, apply\n.SH OPTIONS\n"));
  CHECK(Has(p, ".TP\n\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR\nSay more: every step\n"));
  CHECK(Has(p, "\\fB\\-\\-color\\fR \\fITEXT\\fR\nColour\n.br\nOne of: auto, always, never\n"
               ".br\nDefault: auto\n"));
  CHECK(Has(p, ".SH EXIT STATUS\n.nf\nExit codes:\n  0  success\n.fi\n"));
  CHECK(Has(p, ".SH SEE ALSO\n\\fBplumb\\-repo\\fR(5), \\fBplumb\\-plan\\fR(1), \\fBplumb\\-bmc\\fR(1)\n"));
}

TEST_CASE("man: plumb-repo(5) describes each file's keys from its embedded schema") {
  const std::string p = RepoManPage("1.2.3");
  CHECK(p.rfind(".TH PLUMB\\-REPO 5 ", 0) == 0);
  CHECK(Has(p, ".SH INVENTORY.YAML\nThe nodes of one cluster, their SSH/BMC access and their groups.\n"));
  CHECK(Has(p, ".TP\n\\fBnodes\\fR (\\fIarray\\fR)\nA list of nodes.\n"));
  CHECK(Has(p, ".TP\n\\fBnodes[].name\\fR"));   // an array's items, one level down
  CHECK(Has(p, ".SH WAIVERS.YAML\n"));
  CHECK(p.find(".SH INVENTORY.YAML") < p.find(".SH WAIVERS.YAML"));
}

TEST_CASE("man: the pages of a tree, each at its path under the man directory") {
  const CommandDoc root = SmallTree();
  const auto pages = ManPages(root, "1.2.3");
  REQUIRE(pages.size() == 2 + root.subcommands.size());
  CHECK(pages[0].first == "man1/plumb.1");
  CHECK(pages[0].second == RootManPage(root, "1.2.3"));
  CHECK(pages[1].first == "man5/plumb-repo.5");
  CHECK(pages[1].second == RepoManPage("1.2.3"));
  for (size_t i = 0; i < root.subcommands.size(); ++i) {
    CHECK(pages[2 + i].first == "man1/" + ManPageName(root.subcommands[i].path) + ".1");
    CHECK(pages[2 + i].second == ManPage(root.subcommands[i], root, "1.2.3"));
  }
  CHECK(pages[2].first == "man1/plumb-plan.1");
}
