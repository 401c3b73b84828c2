#include "modules/drain/slurm_parse.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "inventory/hostlist.h"
#include "schemas/ascii.h"

namespace plumb::modules::slurm {
namespace {

using nlohmann::json;

// Strings from a string or an array of strings (22.05 vs 23.02+).
std::vector<std::string> Tokens(const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    // "MIXED+DRAIN" style in some versions' strings, "mixed" in 22.05.
    std::stringstream ss(v.get<std::string>());
    for (std::string t; std::getline(ss, t, '+');)
      if (!t.empty()) out.push_back(schemas::AsciiUpper(t));
  } else if (v.is_array()) {
    for (const auto& t : v)
      if (t.is_string()) out.push_back(schemas::AsciiUpper(t.get<std::string>()));
  }
  return out;
}

// Fills drain/down/busy from the state words; `drained` assumes no job until AttachJobs.
void Classify(SchedulerNode& n, const std::vector<std::string>& words) {
  std::set<std::string> w(words.begin(), words.end());
  n.drain = w.count("DRAIN") > 0 || w.count("DRAINED") > 0 || w.count("DRAINING") > 0;
  n.down = w.count("DOWN") || w.count("NOT_RESPONDING") || w.count("POWERED_DOWN") ||
           w.count("POWER_DOWN") || w.count("FAIL") || w.count("FUTURE") ||
           w.count("REBOOT_ISSUED") || w.count("UNKNOWN");
  n.unresponsive = w.count("NOT_RESPONDING") || w.count("UNKNOWN");
  const bool busy = w.count("ALLOCATED") || w.count("MIXED") || w.count("COMPLETING");
  n.drained = n.drain && !busy;
  std::string s;
  for (const auto& x : words) s += (s.empty() ? "" : "+") + x;
  n.state = s;
}

json ParseJson(std::string_view text, const char* what, Diagnostic* err) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *err = Diagnostic::Error("slurm.parse", fmt::format("{}: not JSON", what));
    return j;
  }
  // With slurmctld down, sinfo/squeue --json exit 0 after their timeout with an "errors"
  // entry and empty lists: that is "the scheduler cannot be read", never "no nodes, no jobs".
  if (auto e = j.find("errors"); e != j.end() && e->is_array() && !e->empty()) {
    std::string msgs;
    for (const json& x : *e) {
      std::string m = x.is_object() ? x.value("error", std::string()) : x.is_string() ? x.get<std::string>() : "";
      if (x.is_object() && x.contains("errno") && x["errno"].is_number_integer())
        m += fmt::format(" (errno {})", x["errno"].get<long long>());
      msgs += (msgs.empty() ? "" : "; ") + (m.empty() ? std::string("unspecified error") : m);
    }
    *err = Diagnostic::Error(std::string(kSchedulerUnavailable),
                             fmt::format("{} reported errors: {}", what, msgs));
  }
  return j;
}

std::string Str(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  if (it->is_object() && it->contains("number")) return Str(*it, "number");   // 23.02+
  return {};
}

bool Occupies(const std::string& state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "CONFIGURING" ||
         state == "SUSPENDED" || state == "STAGE_OUT" || state == "SIGNALING" ||
         state == "RESIZING";
}

// A feature list from a string "a,b" (22.05) or an array of strings (23.02+).
std::vector<std::string> FeatureList(const json& v) {
  if (v.is_string()) return SplitFeatures(v.get<std::string>());
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& f : v)
      if (f.is_string())
        for (auto& x : SplitFeatures(f.get<std::string>())) out.push_back(std::move(x));
  return out;
}

// One StackRequest per stack the constraint names.
void AddStackRequests(std::vector<StackRequest>& out, StackRequest job, std::string_view constraint) {
  for (auto& s : StacksInConstraint(constraint)) {
    job.stack = std::move(s);
    out.push_back(job);
  }
}

// The array `key` of `what`'s JSON output ("nodes" of sinfo --json, "jobs" of squeue --json),
// or the error its text gives (the controller's own errors included, as ParseJson reads them).
Result<json> ListedArray(std::string_view text, const char* what, const char* key) {
  Diagnostic err;
  json j = ParseJson(text, what, &err);
  if (!err.message.empty()) return err;
  auto list = j.find(key);
  if (list == j.end() || !list->is_array())
    return Diagnostic::Error("slurm.parse", fmt::format("{}: no \"{}\" array", what, key));
  return std::move(*list);
}

}  // namespace

std::vector<std::string> ExpandHostlist(std::string_view list) {
  // Slurm's own output: a malformed list (never seen) stays as written, one name.
  auto names = inventory::ExpandHostlist(std::string(list));
  if (names) return *names;
  return list.empty() ? std::vector<std::string>() : std::vector<std::string>{std::string(list)};
}

