#include "modules/nccl_bw/parse.h"


#include <fmt/format.h>

#include "modules/parse_util.h"
#include "modules/part_facts.h"

namespace plumb::modules::nccl_bw {
namespace {

using nlohmann::json;

constexpr std::string_view kModule = "nccl_bw";
constexpr std::string_view kTool = "all_reduce_perf";

// "[1,0]<stdout>:" (mpirun --tag-output) before the line proper.
std::string_view StripMpiTag(std::string_view t) {
  if (t.empty() || t.front() != '[') return t;
  size_t close = t.find("]<std");
  if (close == std::string_view::npos || close > 16) return t;
  size_t colon = t.find(">:", close);
  if (colon == std::string_view::npos) return t;
  return t.substr(colon + 2);
}

bool IsErrorLine(std::string_view t) {
  return t.find("NCCL WARN") != std::string_view::npos || t.find("Test NCCL failure") != std::string_view::npos ||
         t.find("Test CUDA failure") != std::string_view::npos || t.find(": Test failure") != std::string_view::npos ||
         StartsWith(t, "NCCL failure ");
}

// #wrong: a count, "N/A", or (older releases' "error" column) a float.
bool ParseWrong(std::string_view s, std::optional<long long>* out) {
  if (s == "N/A") return true;
  if (auto n = ParseSigned(s); n && *n >= 0) {
    *out = *n;
    return true;
  }
  if (auto d = ParseDouble(s); d && *d >= 0) {
    *out = *d > 0 ? 1 : 0;
    return true;
  }
  return false;
}

bool ParseHalf(const std::vector<std::string_view>& w, size_t at, Half* h) {
  auto t = ParseDouble(w[at]), a = ParseDouble(w[at + 1]), b = ParseDouble(w[at + 2]);
  if (!t || !a || !b) return false;
  h->time_us = *t;
  h->algbw = *a;
  h->busbw = *b;
  return ParseWrong(w[at + 3], &h->wrong);
}

// "#  Rank  0 Group  0 Pid 148287 on host device  0 [0x63] NVIDIA H100 80GB HBM3", and the
// older forms without "Group" and without "Pid".
std::optional<Device> ParseDevice(std::string_view body) {
  auto w = SplitWhitespace(body);
  Device d;
  size_t i = 0;
  auto next = [&](std::string_view word) { return i < w.size() && w[i] == word ? (++i, true) : false; };
  if (!next("Rank") || i >= w.size()) return std::nullopt;
  auto rank = ParseNonNegative(w[i++]);
  if (!rank || *rank > 1000000) return std::nullopt;
  d.rank = static_cast<int>(*rank);
  if (next("Group")) ++i;
  if (next("Pid")) {
    if (i >= w.size()) return std::nullopt;
    if (auto pid = ParseNonNegative(w[i++])) d.pid = *pid;
  }
  if (!next("on") || i >= w.size()) return std::nullopt;
  d.host = std::string(w[i++]);
  if (!next("device") || i >= w.size()) return std::nullopt;
  auto dev = ParseNonNegative(w[i++]);
  if (!dev || *dev > 4096) return std::nullopt;
  d.device = static_cast<int>(*dev);
  if (i < w.size() && w[i].size() >= 2 && w[i].front() == '[' && w[i].back() == ']') {
    d.bus = std::string(w[i].substr(1, w[i].size() - 2));
    ++i;
  }
  for (; i < w.size(); ++i) {
    if (!d.name.empty()) d.name += ' ';
    d.name += w[i];
  }
  return d;
}

// "key : value" after the '#' of a summary line.
std::string_view ValueAfterColon(std::string_view body) {
  size_t colon = body.find(':');
  return colon == std::string_view::npos ? std::string_view() : Trim(body.substr(colon + 1));
}

bool Killed(int status) { return status == 124 || (status > 128 && status <= 192); }

}  // namespace

Result<Run> ParseAllReducePerf(std::string_view text) {
  Run run;
  bool truncated = false;
  auto lines = SplitLines(text, &truncated);
  bool header_seen = false;
  for (const Line& line : lines) {
    std::string_view t = Trim(StripMpiTag(Trim(line.text)));
    if (t.empty()) continue;
    if (IsErrorLine(t)) {
      if (run.errors.size() < kMaxErrors) run.errors.push_back(Excerpt(t, 300));
      continue;
    }
    std::string_view body = t.front() == '#' ? Trim(t.substr(1)) : t;
    if (StartsWith(body, "nThread ")) {
      header_seen = true;
      auto w = SplitWhitespace(body);
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        if (w[i] == "nThread") {
          if (auto n = ParseNonNegative(w[i + 1]); n && *n <= 4096) run.threads = static_cast<int>(*n);
        } else if (w[i] == "nGpus") {
          if (auto n = ParseNonNegative(w[i + 1]); n && *n <= 4096) run.gpus_per_thread = static_cast<int>(*n);
        } else if (w[i] == "minBytes") {
          run.min_bytes = ParseUnsigned(w[i + 1]);
        } else if (w[i] == "maxBytes") {
          run.max_bytes = ParseUnsigned(w[i + 1]);
        }
      }
      continue;
    }
    if (t.front() == '#') {
      if (StartsWith(body, "Rank ")) {
        auto d = ParseDevice(body);
        if (!d) return ParseError(kModule, kTool, "bad device line", &line);
        run.devices.push_back(std::move(*d));
      } else if (StartsWith(body, "Using devices") || StartsWith(body, "size ") ||
                 StartsWith(body, "bytes ") || body.find("out-of-place") != std::string_view::npos) {
        header_seen = true;
      } else if (StartsWith(body, "nccl-tests version ")) {
        auto w = SplitWhitespace(body);
        if (w.size() >= 3) run.version = std::string(w[2]);
        header_seen = true;
      } else if (StartsWith(body, "Out of bounds values")) {
        auto w = SplitWhitespace(ValueAfterColon(body));
        if (w.empty() || !ParseNonNegative(w[0])) return ParseError(kModule, kTool, "bad out-of-bounds count", &line);
        run.out_of_bounds = *ParseNonNegative(w[0]);
        run.out_of_bounds_ok = w.size() >= 2 && w[1] == "OK";
      } else if (StartsWith(body, "Avg bus bandwidth")) {
        auto v = ParseDouble(ValueAfterColon(body));
        if (!v) return ParseError(kModule, kTool, "bad average bus bandwidth", &line);
        run.avg_busbw = *v;
        run.complete = true;
      }
      continue;   // other comments: "(B) (elements)", "Collective test starting", rccl's notes
    }
    if (t.front() < '0' || t.front() > '9') continue;   // NCCL INFO, "NCCL version", mpirun noise
    auto w = SplitWhitespace(t);
    bool cut = truncated && &line == &lines.back();
    // size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong;
    // the oldest releases had no root column.
    if (w.size() != 13 && w.size() != 12) {
      if (cut) break;
      return ParseError(kModule, kTool, "expected 13 columns", &line);
    }
    Row r;
    r.line = line.number;
    auto size = ParseUnsigned(w[0]), count = ParseUnsigned(w[1]);
    if (!size || !count) {
      if (cut) break;
      return ParseError(kModule, kTool, "bad size or count", &line);
    }
    r.size = *size;
    r.count = *count;
    r.type = std::string(w[2]);
    r.redop = std::string(w[3]);
    size_t at = 4;
    if (w.size() == 13) {
      r.root = ParseSigned(w[4]);
      if (!r.root) {
        if (cut) break;
        return ParseError(kModule, kTool, "bad root", &line);
      }
      at = 5;
    }
    if (!ParseHalf(w, at, &r.out_of_place) || !ParseHalf(w, at + 4, &r.in_place)) {
      if (cut) break;
      return ParseError(kModule, kTool, "bad time, bandwidth or #wrong", &line);
    }
    run.rows.push_back(std::move(r));
  }
  if (!header_seen && run.rows.empty() && run.errors.empty() && run.devices.empty()) {
    for (const Line& line : lines)
      if (!Trim(line.text).empty()) return ParseError(kModule, kTool, "expected nccl-tests output", &line);
    return ParseError(kModule, kTool, "empty output");
  }
  return run;
}

nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts) {
  PartFacts out(kModule, {{"present", false}, {"complete", nullptr}, {"version", nullptr},
                          {"gpus", nullptr}, {"rows", json::array()}, {"largest_size", nullptr},
                          {"busbw_at_largest", nullptr}, {"busbw_at_largest_oop", nullptr},
                          {"busbw_at_largest_ip", nullptr}, {"wrong_total", nullptr},
                          {"avg_busbw", nullptr}, {"out_of_bounds", nullptr},
                          {"out_of_bounds_ok", nullptr}, {"errors", json::array()},
                          {"exit_status", nullptr}});
  json& facts = out.facts();
  const ProbePart* p = FindPart(parts, kAllReducePart);
  if (!p || p->absent()) return std::move(out).Finish();
  facts["present"] = true;
  facts["exit_status"] = p->exit_status;
  out.Read(kAllReducePart, [&]() -> Status {
    auto run = ParseAllReducePerf(p->text);
    if (!run.ok()) return run.error();
    facts["complete"] = run->complete && !Killed(p->exit_status);
    if (!run->version.empty()) facts["version"] = run->version;
    if (!run->devices.empty()) facts["gpus"] = run->devices.size();
    auto wrong = [](const std::optional<long long>& w) { return w ? json(*w) : json(); };
    std::optional<long long> wrong_total;
    const Row* largest = nullptr;
    for (const Row& r : run->rows) {
      facts["rows"].push_back({{"size", r.size}, {"count", r.count}, {"type", r.type}, {"redop", r.redop},
                               {"time_oop_us", r.out_of_place.time_us}, {"algbw_oop", r.out_of_place.algbw},
                               {"busbw_oop", r.out_of_place.busbw}, {"wrong_oop", wrong(r.out_of_place.wrong)},
                               {"time_ip_us", r.in_place.time_us}, {"algbw_ip", r.in_place.algbw},
                               {"busbw_ip", r.in_place.busbw}, {"wrong_ip", wrong(r.in_place.wrong)}});
      for (const Half* h : {&r.out_of_place, &r.in_place})
        if (h->wrong) wrong_total = wrong_total.value_or(0) + *h->wrong;
      if (!largest || r.size >= largest->size) largest = &r;
    }
    if (largest) {
      facts["largest_size"] = largest->size;
      facts["busbw_at_largest_oop"] = largest->out_of_place.busbw;
      facts["busbw_at_largest_ip"] = largest->in_place.busbw;
      facts["busbw_at_largest"] = std::max(largest->out_of_place.busbw, largest->in_place.busbw);
    }
    if (wrong_total) facts["wrong_total"] = *wrong_total;
    if (run->avg_busbw) facts["avg_busbw"] = *run->avg_busbw;
    if (run->out_of_bounds) facts["out_of_bounds"] = *run->out_of_bounds;
    if (run->out_of_bounds_ok) facts["out_of_bounds_ok"] = *run->out_of_bounds_ok;
    facts["errors"] = run->errors;
    return OkStatus();
  });
  if (Killed(p->exit_status))
    out.Fail(kAllReducePart, ParseError(kModule, kTool, fmt::format("killed (exit {}): the run did not finish", p->exit_status)));
  return std::move(out).Finish();
}

}  // namespace plumb::modules::nccl_bw
