// A big file's long sequence read in pieces must give exactly the document the whole read
// gives (values, and where each value and key was written), or not be used at all.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "schemas/yaml_json.h"
#include "schemas/yaml_split.h"

using namespace plumb;
using namespace plumb::schemas;

namespace {

// The whole read (ParseYaml reads files under 1 MB whole).
YamlDocument Whole(const std::string& text) {
  Diagnostics d;
  auto doc = ParseYaml(text, "inventory.yaml", d);
  REQUIRE(doc);
  REQUIRE(d.empty());
  return std::move(*doc);
}

std::map<std::string, std::string> Texts(const std::map<std::string, Location>& marks) {
  std::map<std::string, std::string> out;
  for (const auto& [pointer, at] : marks) out[pointer] = at.ToString();
  return out;
}

void CheckSame(const YamlDocument& pieces, const YamlDocument& whole) {
  CHECK(pieces.json == whole.json);
  CHECK(Texts(pieces.marks.value) == Texts(whole.marks.value));
  CHECK(Texts(pieces.marks.key) == Texts(whole.marks.key));
  CHECK(pieces.marks.scalar_text == whole.marks.scalar_text);
}

// Items in every form an inventory takes: flow maps, block maps over several lines, nested
// lists, numbers read from text, quoted text, comments and blank lines between items, an
// anchor used inside its own item.
std::string Inventory(int nodes, int indent, const std::string& eol = "\n") {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::string t = "# generated" + eol + "cluster: demo" + eol + "defaults:" + eol +
                  "  ssh: { user: root }" + eol + "nodes:" + eol + "  # the fleet" + eol;
  for (int i = 0; i < nodes; ++i) {
    switch (i % 5) {
      case 0:
        t += fmt::format("{}- {{ name: gpu{:05}, address: 10.0.{}.{}, groups: [gpu, rack{}] }}{}",
                         pad, i, i / 250, i % 250, i / 16, eol);
        break;
      case 1:
        t += fmt::format("{}- name: gpu{:05}{}{}  address: \"gpu{:05}.example\"{}{}  ssh_port: {}{}",
                         pad, i, eol, pad, i, eol, pad, 2200 + i, eol);
        break;
      case 2:
        t += fmt::format("{}-   name: 'gpu{:05}'   # spaced{}{}    labels:{}{}      - a{}{}      - "
                         "1.5{}{}",
                         pad, i, eol, pad, eol, pad, eol, pad, eol, eol);   // blank line after
        break;
      case 3:
        t += fmt::format("{}- name: gpu{:05}{}{}  bmc: &b{} https://bmc{}.example{}{}  note: *b{}{}",
                         pad, i, eol, pad, i, i, eol, pad, i, eol);
        break;
      default:
        t += fmt::format("{}- {{ name: gpu{:05}, weight: 12.10 }}  # a comment{}# column 0{}", pad,
                         i, eol, eol);
    }
  }
  t += "groups:" + eol + "  gpu: { stack: s }" + eol;
  return t;
}

}  // namespace

TEST_CASE("FindLongSequence: the top-level sequence with the most items, its items' lines") {
  const std::string text = "a:\n  - 1\n  - 2\nnodes:\n\n  - x\n  -\n    y: 1\n  # c\n  - z\nb: 1\n";
  auto seq = FindLongSequence(text, 2);
  REQUIRE(seq);
  CHECK(seq->key == "nodes");
  CHECK(seq->indent == 2);
  CHECK(seq->item_lines == std::vector<int>{6, 7, 10});
  CHECK(text.substr(seq->begin, 5) == "  - x");
  CHECK(text.substr(seq->end) == "b: 1\n");
  CHECK(!FindLongSequence(text, 4));
  SUBCASE("at column 0, to the end of the text") {
    auto s = FindLongSequence("k: 1\nlist:\n- a\n- b\n- c\n", 3);
    REQUIRE(s);
    CHECK(s->indent == 0);
    CHECK(s->key_line == 2);
    CHECK(s->end == std::string("k: 1\nlist:\n- a\n- b\n- c\n").size());
  }
  SUBCASE("not offered: a line ending it at an indentation of its own, a tab, a value on the key's line") {
    CHECK(!FindLongSequence("nodes:\n  - a\n  - b\n - c\n", 2));
    CHECK(!FindLongSequence("nodes:\n  - a\n\t- b\n", 1));
    CHECK(!FindLongSequence("nodes: &x\n  - a\n  - b\n", 1));
    CHECK(!FindLongSequence("nodes:\n  key: v\n", 1));
  }
}