std::vector<std::string> SplitFeatures(std::string_view list) {
  std::vector<std::string> out;
  if (list == "(null)") return out;
  for (std::string_view rest = list; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string_view f = rest.substr(0, comma);
    if (!f.empty()) out.emplace_back(f);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

Result<std::map<std::string, SchedulerNode>> ParseSinfoJson(std::string_view text) {
  auto nodes = ListedArray(text, "sinfo --json", "nodes");
  if (!nodes) return nodes.error();
  std::map<std::string, SchedulerNode> out;
  for (const auto& n : *nodes) {
    if (!n.is_object()) continue;
    SchedulerNode s;
    s.name = Str(n, "name");
    if (s.name.empty()) continue;
    std::vector<std::string> words = Tokens(n.value("state", json()));
    for (const auto& f : Tokens(n.value("state_flags", json()))) words.push_back(f);
    Classify(s, words);
    s.reason = Str(n, "reason");
    if (std::string at = Str(n, "reason_changed_at"); !at.empty()) s.reason_since = std::atoll(at.c_str());
    s.comment = Str(n, "comment");
    s.claim = FindClaim(s.comment);
    // AvailableFeatures (what a job's constraint is matched against, and what SetStack
    // rewrites); a build without it would still list the active ones.
    s.features = FeatureList(n.contains("features") ? n["features"] : n.value("active_features", json()));
    if (n.contains("active_features")) s.active_features = FeatureList(n["active_features"]);
    s.features_known = n.contains("features") || n.contains("active_features");
    s.stack_tag = TagFromFeatures(s.features);
    out[s.name] = s;
  }
  return out;
}

Result<std::map<std::string, SchedulerNode>> ParseScontrolNodes(std::string_view text) {
  std::map<std::string, SchedulerNode> out;
  std::stringstream ss{std::string(text)};
  for (std::string line; std::getline(ss, line);) {
    auto name_at = line.find("NodeName=");
    if (name_at == std::string::npos) continue;
    SchedulerNode s;
    s.name = line.substr(name_at + 9, line.find(' ', name_at) - name_at - 9);
    auto st = line.find(" State=");
    if (st != std::string::npos) {
      std::string state = line.substr(st + 7, line.find(' ', st + 7) - st - 7);
      Classify(s, Tokens(json(state)));
    }
    // Reason is free text up to the end of the line, then " [user@time]".
    auto rs = line.find(" Reason=");
    if (rs != std::string::npos) {
      std::string reason = line.substr(rs + 8);
      auto tag = reason.rfind(" [");
      if (tag != std::string::npos && reason.back() == ']') reason.resize(tag);
      s.reason = reason;
    }
    // Comment=<free text> runs up to the next " Key=" (one-line output has no other delimiter).
    if (auto cm = line.find(" Comment="); cm != std::string::npos) {
      std::string rest = line.substr(cm + 9);
      for (size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] != ' ') continue;
        const auto eq = rest.find('=', i + 1), sp = rest.find(' ', i + 1);
        if (eq != std::string::npos && (sp == std::string::npos || eq < sp) && eq > i + 1 &&
            std::isupper(static_cast<unsigned char>(rest[i + 1]))) {
          rest.resize(i);
          break;
        }
      }
      if (rest != "(null)") s.comment = rest;
    }
    s.claim = FindClaim(s.comment);
    // "AvailableFeatures=gpu,stack_a" ("(null)" for none): no spaces inside.
    if (auto af = line.find(" AvailableFeatures="); af != std::string::npos) {
      const size_t from = af + 19;
      s.features = SplitFeatures(std::string_view(line).substr(from, line.find(' ', from) - from));
      s.stack_tag = TagFromFeatures(s.features);
      s.features_known = true;
    }
    if (auto ac = line.find(" ActiveFeatures="); ac != std::string::npos) {
      const size_t from = ac + 16;
      s.active_features = SplitFeatures(std::string_view(line).substr(from, line.find(' ', from) - from));
    }
    out[s.name] = s;
  }
  if (out.empty() && text.find_first_not_of(" \n") != std::string_view::npos)
    return Diagnostic::Error("slurm.parse", "scontrol show node: no NodeName= line");
  return out;
}

