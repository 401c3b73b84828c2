#include <doctest/doctest.h>

#include "schemas/json_pointer.h"
#include "schemas/yaml_json.h"

using namespace plumb;
using namespace plumb::schemas;

TEST_CASE("yaml: scalars follow the core schema; quoted scalars stay text") {
  Diagnostics d;
  auto doc = ParseYaml(
      "a: 12\nb: 12.4\nc: \"12.4\"\nd: 550.90.07\ne: true\nf: yes\ng: ~\nh:\ni: '1'\n"
      "j: 2026-12-31\nk: !!str 7\nl: -3\nm: 99999999999999999999999\n",
      "t.yaml", d);
  REQUIRE(doc);
  CHECK(d.empty());
  const auto& j = doc->json;
  CHECK(j["a"] == 12);
  CHECK(j["b"].is_number_float());
  CHECK(j["c"] == "12.4");
  CHECK(j["d"] == "550.90.07");
  CHECK(j["e"] == true);
  CHECK(j["f"] == "yes");  // YAML 1.2: only true/false are booleans
  CHECK(j["g"].is_null());
  CHECK(j["h"].is_null());
  CHECK(j["i"] == "1");
  CHECK(j["j"] == "2026-12-31");
  CHECK(j["k"] == "7");
  CHECK(j["l"] == -3);
  CHECK(j["m"] == "99999999999999999999999");  // out of range: kept as written
  CHECK(doc->marks.scalar_text.at("/b") == "12.4");
}

TEST_CASE("yaml: every value and key has a 1-based file:line:column") {
  Diagnostics d;
  auto doc = ParseYaml("nvidia:\n  driver: 550.90.07\nlist:\n  - x\n  - { k: v }\n", "s.yaml", d);
  REQUIRE(doc);
  CHECK(doc->marks.At("/nvidia/driver").ToString() == "s.yaml:2:11");
  CHECK(doc->marks.KeyAt("/nvidia/driver").ToString() == "s.yaml:2:3");
  CHECK(doc->marks.At("/list/0").ToString() == "s.yaml:4:5");
  CHECK(doc->marks.At("/list/1/k").ToString() == "s.yaml:5:10");
  CHECK(doc->marks.KeyAt("/list/1/k").ToString() == "s.yaml:5:7");
  // A pointer with no mark falls back to its nearest parent.
  CHECK(doc->marks.At("/nvidia/cuda").ToString() == "s.yaml:2:3");
}

TEST_CASE("yaml: an empty value is marked on its key's line, not where the next token starts") {
  Diagnostics d;
  // yaml-cpp marks `kernel:`'s null at the next key (line 3), the last one's past the end.
  auto doc = ParseYaml("nvidia: { driver: 550.90.07 }\nkernel:\n# a comment\nofed:\n  version:\n"
                       "nccl: ~\nlast:",
                       "s.yaml", d);
  REQUIRE(doc);
  CHECK(d.empty());
  CHECK(doc->json["kernel"].is_null());
  CHECK(doc->marks.At("/kernel").ToString() == "s.yaml:2:1");
  CHECK(doc->marks.At("/ofed/version").ToString() == "s.yaml:5:3");
  CHECK(doc->marks.At("/last").ToString() == "s.yaml:7:1");
  // A null written out is marked where it is written.
  CHECK(doc->marks.At("/nccl").ToString() == "s.yaml:6:7");
  // So are empty values taken through a merge key, at the anchor's key.
  doc = ParseYaml("base: &b\n  kernel:\n  ofed: x\nnode:\n  <<: *b\n", "m.yaml", d);
  REQUIRE(doc);
  CHECK(doc->marks.At("/node/kernel").ToString() == "m.yaml:2:3");
}