TEST_CASE("ParseYamlInPieces: the same document as the whole read, in any number of pieces") {
  for (int indent : {0, 2})
    for (const std::string eol : {"\n", "\r\n"}) {
      CAPTURE(indent);
      CAPTURE(eol.size());
      const std::string text = Inventory(203, indent, eol);
      const YamlDocument whole = Whole(text);
      REQUIRE(whole.json["nodes"].size() == 203);
      for (size_t pieces : {2, 3, 7, 64, 500}) {
        CAPTURE(pieces);
        auto doc = ParseYamlInPieces(text, "inventory.yaml", 100, pieces);
        REQUIRE(doc);
        CheckSame(*doc, whole);
      }
      CHECK(!ParseYamlInPieces(text, "inventory.yaml", 204, 4));   // too few items
    }
}

TEST_CASE("ParseYamlInPieces: nothing when a piece would not read as the whole file does") {
  const std::string base = Inventory(40, 2);
  auto with = [&](const std::string& item) {
    std::string t = base;
    t.insert(t.rfind("groups:\n"), item);
    return t;
  };
  // An alias to an anchor outside the piece (the whole read expands it).
  CHECK(!ParseYamlInPieces("defaults: &d { user: root }\n" + with("  - { <<: *d, name: x }\n"),
                           "i.yaml", 10, 4));
  // A duplicate key: the whole read says so, with its line.
  CHECK(!ParseYamlInPieces(with("  - { name: x, name: y }\n"), "i.yaml", 10, 4));
  // A quoted value over lines, one of which looks like an item: a cut here would split it.
  const std::string quoted = with("  - note: \"first\n  - second\"\n");
  CHECK(Whole(quoted).json["nodes"].back()["note"] == "first - second");
  // Cut there, the first part ends inside the quote; cut elsewhere, the part holding both
  // lines has one item fewer than the lines counted.
  for (size_t pieces = 2; pieces < 12; ++pieces) CHECK(!ParseYamlInPieces(quoted, "i.yaml", 10, pieces));
  // Two documents, and the key given twice: the whole read's errors.
  CHECK(!ParseYamlInPieces(base + "---\nx: 1\n", "i.yaml", 10, 4));
  CHECK(!ParseYamlInPieces(base + "nodes: 1\n", "i.yaml", 10, 4));
}

TEST_CASE("ParseYamlInPieces: constructs cut at a piece's end are refused, not read as a different document") {
  // 40 item lines; with 2 pieces the cut falls before item line 20.
  auto items = [](int from, int to) {
    std::string t;
    for (int i = from; i < to; ++i) t += fmt::format("  - {{ name: n{} }}\n", i);
    return t;
  };
  // A quote over two lines, the second of which looks like an item and is where the cut is.
  const std::string cut_quote = "nodes:\n" + items(0, 19) + "  - note: \"first\n  - second\"\n" +
                                items(21, 40) + "k: 1\n";
  REQUIRE(Whole(cut_quote).json["nodes"].size() == 39);
  REQUIRE(FindLongSequence(cut_quote, 10)->item_lines[20] == 22);   // the cut is on it
  CHECK(!ParseYamlInPieces(cut_quote, "i.yaml", 10, 2));
  // A flow list over two lines, cut the same way.
  const std::string cut_flow = "nodes:\n" + items(0, 19) + "  - [a,\n  - b]\n" + items(21, 40);
  CHECK(!ParseYamlInPieces(cut_flow, "i.yaml", 10, 2));
  // The last item's quote closed on the column-0 line after the sequence: one value in the
  // whole read, a value and a new key in pieces.
  const std::string last_quote = "nodes:\n" + items(0, 39) + "  - note: \"maint window\nx: 1\"\n";
  CHECK(Whole(last_quote).json["nodes"].back()["note"] == "maint window x: 1");
  CHECK(!Whole(last_quote).json.contains("x"));
  for (size_t pieces : {2, 3, 5}) CHECK(!ParseYamlInPieces(last_quote, "i.yaml", 10, pieces));
}

