#include "modules/dcgm/parse.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "modules/parse_util.h"
#include "modules/part_facts.h"
#include "schemas/ascii.h"

namespace plumb::modules::dcgm {
namespace {

using nlohmann::json;

constexpr std::string_view kModule = "dcgm";
constexpr std::string_view kDiagTool = "dcgmi diag";
constexpr std::string_view kDiscoveryTool = "dcgmi discovery";
constexpr const char* kHostEngineHint =
    "start the DCGM host engine (systemctl start nvidia-dcgm, or nv-hostengine) and probe again";

// dcgmi's status words ("Pass", "Fail", "Warn", "Skip"; NVVS wrote them upper-case) -> ours.
std::optional<std::string> NormalStatus(std::string_view s) {
  std::string l = schemas::AsciiLower(Trim(s));
  if (l == "pass") return "pass";
  if (l == "fail") return "fail";
  if (l == "warn" || l == "warning") return "warn";
  if (l == "skip" || l == "skipped") return "skip";
  if (l == "not run" || l == "not_run" || l == "notrun") return "not-run";
  return std::nullopt;
}

int Rank(std::string_view status) {
  if (status == "fail") return 4;
  if (status == "warn") return 3;
  if (status == "pass") return 2;
  if (status == "skip") return 1;
  return 0;
}

// An entity id written as a number (4.x) or a decimal string (3.x "gpu_id": "3").
std::optional<int> IdOf(const json& v) {
  if (v.is_number_unsigned()) {
    auto n = v.get<unsigned long long>();
    if (n <= 4096) return static_cast<int>(n);
    return std::nullopt;
  }
  if (v.is_number_integer()) {
    auto n = v.get<long long>();
    if (n >= 0 && n <= 4096) return static_cast<int>(n);
    return std::nullopt;
  }
  if (v.is_string()) {
    auto n = ParseNonNegative(Trim(v.get_ref<const std::string&>()));
    if (n && *n <= 4096) return static_cast<int>(*n);
  }
  return std::nullopt;
}

const json* Member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string StringMember(const json& obj, const char* key) {
  const json* v = Member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// "info": one string (3.x) or a list of strings (4.x).
std::vector<std::string> InfoOf(const json* v) {
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) {
    if (!v->get_ref<const std::string&>().empty()) out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    for (const auto& e : *v)
      if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

// "warnings": objects {"warning": text, "error_id": n, ...} (3.x Deployment tests write the
// text under "warnings" instead), or plain strings (older releases).
std::vector<Warning> WarningsOf(const json* v) {
  std::vector<Warning> out;
  if (!v || !v->is_array()) return out;
  for (const auto& e : *v) {
    Warning w;
    if (e.is_string()) {
      w.message = e.get<std::string>();
    } else if (e.is_object()) {
      w.message = StringMember(e, "warning");
      if (w.message.empty()) w.message = StringMember(e, "warnings");
      if (const json* id = Member(e, "error_id"); id && id->is_number_integer())
        w.error_id = id->get<int>();
    } else {
      continue;
    }
    out.push_back(std::move(w));
  }
  return out;
}

Diagnostic DiagError(std::string_view what) { return ParseError(kModule, kDiagTool, what); }

// The line of `text` that byte `offset` (0-based) is in, numbered from `first_line`.
Line LineAt(std::string_view text, size_t offset, int first_line) {
  offset = std::min(offset, text.size());
  size_t nl = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  size_t start = nl == std::string_view::npos ? 0 : nl + 1;
  size_t end = text.find('\n', start);
  int number = first_line + static_cast<int>(std::count(text.begin(), text.begin() + start, '\n'));
  return Line{number, text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)};
}

Result<std::vector<TestResult>> ResultsOf(const json& test, std::string_view test_name) {
  std::vector<TestResult> out;
  const json* results = Member(test, "results");
  if (!results) return out;
  if (!results->is_array())
    return DiagError(fmt::format("\"results\" of test '{}' is not a list", Excerpt(test_name)));
  for (const auto& r : *results) {
    if (!r.is_object())
      return DiagError(fmt::format("a result of test '{}' is not an object", Excerpt(test_name)));
    TestResult tr;
    const json* status = Member(r, "status");
    if (!status || !status->is_string())
      return DiagError(fmt::format("a result of test '{}' has no status", Excerpt(test_name)));
    auto st = NormalStatus(status->get_ref<const std::string&>());
    if (!st)
      return DiagError(fmt::format("unknown status '{}' in test '{}'",
                                   Excerpt(status->get_ref<const std::string&>()), Excerpt(test_name)));
    tr.status = *st;
    tr.warnings = WarningsOf(Member(r, "warnings"));
    tr.info = InfoOf(Member(r, "info"));
    std::vector<int> ids;
    if (const json* g = Member(r, "entity_group"); g && g->is_string()) tr.entity_group = g->get<std::string>();
    if (const json* e = Member(r, "entity_id")) {
      tr.entity_id = IdOf(*e);
      if (tr.entity_group.empty()) tr.entity_group = "GPU";
    } else if (const json* g = Member(r, "gpu_id")) {
      // 3.x: "3"; the Deployment tests write the number of the GPU an error was seen on; a
      // list ("0,1") covers each GPU it names.
      if (g->is_string() && g->get_ref<const std::string&>().find(',') != std::string::npos) {
        for (auto part : Split(g->get_ref<const std::string&>(), ","))
          if (auto id = ParseNonNegative(Trim(part)); id && *id <= 4096) ids.push_back(static_cast<int>(*id));
      } else {
        tr.entity_id = IdOf(*g);
      }
      tr.entity_group = "GPU";
    } else if (const json* c = Member(r, "cpu_id")) {
      tr.entity_id = IdOf(*c);
      tr.entity_group = "CPU";
    }
    if (!ids.empty()) {
      for (int id : ids) {
        TestResult each = tr;
        each.entity_id = id;
        each.gpu = id;
        out.push_back(std::move(each));
      }
      continue;
    }
    if (tr.entity_group == "GPU") tr.gpu = tr.entity_id;
    out.push_back(std::move(tr));
  }
  return out;
}

Diagnostic HostEngineDiagnostic(std::string_view tool, const std::string& said) {
  Diagnostic d = ParseError(kModule, tool, fmt::format("cannot reach the DCGM host engine: '{}'", Excerpt(said, 160)));
  d.hint = kHostEngineHint;
  return d;
}

// Killed by the probe's `timeout` (124) or by a signal: what came out is not the whole answer.
bool Killed(int status) { return status == 124 || (status > 128 && status <= 192); }

}  // namespace

std::optional<std::string> HostEngineError(std::string_view text) {
  std::string said;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    std::string l = schemas::AsciiLower(t);
    if (l.find("unable to establish a connection to the specified host") != std::string::npos ||
        l.find("unable to connect to host engine") != std::string::npos) {
      if (!said.empty()) said += "; ";
      said += t;
    }
  }
  if (said.empty()) return std::nullopt;
  return said;
}

Result<Diag> ParseDiagJson(std::string_view text) {
  if (auto he = HostEngineError(text); he && text.find('{') == std::string_view::npos)
    return HostEngineDiagnostic(kDiagTool, *he);
  Diag out;
  // The document starts at the first line whose first non-blank character is '{'.
  size_t doc_at = std::string_view::npos;
  int doc_line = 0;
  for (const Line& line : SplitLines(text)) {
    std::string_view t = Trim(line.text);
    if (!t.empty() && t.front() == '{') {
      doc_at = static_cast<size_t>(line.text.data() - text.data());
      doc_line = line.number;
      break;
    }
    if (!t.empty() && out.notes.size() < kMaxNotes) out.notes.push_back(Excerpt(t, 200));
  }
  if (doc_at == std::string_view::npos) {
    auto lines = SplitLines(text);
    for (const Line& line : lines)
      if (!Trim(line.text).empty()) return ParseError(kModule, kDiagTool, "expected a JSON document", &line);
    return DiagError("empty output");
  }
  std::string_view doc = text.substr(doc_at);
  json root;
  size_t consumed = 0;
  try {
    std::istringstream in{std::string(doc)};
    in >> root;
    auto pos = in.tellg();
    consumed = pos < 0 ? doc.size() : static_cast<size_t>(pos);
  } catch (const json::parse_error& e) {
    size_t at = e.byte == 0 ? 0 : e.byte - 1;
    Line line = LineAt(doc, at, doc_line);
    // Cut short: the parser ran out of document (inside a string, or between values).
    size_t end = doc.find_last_not_of(" \t\r\n");
    bool cut = std::string_view(e.what()).find("end of input") != std::string_view::npos ||
               end == std::string_view::npos || at >= end;
    return ParseError(kModule, kDiagTool, cut ? "JSON document cut short" : "not valid JSON", &line);
  } catch (const std::exception&) {
    return DiagError("not valid JSON");
  }
  for (const Line& line : SplitLines(doc.substr(std::min(consumed, doc.size())))) {
    std::string_view t = Trim(line.text);
    if (!t.empty() && out.notes.size() < kMaxNotes) out.notes.push_back(Excerpt(t, 200));
  }
  const json* diag = Member(root, "DCGM GPU Diagnostic");
  out.layout = "dcgm3";
  if (!diag) {
    diag = Member(root, "DCGM Diagnostic");
    out.layout = "dcgm4";
  }
  if (!diag || !diag->is_object())
    return DiagError("no \"DCGM GPU Diagnostic\" (DCGM 3) or \"DCGM Diagnostic\" (DCGM 4) object");
  // Versions: 3.x at the top level, 4.x under "metadata"; the failure document inside.
  const json* meta = Member(root, "metadata");
  for (const json* where : std::initializer_list<const json*>{meta, &root, diag}) {
    if (!where) continue;
    if (out.version.empty()) out.version = StringMember(*where, "version");
    if (out.driver_version.empty()) out.driver_version = StringMember(*where, "Driver Version Detected");
  }
  out.runtime_error = StringMember(*diag, "runtime_error");
  const json* categories = Member(*diag, "test_categories");
  if (!categories) {
    if (out.runtime_error.empty()) return DiagError("no \"test_categories\" and no \"runtime_error\"");
    return out;
  }
  if (!categories->is_array()) return DiagError("\"test_categories\" is not a list");
  for (const auto& cat : *categories) {
    if (!cat.is_object()) return DiagError("a test category is not an object");
    std::string category = StringMember(cat, "category");
    const json* tests = Member(cat, "tests");
    if (!tests) continue;
    if (!tests->is_array())
      return DiagError(fmt::format("\"tests\" of category '{}' is not a list", Excerpt(category)));
    for (const auto& t : *tests) {
      if (!t.is_object()) return DiagError(fmt::format("a test of category '{}' is not an object", Excerpt(category)));
      Test test;
      test.category = category;
      test.name = StringMember(t, "name");
      if (test.name.empty()) return DiagError(fmt::format("a test of category '{}' has no name", Excerpt(category)));
      auto results = ResultsOf(t, test.name);
      if (!results.ok()) return results.error();
      test.results = std::move(*results);
      test.status = test.results.empty() ? "skip" : "not-run";
      for (const auto& r : test.results)
        if (Rank(r.status) > Rank(test.status)) test.status = r.status;
      if (const json* summary = Member(t, "test_summary"); summary && summary->is_object()) {
        if (const json* s = Member(*summary, "status"); s && s->is_string()) {
          auto st = NormalStatus(s->get_ref<const std::string&>());
          if (!st)
            return DiagError(fmt::format("unknown summary status '{}' in test '{}'",
                                         Excerpt(s->get_ref<const std::string&>()), Excerpt(test.name)));
          test.status = *st;
        }
        test.info = InfoOf(Member(*summary, "info"));
      }
      out.tests.push_back(std::move(test));
    }
  }
  return out;
}

Result<std::vector<DiscoveredGpu>> ParseDiscovery(std::string_view text) {
  if (auto he = HostEngineError(text)) return HostEngineDiagnostic(kDiscoveryTool, *he);
  std::vector<DiscoveredGpu> gpus;
  std::optional<long long> announced;
  const Line* announced_line = nullptr;
  bool in_gpus = false;
  auto lines = SplitLines(text);
  for (const Line& line : lines) {
    std::string_view t = Trim(line.text);
    if (t.empty()) continue;
    // "8 GPUs found." opens the GPU table (DCGM 4.5 and later: "8 GPUs found (Active)." or,
    // with -a, "(All)."); the next "N ... found." line closes it.
    if (EndsWith(t, " found.") || EndsWith(t, " found (Active).") || EndsWith(t, " found (All).")) {
      auto words = SplitWhitespace(t);
      if (words.size() == 4 && (words[3] == "(Active)." || words[3] == "(All).")) words.pop_back();
      if (words.size() == 3 && (words[1] == "GPUs" || words[1] == "GPU")) {
        announced = ParseNonNegative(words[0]);
        if (!announced || *announced > 4096) return ParseError(kModule, kDiscoveryTool, "bad GPU count", &line);
        announced_line = &line;
        in_gpus = true;
      } else {
        in_gpus = false;
      }
      continue;
    }
    if (!in_gpus) continue;
    if (t.front() == '+') continue;   // a border
    // DCGM 4.5+ when it lists fewer GPUs than it has: "Note: Use -a flag to show all GPUs,
    // including those that are not active." between the header and the table.
    if (StartsWith(t, "Note:")) continue;
    if (t.front() != '|') return ParseError(kModule, kDiscoveryTool, "expected a table row", &line);
    auto cells = Split(t, "|");
    // "| 0      | Name: NVIDIA H800      |" -> "", " 0      ", " Name: ...  ", ""
    if (cells.size() != 4 || !Trim(cells[0]).empty() || !Trim(cells[3]).empty())
      return ParseError(kModule, kDiscoveryTool, "expected two table cells", &line);
    std::string_view id = Trim(cells[1]);
    std::string_view info = Trim(cells[2]);
    if (id == "GPU ID") continue;   // the header
    if (!id.empty()) {
      auto n = ParseNonNegative(id);
      if (!n || *n > 4096) return ParseError(kModule, kDiscoveryTool, "bad GPU ID", &line);
      gpus.push_back(DiscoveredGpu{static_cast<int>(*n), {}, {}, {}});
    }
    size_t colon = info.find(':');
    if (colon == std::string_view::npos) {
      if (info.empty() && id.empty()) continue;
      return ParseError(kModule, kDiscoveryTool, "expected 'Key: value'", &line);
    }
    if (gpus.empty()) return ParseError(kModule, kDiscoveryTool, "device information before a GPU ID", &line);
    std::string_view key = Trim(info.substr(0, colon));
    std::string value(Trim(info.substr(colon + 1)));
    DiscoveredGpu& g = gpus.back();
    if (key == "Name") g.name = std::move(value);
    else if (key == "PCI Bus ID") g.bus_id = std::move(value);
    else if (key == "Device UUID") g.uuid = std::move(value);
  }
  if (!announced) {
    for (const Line& line : lines)
      if (!Trim(line.text).empty())
        return ParseError(kModule, kDiscoveryTool, "expected 'N GPUs found.'", &line);
    return ParseError(kModule, kDiscoveryTool, "empty output");
  }
  if (static_cast<long long>(gpus.size()) != *announced)
    return ParseError(kModule, kDiscoveryTool,
                      fmt::format("the table lists {} GPUs, not the {} announced", gpus.size(), *announced),
                      announced_line);
  return gpus;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"present", false}, {"host_engine", nullptr}, {"layout", nullptr},
                          {"dcgm_version", nullptr}, {"driver_version", nullptr},
                          {"runtime_error", nullptr}, {"tests", json::array()},
                          {"counts", nullptr}, {"failures", json::array()}, {"gpus", nullptr}});
  json& facts = out.facts();
  const ProbePart* diag = FindPart(parts, kDiagPart);
  const ProbePart* disc = FindPart(parts, kDiscoveryPart);
  if ((!diag || diag->absent()) && (!disc || disc->absent())) return std::move(out).Finish();
  facts["present"] = true;
  auto engine = [&](const ProbePart* p) {
    if (p && !p->absent() && HostEngineError(p->text)) facts["host_engine"] = "unreachable";
  };
  engine(diag);
  engine(disc);
  if (diag && !diag->absent()) {
    if (Killed(diag->exit_status)) {
      out.Fail(kDiagPart, ParseError(kModule, kDiagTool,
                                     fmt::format("killed (exit {}): the diagnostic did not finish", diag->exit_status)));
    } else {
      out.Read(kDiagPart, [&]() -> Status {
        auto d = ParseDiagJson(diag->text);
        if (!d.ok()) return d.error();
        if (facts["host_engine"].is_null()) facts["host_engine"] = "ok";
        facts["layout"] = d->layout;
        if (!d->version.empty()) facts["dcgm_version"] = d->version;
        if (!d->driver_version.empty()) facts["driver_version"] = d->driver_version;
        if (!d->runtime_error.empty()) facts["runtime_error"] = d->runtime_error;
        json counts = {{"pass", 0}, {"fail", 0}, {"warn", 0}, {"skip", 0}, {"not-run", 0}};
        for (const Test& t : d->tests) {
          json results = json::array();
          for (const TestResult& r : t.results) {
            json warnings = json::array();
            for (const Warning& w : r.warnings)
              warnings.push_back({{"message", w.message},
                                  {"error_id", w.error_id ? json(*w.error_id) : json()}});
            json jr = {{"gpu", r.gpu ? json(*r.gpu) : json()}, {"status", r.status},
                       {"warnings", std::move(warnings)}, {"info", r.info}};
            if (!r.entity_group.empty() && r.entity_group != "GPU") {
              jr["entity_group"] = r.entity_group;
              jr["entity_id"] = r.entity_id ? json(*r.entity_id) : json();
            }
            results.push_back(std::move(jr));
            counts[r.status] = counts[r.status].get<int>() + 1;
            if (r.status == "fail" || r.status == "warn")
              facts["failures"].push_back({{"category", t.category}, {"test", t.name},
                                           {"gpu", r.gpu ? json(*r.gpu) : json()}, {"status", r.status},
                                           {"message", r.warnings.empty() ? std::string() : r.warnings.front().message}});
          }
          facts["tests"].push_back({{"category", t.category}, {"name", t.name}, {"status", t.status},
                                    {"results", std::move(results)}});
        }
        facts["counts"] = std::move(counts);
        if (!d->notes.empty()) facts["notes"] = d->notes;
        return OkStatus();
      });
    }
  }
  if (disc && !disc->absent()) {
    out.Read(kDiscoveryPart, [&]() -> Status {
      auto g = ParseDiscovery(disc->text);
      if (!g.ok()) return g.error();
      if (facts["host_engine"].is_null()) facts["host_engine"] = "ok";
      json gpus = json::array();
      for (const auto& d : *g)
        gpus.push_back({{"id", d.id}, {"name", d.name}, {"bus_id", d.bus_id}, {"uuid", d.uuid}});
      facts["gpus"] = std::move(gpus);
      return OkStatus();
    });
  }
  return std::move(out).Finish();
}

}  // namespace plumb::modules::dcgm