TEST_CASE("yaml: keys with '/' and '~' are escaped in pointers") {
  Diagnostics d;
  auto doc = ParseYaml("sysctl:\n  net/ipv4/x~y: 1\n", "s.yaml", d);
  REQUIRE(doc);
  CHECK(doc->marks.At("/sysctl/net~1ipv4~1x~0y").line == 2);
  CHECK(KeyPath("/sysctl/net~1ipv4~1x~0y", doc->json) == "sysctl.net/ipv4/x~y");
  CHECK(PointerTokens("/a~1b/~0") == std::vector<std::string>{"a/b", "~"});
}

TEST_CASE("yaml: duplicate keys are errors at the second key, naming the first") {
  Diagnostics d;
  auto doc = ParseYaml("kernel: a\nnvidia:\n  driver: 1\n  driver: 2\nkernel: b\n", "s.yaml", d);
  REQUIRE(doc);
  REQUIRE(d.ErrorCount() == 2);
  CHECK(d.items()[0].ToString() ==
        "s.yaml:4:3: error: duplicate key 'driver' [key: nvidia.driver]\n"
        "  hint: 'driver' is already set at line 3; a key may appear once per mapping");
  CHECK(d.items()[1].where.ToString() == "s.yaml:5:1");
  CHECK(doc->json["kernel"] == "a");  // the first one is kept
}

TEST_CASE("yaml: syntax errors are located, never thrown") {
  for (const char* bad : {"a: [1, 2\n", "a: b: c\n", "[a, b\n", "\t- x\n",
                          "*unknown_alias\n", "a: &x 1\nb: *y\n"}) {
    CAPTURE(bad);
    Diagnostics d;
    auto doc = ParseYaml(bad, "bad.yaml", d);
    CHECK_FALSE(doc);
    REQUIRE(d.ErrorCount() == 1);
    // A tab in the indentation is named as such; every other error is yaml-cpp's, located.
    CHECK(d.items()[0].code == (std::string(bad)[0] == '\t' ? "yaml.tab" : "yaml.syntax"));
    CHECK(d.items()[0].where.file == "bad.yaml");
    CHECK(d.items()[0].where.line >= 1);
  }
}

TEST_CASE("yaml: a tab in the indentation is named, at its line and column") {
  Diagnostics d;
  CHECK_FALSE(ParseYaml("kernel: a\nsysctl:\n  vm.swappiness: 1\n \tnet.core.rmem_max: 2\n",
                        "s.yaml", d));
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].ToString() ==
        "s.yaml:4:2: error: a tab is used for indentation; YAML allows spaces only\n"
        "  hint: replace the tab(s) at the start of this line with spaces");
  // A tab inside a value is no indentation: the file parses.
  Diagnostics ok;
  CHECK(ParseYaml("motd: \"a\\tb\"\nnote: x\ty\nk: 1\n", "ok.yaml", ok));
  CHECK(ok.ErrorCount() == 0);
}

TEST_CASE("yaml: an unclosed quote is named where it opens, not where the parser gave up") {
  Diagnostics d;
  CHECK_FALSE(ParseYaml("kernel: a\nnvidia:\n  driver: \"550.90.07\n  cuda: '12.4'\n"
                        "packages:\n  a: b\n  c: [d\n",
                        "s.yaml", d));
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].code == "yaml.quote");
  CHECK(d.items()[0].where.ToString() == "s.yaml:3:11");
  // An apostrophe inside a plain value opens nothing: another error stays yaml-cpp's own.
  Diagnostics other;
  CHECK_FALSE(ParseYaml("reason: don't touch\nx: [1, 2\n", "o.yaml", other));
  REQUIRE(other.ErrorCount() == 1);
  CHECK(other.items()[0].code == "yaml.syntax");
  // Quotes closed on their line, escapes and '' inside, a quote spanning lines, quotes in a
  // block scalar: nothing to report, the file parses.
  Diagnostics fine;
  CHECK(ParseYaml("a: \"x \\\" y\"\nb: 'it''s'\nc: [\"p\", 'q']\nd: \"one\n  two\"\n"
                  "motd: |\n  \"quoted start\n  'and another\ne: 1\n",
                  "f.yaml", fine));
  CHECK(fine.ErrorCount() == 0);
  // yaml-cpp takes a quote left open at the end of the file and reads the rest into it.
  Diagnostics eof;
  CHECK_FALSE(ParseYaml("kernel: a\nnvidia: { driver: \"550.90.07 }\nofed: x\n", "e.yaml", eof));
  REQUIRE(eof.ErrorCount() == 1);
  CHECK(eof.items()[0].code == "yaml.quote");
  CHECK(eof.items()[0].where.ToString() == "e.yaml:2:19");
}