TEST_CASE("ParseYamlInPieces: empty items and empty values at a cut are marked where the whole read marks them") {
  std::string text = "nodes:\n";
  for (int i = 0; i < 30; ++i) {
    if (i % 3 == 0) text += "  -\n";
    else if (i % 3 == 1) text += fmt::format("  - name: n{}\n    labels:\n", i);
    else text += fmt::format("  - name: n{}\n    # trailing comment\n\n", i);
  }
  for (const std::string& tail : {std::string("groups: {}\n"), std::string("")}) {
    const std::string t = text + tail;
    const YamlDocument whole = Whole(t);
    for (size_t pieces = 2; pieces <= 10; ++pieces) {
      CAPTURE(pieces);
      auto doc = ParseYamlInPieces(t, "inventory.yaml", 10, pieces);
      REQUIRE(doc);
      CheckSame(*doc, whole);
    }
  }
}

TEST_CASE("ParseYamlInPieces: a key that is not the document's own, directives, anchors used after: read whole") {
  std::string items;
  for (int i = 0; i < 30; ++i) items += fmt::format("  - {{ name: n{} }}\n", i);
  // `nodes:` inside a flow mapping the document opens on line 1.
  CHECK(!ParseYamlInPieces("{\nnodes:\n" + items + "}\n", "i.yaml", 10, 3));
  // `nodes:` inside another key's quoted value; the document's own nodes: is empty.
  const std::string in_quote = "nodes:\nb: \"\nnodes:\n" + items + "\"\n";
  CHECK(Whole(in_quote).json["nodes"].is_null());
  CHECK(!ParseYamlInPieces(in_quote, "i.yaml", 10, 3));
  // %TAG gives tags a meaning only the whole read has.
  CHECK(!FindLongSequence("%TAG !e! tag:example.com,2000:\n---\nnodes:\n" + items, 10));
  // An anchor defined again in an item, and an alias after the list: the latest one counts.
  const std::string anchors = "base: &d { u: root }\nnodes:\n  - &d { u: admin }\n" + items +
                              "later: *d\n";
  CHECK(Whole(anchors).json["later"]["u"] == "admin");
  CHECK(!ParseYamlInPieces(anchors, "i.yaml", 10, 3));
  // A last line without its newline.
  std::string no_newline = "nodes:\n" + items;
  no_newline.pop_back();
  CHECK(!FindLongSequence(no_newline, 10));
}

TEST_CASE("ParseYaml: a file over 1 MB is read in pieces, and its problems are still found with their lines") {
  const std::string text = Inventory(16000, 2);
  REQUIRE(text.size() > (1u << 20));
  Diagnostics d;
  auto doc = ParseYaml(text, "inventory.yaml", d);
  REQUIRE(doc);
  CHECK(d.empty());
  CHECK(doc->json["nodes"].size() == 16000);
  CHECK(doc->json["nodes"][15999]["name"] == "gpu15999");
  REQUIRE(ParseYamlInPieces(text, "inventory.yaml", 2048, 2));
  CheckSame(*ParseYamlInPieces(text, "inventory.yaml", 2048, 2),
            *ParseYamlInPieces(text, "inventory.yaml", 2048, 1000));
  // The same file with one item's key written twice, deep in it: the whole read's error.
  std::string bad = text;
  const size_t at = bad.find("name: gpu09000");   // a flow mapping
  bad.insert(at, "name: again, ");
  Diagnostics bd;
  ParseYaml(bad, "inventory.yaml", bd);
  REQUIRE(bd.items().size() == 1);
  CHECK(bd.items()[0].code == "yaml.duplicate-key");
  const int line = 1 + static_cast<int>(std::count(bad.begin(), bad.begin() + at, '\n'));
  CHECK(bd.items()[0].where.line == line);
  // A quote never closed, far down: said, as by the whole read.
  std::string open = text;
  open.insert(open.find("gpu11000"), "\"");
  Diagnostics od;
  CHECK(!ParseYaml(open, "inventory.yaml", od));
  CHECK(!od.empty());
}