Result<std::vector<ActiveJob>> ParseSqueueJson(std::string_view text) {
  auto jobs = ListedArray(text, "squeue --json", "jobs");
  if (!jobs) return jobs.error();
  std::vector<ActiveJob> out;
  for (const auto& jb : *jobs) {
    if (!jb.is_object()) continue;
    auto states = Tokens(jb.value("job_state", json()));
    auto occupying = std::find_if(states.begin(), states.end(), Occupies);
    if (occupying == states.end()) continue;
    ActiveJob a;
    a.id = Str(jb, "job_id");
    a.state = *occupying;
    a.user = Str(jb, "user_name");
    a.name = Str(jb, "name");
    a.nodes = ExpandHostlist(Str(jb, "nodes"));
    // end_time is start + time limit; with no limit (time_limit null in 22.05, {infinite:
    // true} in 23.02+) Slurm puts it a year out: that is "no time limit", not a deadline.
    const json tl = jb.value("time_limit", json());
    const bool unlimited = tl.is_null() || (tl.is_object() && (tl.value("infinite", false) ||
                                                                !tl.value("set", true)));
    if (std::string end = Str(jb, "end_time"); !end.empty() && !unlimited)
      a.end_unix = std::atoll(end.c_str());
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<ActiveJob>> ParseSqueueLines(std::string_view text) {
  std::vector<ActiveJob> out;
  std::stringstream ss{std::string(text)};
  for (std::string line; std::getline(ss, line);) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, '|');) f.push_back(x);
    if (f.size() < 3) return Diagnostic::Error("slurm.parse", "squeue: unexpected line: " + line);
    if (!Occupies(schemas::AsciiUpper(f[1]))) continue;
    ActiveJob a;
    a.id = f[0];
    a.state = schemas::AsciiUpper(f[1]);
    a.nodes = ExpandHostlist(f[2]);
    if (f.size() > 3) a.user = f[3];
    if (f.size() > 4) a.name = f[4];
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<StackRequest>> ParseStackRequestsJson(std::string_view text) {
  auto jobs = ListedArray(text, "squeue --json", "jobs");
  if (!jobs) return jobs.error();
  std::vector<StackRequest> out;
  for (const auto& jb : *jobs) {
    if (!jb.is_object()) continue;
    auto states = Tokens(jb.value("job_state", json()));
    auto live = std::find_if(states.begin(), states.end(),
                             [](const std::string& s) { return s == "PENDING" || Occupies(s); });
    if (live == states.end()) continue;
    // A string in 22.05 ("stack_a&gpu"); should a version list it, its entries are ANDed.
    const json f = jb.value("features", json());
    std::string constraint;
    if (f.is_string()) constraint = f.get<std::string>();
    else if (f.is_array())
      for (const auto& x : f)
        if (x.is_string()) constraint += (constraint.empty() ? "" : "&") + x.get<std::string>();
    AddStackRequests(out, {Str(jb, "job_id"), Str(jb, "user_name"), Str(jb, "name"), *live, ""},
                     constraint);
  }
  return out;
}

Result<std::vector<StackRequest>> ParseStackRequestLines(std::string_view text) {
  std::vector<StackRequest> out;
  std::stringstream ss{std::string(text)};
  for (std::string line; std::getline(ss, line);) {
    if (line.empty()) continue;
    // id, state and user hold no '|'; then the name, then the constraint (which may).
    size_t a = line.find('|'), b = a == std::string::npos ? a : line.find('|', a + 1),
           c = b == std::string::npos ? b : line.find('|', b + 1),
           d = c == std::string::npos ? c : line.find('|', c + 1);
    if (d == std::string::npos)
      return Diagnostic::Error("slurm.parse", "squeue: unexpected line: " + line);
    const std::string state = schemas::AsciiUpper(line.substr(a + 1, b - a - 1));
    if (state != "PENDING" && !Occupies(state)) continue;
    std::string name = line.substr(c + 1, d - c - 1), constraint = line.substr(d + 1);
    // No constraint at all: the whole rest is the name ("a|stack_b" asks for nothing).
    if (line.ends_with("|(null)")) {
      name = line.substr(c + 1, line.size() - 7 - c - 1);
      constraint.clear();
    }
    AddStackRequests(out, {line.substr(0, a), line.substr(b + 1, c - b - 1), name, state, ""},
                     constraint);
  }
  return out;
}

void AttachJobs(std::map<std::string, SchedulerNode>& nodes, const std::vector<ActiveJob>& jobs) {
  for (const auto& j : jobs) {
    for (const auto& n : j.nodes) {
      auto it = nodes.find(n);
      if (it == nodes.end()) continue;
      ++it->second.running_jobs;
      it->second.jobs.push_back(fmt::format("{} ({}: {})", j.id, j.user, j.name));
      it->second.job_details.push_back({j.id, j.user, j.name, j.end_unix});
    }
  }
  for (auto& [name, n] : nodes)
    if (n.running_jobs > 0) n.drained = false;
}

}  // namespace plumb::modules::slurm
