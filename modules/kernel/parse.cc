#include "modules/kernel/parse.h"

#include <charconv>

#include "modules/module_util.h"
#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::kernel {
namespace {

bool IsReleaseChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '-' || c == '_' || c == '+' || c == '~';
}

// One word of grub.cfg, starting at `s[*i]`, as GRUB's shell-like lexer reads it: single-quoted
// ('it'\''s' is "it's", what grub-mkconfig writes), double-quoted with backslash escapes, or
// bare up to a blank (a hand-written 40_custom entry may use either).
bool QuotedWord(std::string_view s, size_t* i, std::string* out) {
  out->clear();
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t')) ++*i;
  if (*i >= s.size() || s[*i] == '{') return false;
  bool any = false;
  while (*i < s.size() && s[*i] != ' ' && s[*i] != '\t') {
    const char c = s[*i];
    if (c == '\'') {
      size_t end = s.find('\'', *i + 1);
      if (end == std::string_view::npos) return false;
      out->append(s.substr(*i + 1, end - *i - 1));
      *i = end + 1;
    } else if (c == '"') {
      size_t j = *i + 1;
      for (; j < s.size() && s[j] != '"'; ++j) {
        if (s[j] == '\\' && j + 1 < s.size()) ++j;
        out->push_back(s[j]);
      }
      if (j >= s.size()) return false;
      *i = j + 1;
    } else if (c == '\\' && *i + 1 < s.size()) {
      out->push_back(s[*i + 1]);
      *i += 2;
    } else {
      out->push_back(c);
      ++*i;
    }
    any = true;
  }
  return any;
}

struct GrubEntry {
  std::string title, id, release;   // release: from the entry's linux line
  std::vector<GrubEntry> children;  // a submenu's entries
};

// `menuentry 'Title' --class x $menuentry_id_option 'id' {` -> title and id.
bool ReadEntryLine(std::string_view line, std::string_view keyword, GrubEntry* e) {
  size_t i = line.find(keyword) + keyword.size();
  if (!QuotedWord(line, &i, &e->title)) return false;
  size_t opt = line.find("$menuentry_id_option", i);
  if (opt != std::string_view::npos) {
    i = opt + std::string_view("$menuentry_id_option").size();
    if (!QuotedWord(line, &i, &e->id)) return false;
  }
  return true;
}

// One step of a default path: an index, a title or an id.
const GrubEntry* FindStep(const std::vector<GrubEntry>& level, std::string_view step) {
  bool digits = !step.empty();
  for (char c : step) digits = digits && c >= '0' && c <= '9';
  if (digits) {
    // An index too big for size_t is as absent as any other index past the end.
    size_t n = 0;
    auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), n);
    return ec == std::errc() && end == step.data() + step.size() && n < level.size() ? &level[n] : nullptr;
  }
  for (const GrubEntry& e : level)
    if (e.title == step || e.id == step) return &e;
  return nullptr;
}

}  // namespace

Result<std::string> ParseGrubbyDefault(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.size() != 1) return ParseError("kernel", "grubby --default-kernel", "not one line");
  std::string_view path = Trim(lines[0].text);
  constexpr std::string_view kPrefix = "/boot/vmlinuz-";
  if (!StartsWith(path, kPrefix) || path.size() == kPrefix.size())
    return ParseError("kernel", "grubby --default-kernel", "not /boot/vmlinuz-<release>", &lines[0]);
  std::string_view r = path.substr(kPrefix.size());
  for (char c : r)
    if (!IsReleaseChar(c)) return ParseError("kernel", "grubby --default-kernel", "unexpected release", &lines[0]);
  return std::string(r);
}

namespace {

constexpr std::string_view kGrubTool = "grub.cfg + grub-editenv list";

// The menu as the probe's "boot" part shows it: grub.cfg's deciding lines, "---", grubenv.
struct GrubMenu {
  std::vector<GrubEntry> top;
  std::string set_default, saved_entry, next_entry;
};

Result<GrubMenu> ParseGrubMenu(std::string_view text) {
  GrubMenu m;
  bool in_submenu = false, env = false;
  GrubEntry* current = nullptr;   // the entry whose linux line comes next
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (t == "---") {
      env = true;
      continue;
    }
    if (env) {
      if (StartsWith(t, "saved_entry=")) m.saved_entry = std::string(t.substr(12));
      if (StartsWith(t, "next_entry=")) m.next_entry = std::string(t.substr(11));
      continue;
    }
    if (line.text == "}") {   // column 0: a top-level entry or submenu ends
      in_submenu = false;
      current = nullptr;
      continue;
    }
    if (StartsWith(t, "set default=")) {
      std::string_view v = t.substr(12);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      if (v != "${next_entry}") m.set_default = std::string(v);
    } else if (StartsWith(t, "submenu ")) {
      // A line this reader cannot take apart still holds its place (index paths count it);
      // it just has no title or id to be found by.
      GrubEntry e;
      if (!ReadEntryLine(t, "submenu", &e)) e = GrubEntry{};
      m.top.push_back(std::move(e));
      in_submenu = true;
      current = nullptr;
    } else if (StartsWith(t, "menuentry ")) {
      GrubEntry e;
      if (!ReadEntryLine(t, "menuentry", &e)) e = GrubEntry{};
      auto& level = in_submenu ? m.top.back().children : m.top;
      level.push_back(std::move(e));
      current = &level.back();
    } else if (StartsWith(t, "linux") && current && current->release.empty()) {
      auto words = SplitWhitespace(t);
      constexpr std::string_view kVmlinuz = "/boot/vmlinuz-";
      if (words.size() >= 2) {
        size_t at = words[1].find(kVmlinuz);
        // /vmlinuz-X when /boot is its own partition
        if (at == std::string_view::npos && StartsWith(words[1], "/vmlinuz-"))
          current->release = std::string(words[1].substr(9));
        else if (at != std::string_view::npos)
          current->release = std::string(words[1].substr(at + kVmlinuz.size()));
      }
    }
  }
  if (m.top.empty()) return ParseError("kernel", kGrubTool, "no menu entries in grub.cfg");
  return m;
}