TEST_CASE("yaml: a second document is an error, not silently dropped") {
  for (const char* text : {"kernel: a\n---\nkernel: b\n", "---\n# only a comment\n---\nkernel: b\n"}) {
    CAPTURE(text);
    Diagnostics d;
    CHECK_FALSE(ParseYaml(text, "s.yaml", d));
    REQUIRE(d.ErrorCount() == 1);
    CHECK(d.items()[0].code == "yaml.documents");
    CHECK(d.items()[0].where.line >= 3);   // at the second document's first value
  }
  Diagnostics one;
  CHECK(ParseYaml("---\nkernel: a\n", "s.yaml", one));   // one document, marked: fine
  CHECK(one.ErrorCount() == 0);
}

TEST_CASE("yaml: non-scalar keys and absurd nesting are errors") {
  Diagnostics d;
  auto doc = ParseYaml("? [a, b]\n: 1\n", "k.yaml", d);
  REQUIRE(doc);
  CHECK(d.items().at(0).code == "yaml.bad-key");
  Diagnostics d2;
  std::string deep(200, '[');
  auto doc2 = ParseYaml(deep + std::string(200, ']'), "deep.yaml", d2);
  CHECK(d2.HasErrors());
}

TEST_CASE("yaml: empty text is a null document") {
  Diagnostics d;
  auto doc = ParseYaml("", "e.yaml", d);
  REQUIRE(doc);
  CHECK(doc->json.is_null());
  CHECK(d.empty());
}

TEST_CASE("yaml: alias bombs stop at a budget instead of eating the machine") {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string prev = "a";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string name(1, c);
    bomb += name + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) bomb += (i ? ", *" : "*") + prev;
    bomb += "]\n";
    prev = name;
  }
  Diagnostics d;
  auto doc = ParseYaml(bomb, "bomb.yaml", d);  // 10^9 values if expanded
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].code == "yaml.too-large");
  // No fragment comes back: checked further, it would add false "missing key" errors.
  CHECK_FALSE(doc);
}

TEST_CASE("yaml: merge keys take the anchor's entries the mapping does not set, with their marks") {
  Diagnostics d;
  auto doc = ParseYaml(
      "x-node: &node { rack: r01, groups: [h100], leaf: l1 }\n"
      "x-more: &more { leaf: l9, sku: a, <<: { deep: 1 } }\n"
      "n1: { <<: *node, name: gpu001, rack: r02 }\n"
      "n2:\n  name: gpu002\n  <<: [*more, *node]\n"
      "n3: { <<: 5 }\n",
      "m.yaml", d);
  REQUIRE(doc);
  const auto& j = doc->json;
  CHECK(j["n1"] == nlohmann::json({{"rack", "r02"}, {"groups", {"h100"}}, {"leaf", "l1"}, {"name", "gpu001"}}));
  CHECK(doc->marks.At("/n1/rack").ToString() == "m.yaml:3:38");   // explicit wins
  CHECK(doc->marks.At("/n1/leaf").ToString() == "m.yaml:1:50");   // from the anchor's text
  CHECK(j["n2"]["leaf"] == "l9");                                 // earlier source wins
  CHECK(j["n2"]["rack"] == "r01");
  CHECK(j["n2"]["deep"] == 1);                                    // nested merge
  REQUIRE(d.ErrorCount() == 1);
  CHECK(d.items()[0].code == "yaml.bad-merge");
  CHECK(d.items()[0].where.line == 7);
}
