// Reading a facts snapshot (`plumb gather --facts-out`) without ever holding it as one JSON
// tree. Two paths, one result: plumb's own layout (one line per node) is parsed on several
// threads; any other layout (a snapshot re-indented by jq, say) streams through nlohmann's
// parser callback on the calling thread. Either way `each` runs on the calling thread, in file
// order.
#include <algorithm>
#include <deque>
#include <fstream>
#include <future>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "plans/core/parallel.h"
#include "plans/observe/observed.h"

namespace plumb::plans {
namespace {

struct Stopped {};

Diagnostic StoppedError(const std::string& path) {
  return SnapshotError(fmt::format("reading '{}' was stopped before its end", path));
}

// Checks what is left of the document once its nodes were taken out, and returns it.
Result<ObservedState> HeaderOf(const std::string& path, const nlohmann::json& header) {
  if (Status st = CheckSnapshotTop(header, "'" + path + "'"); !st.ok()) return st.error();
  // Every node object was taken out; what is left under "nodes" is not an object.
  for (const auto& [name, value] : header["nodes"].items())
    return SnapshotError(fmt::format("'{}': node '{}' is not an object", path, name));
  ObservedState s;
  SnapshotHeaderFromJson(header, s);
  return s;
}

// ---- Any layout: nlohmann's parser callback sees every key and every finished value with its
// depth. The snapshot's top-level keys are at depth 1, node names at depth 2, and a node's
// object ends at depth 2: it goes to `each` and is discarded from the tree (return false).
Result<ObservedState> ReadStreamed(const std::string& path, const ObservationSink& each,
                                   const ReadOptions& opt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return SnapshotError(fmt::format("cannot read '{}'", path));
  std::string top_key, node_name;
  bool nodes_is_object = false;
  std::optional<Diagnostic> first_error;
  using Event = nlohmann::json::parse_event_t;
  auto callback = [&](int depth, Event event, nlohmann::json& parsed) {
    if (event == Event::key && depth == 1) {
      top_key = parsed.get<std::string>();
    } else if (depth == 1 && top_key == "nodes" &&
               (event == Event::object_start || event == Event::array_start)) {
      nodes_is_object = event == Event::object_start;
    } else if (event == Event::key && depth == 2 && top_key == "nodes") {
      node_name = parsed.get<std::string>();
    } else if (event == Event::object_end && depth == 2 && top_key == "nodes" && nodes_is_object) {
      if (opt.stop && opt.stop->load()) throw Stopped{};
      auto n = NodeObservationFromJson(node_name, std::move(parsed));
      if (!n.ok()) {
        if (!first_error) first_error = n.error();
      } else if (!first_error) {
        each(std::move(n).value());
      }
      return false;
    }
    return true;
  };
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(in, callback);
  } catch (const Stopped&) {
    return StoppedError(path);
  } catch (const nlohmann::json::exception& e) {
    return SnapshotError(fmt::format("'{}' is not valid JSON: {}", path, e.what()));
  }
  if (first_error) return *first_error;
  return HeaderOf(path, header);
}

// ---- plumb's layout. WriteObservedStateJson writes
//   {
//   "format": "plumb.observed/v1",     <- each top-level key on its own line, at column 0
//   "gathered_at": "...",
//   "nodes": {
//     "gpu001": {...},                 <- one node per line, indented by two spaces
//     "gpu002": {...}
//   },
//   "summary": {...}
//   }
// so each node line is a JSON member on its own, and lines can be parsed in parallel.

struct NodeLine {
  int line = 0;
  std::string text;
};
using ParsedLines = std::vector<Result<NodeObservation>>;

constexpr size_t kLinesPerBatch = 128;

Diagnostic AtLine(Diagnostic d, const std::string& path, int line) {
  d.where.file = path;
  d.where.line = line;
  d.message = fmt::format("'{}' line {}: {}", path, line, d.message);
  return d;
}

ParsedLines ParseNodeLines(const std::string& path, std::vector<NodeLine> lines) {
  ParsedLines out;
  out.reserve(lines.size());
  for (NodeLine& l : lines) {
    std::string& t = l.text;
    if (!t.empty() && t.back() == ',') t.pop_back();
    t.insert(t.begin(), '{');
    t.push_back('}');
    nlohmann::json member = nlohmann::json::parse(t, nullptr, /*allow_exceptions=*/false);
    if (member.is_discarded() || member.size() != 1 || !member.begin()->is_object()) {
      out.push_back(AtLine(SnapshotError("not valid JSON: expected one node, \"name\": {...}"),
                           path, l.line));
      continue;
    }
    auto it = member.begin();
    auto n = NodeObservationFromJson(it.key(), std::move(*it));
    if (!n.ok()) {
      out.push_back(AtLine(n.error(), path, l.line));
      continue;
    }
    n->source_bytes = t.size();
    out.push_back(std::move(n));
  }
  return out;
}

// nullopt: the file does not start in plumb's layout (nothing was passed to `each`).
std::optional<Result<ObservedState>> ReadPlumbLayout(const std::string& path,
                                                     const ObservationSink& each,
                                                     const ReadOptions& opt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Result<ObservedState>(SnapshotError(fmt::format("cannot read '{}'", path)));
  std::string line;
  int no = 1;
  if (!std::getline(in, line) || line != "{") return std::nullopt;
  // The header, up to the line that opens "nodes": whole members on lines of their own.
  std::string header = "{";
  bool nodes_open = false;
  while (std::getline(in, line)) {
    ++no;
    if (line == "\"nodes\": {") {
      nodes_open = true;
      break;
    }
    if (line.empty() || line[0] != '"') {
      if (line == "}") header += line;
      else return std::nullopt;
    } else {
      header += line;
    }
  }
  if (nodes_open) {
    // Node lines, in batches, parsed on worker threads a bounded distance ahead of `each`.
    const size_t workers =
        opt.workers > 0 ? opt.workers
                        : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    // Declared before the futures, so gone after them: a job still queued when its future is
    // dropped runs while what it refers to still lives.
    JobThreads parsers(workers);
    std::deque<std::future<ParsedLines>> in_flight;
    std::vector<NodeLine> batch;
    std::optional<Diagnostic> error;
    auto deliver = [&](ParsedLines parsed) {
      for (Result<NodeObservation>& r : parsed) {
        if (error) return;
        if (!r.ok()) error = r.error();
        else each(std::move(r).value());
      }
    };
    auto launch = [&] {
      if (batch.empty()) return;
      in_flight.push_back(parsers.Submit(
          [&path, lines = std::move(batch)]() mutable { return ParseNodeLines(path, std::move(lines)); }));
      batch = {};
      while (in_flight.size() > workers) {
        deliver(in_flight.front().get());
        in_flight.pop_front();
      }
    };
    bool closed = false;
    while (std::getline(in, line)) {
      ++no;
      if (opt.stop && opt.stop->load()) {
        error = StoppedError(path);
        break;
      }
      if (line == "}" || line == "},") {
        closed = true;
        header += "\"nodes\": {}";
        if (line == "},") header += ",";
        break;
      }
      if (line.rfind("  \"", 0) != 0) {
        error = AtLine(SnapshotError("expected a node line (  \"name\": {...}) or the '}' that "
                                     "closes \"nodes\""),
                       path, no);
        break;
      }
      batch.push_back({no, std::move(line)});
      if (batch.size() >= kLinesPerBatch) launch();
    }
    launch();
    while (!in_flight.empty()) {
      deliver(in_flight.front().get());
      in_flight.pop_front();
    }
    if (error) return Result<ObservedState>(*error);
    if (!closed)
      return Result<ObservedState>(SnapshotError(
          fmt::format("'{}' is not valid JSON: it ends inside \"nodes\" (truncated?)", path)));
    while (std::getline(in, line)) header += line;
  }
  nlohmann::json top = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (top.is_discarded())
    return Result<ObservedState>(
        SnapshotError(fmt::format("'{}' is not valid JSON outside \"nodes\"", path)));
  return HeaderOf(path, top);
}

}  // namespace

Result<ObservedState> ReadObservedState(const std::string& path, const ObservationSink& each,
                                        const ReadOptions& opt) {
  if (auto fast = ReadPlumbLayout(path, each, opt)) return std::move(*fast);
  return ReadStreamed(path, each, opt);
}

Result<ObservedState> ReadObservedState(const std::string& path) {
  ObservedState all;
  auto header = ReadObservedState(path, [&all](NodeObservation&& n) {
    std::string name = n.node;
    all.nodes.insert_or_assign(std::move(name), std::move(n));
  });
  if (!header.ok()) return header.error();
  ObservedState out = std::move(header).value();   // its keys; it has no nodes
  out.nodes = std::move(all.nodes);
  return out;
}

}  // namespace plumb::plans