bool IsRecovery(const GrubEntry& e) {
  return e.title.find("(recovery mode)") != std::string::npos ||
         e.id.find("-recovery-") != std::string::npos;
}

}  // namespace

Result<std::string> ParseGrubNextBoot(std::string_view text) {
  auto menu = ParseGrubMenu(text);
  if (!menu.ok()) return menu.error();
  const GrubMenu& m = *menu;
  std::string entry = m.set_default == "${saved_entry}" ? m.saved_entry : m.set_default;
  if (!m.next_entry.empty()) entry = m.next_entry;
  if (entry.empty()) entry = "0";
  const GrubEntry* e = nullptr;
  const std::vector<GrubEntry>* level = &m.top;
  for (std::string_view step : Split(entry, ">")) {
    e = level ? FindStep(*level, step) : nullptr;
    if (!e) break;
    level = &e->children;
  }
  if (!e || !e->children.empty()) e = &m.top[0];   // GRUB falls back to the first entry
  if (e->release.empty())
    return ParseError("kernel", kGrubTool, "the default entry '" + e->title + "' boots no /boot/vmlinuz-*");
  return e->release;
}

Result<std::string> GrubEntryFor(std::string_view text, std::string_view release) {
  auto menu = ParseGrubMenu(text);
  if (!menu.ok()) return menu.error();
  // Candidates in menu order, each with its path; the entry named after the release wins
  // over one that only boots it today (Ubuntu's top "Ubuntu" entry boots whichever kernel is
  // newest, so saving it would follow the next kernel installed).
  struct Found {
    std::string path;
    bool named;
  };
  std::vector<Found> found;
  auto step = [](const GrubEntry& e) { return e.id.empty() ? e.title : e.id; };
  auto consider = [&](const GrubEntry& e, const std::string& prefix) {
    if (e.release != release || IsRecovery(e)) return;
    const bool named = e.id.find(release) != std::string::npos ||
                       e.title.find(release) != std::string::npos;
    found.push_back({prefix + step(e), named});
  };
  for (const GrubEntry& e : menu->top) {
    if (e.children.empty()) consider(e, "");
    for (const GrubEntry& c : e.children) consider(c, step(e) + ">");
  }
  for (const Found& f : found)
    if (f.named) return f.path;
  if (!found.empty()) return found.front().path;
  return ParseError("kernel", kGrubTool,
                    "no menu entry boots /boot/vmlinuz-" + std::string(release) +
                        " (is the kernel installed, and was update-grub run?)");
}

Result<std::string> ParseUnameRelease(std::string_view text) {
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  if (lines.empty()) return ParseError("kernel", "uname -r", "empty output");
  if (truncated) return ParseError("kernel", "uname -r", "output cut short", &lines.back());
  std::string_view r = lines[0].text;
  if (r.empty() || r.size() > 128) return ParseError("kernel", "uname -r", "unexpected release", &lines[0]);
  for (char c : r)
    if (!IsReleaseChar(c)) return ParseError("kernel", "uname -r", "unexpected release", &lines[0]);
  if (lines.size() != 1) return ParseError("kernel", "uname -r", "more than one line", &lines[1]);
  return std::string(r);
}

Result<std::string> ParseBootId(std::string_view text) {
  auto lines = SplitLines(text);
  if (lines.empty()) return ParseError("kernel", "boot_id", "empty output");
  std::string_view id = Trim(lines[0].text);
  bool ok = id.size() == 36;
  for (size_t i = 0; ok && i < id.size(); ++i) {
    char c = id[i];
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    ok = dash ? c == '-' : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
  if (!ok || lines.size() != 1) return ParseError("kernel", "boot_id", "not a UUID", &lines[0]);
  return std::string(id);
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out("kernel", {{"release", nullptr}, {"boot_id", nullptr}, {"next_boot", nullptr},
                           {"manager", PackageManagerOf(parts)}});
  nlohmann::json& facts = out.facts();
  if (const ProbePart* rel = FindPart(parts, "release")) {
    out.Read("release", [&]() -> Status {
      auto r = ParseUnameRelease(rel->text);
      if (!r.ok()) return r.error();
      facts["release"] = *r;
      return OkStatus();
    });
  } else {
    out.Fail("release", ParseError("kernel", "probe", "no 'release' part"));
  }
  if (const ProbePart* b = FindPart(parts, "boot_id"); b && !b->absent()) {
    out.Read("boot_id", [&]() -> Status {
      auto id = ParseBootId(b->text);
      if (!id.ok()) return id.error();
      facts["boot_id"] = *id;
      return OkStatus();
    });
  }
  // What boots next: grubby on RHEL, GRUB's own files on Debian/Ubuntu. Best effort: a node
  // without them is not judged on it (next_boot stays null).
  if (const ProbePart* b = FindPart(parts, "boot"); b && !b->absent() && b->exit_status == 0) {
    auto next = StartsWith(b->text, "/boot/vmlinuz-") ? ParseGrubbyDefault(b->text)
                                                     : ParseGrubNextBoot(b->text);
    if (next.ok()) facts["next_boot"] = *next;
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::kernel
