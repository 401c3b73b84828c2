#pragma once
/// Pure parser for the NCCL bandwidth probe: nccl-tests' `all_reduce_perf -b 8 -e 8G -f 2 -g <n>`
/// stdout (stderr merged): the header ("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 ...",
/// the "#  Rank  0 Group  0 Pid ... device  0 [0x18] NVIDIA H100 80GB HBM3" device list), the
/// table (size count type redop root, then time algbw busbw #wrong out-of-place and in-place),
/// "# Out of bounds values : 0 OK" and "# Avg bus bandwidth    : 123.45"; NCCL's WARN lines and
/// the tests' "Test NCCL failure common.cu:..." lines when a run fails.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::nccl_bw {

/// Probe part name: the all_reduce_perf run.
inline constexpr std::string_view kAllReducePart = "allreduce";

/// One "#  Rank ..." line of the device list.
struct Device {
  int rank = 0;
  std::optional<long long> pid;  ///< absent in the oldest format
  std::string host;
  int device = 0;
  std::string bus;               ///< as printed: "0x18" (older) or "0000:18:00"
  std::string name;              ///< "NVIDIA H100 80GB HBM3"
};

/// One direction's columns of a table row.
struct Half {
  double time_us = 0;
  double algbw = 0;              ///< GB/s
  double busbw = 0;              ///< GB/s
  /// #wrong: nullopt for "N/A" (not validated). Releases that printed a float "error" column
  /// instead ("0e+00") give 0 for a zero error and 1 for any other.
  std::optional<long long> wrong;
};

struct Row {
  int line = 0;
  unsigned long long size = 0;   ///< bytes
  unsigned long long count = 0;  ///< elements
  std::string type, redop;       ///< "float", "sum"
  std::optional<long long> root; ///< -1 for all_reduce; absent in the oldest format
  Half out_of_place, in_place;
};

struct Run {
  std::string version;           ///< "2.20.0" from "# nccl-tests version 2.20.0 (...)", or ""
  std::optional<int> threads;    ///< nThread
  std::optional<int> gpus_per_thread;   ///< nGpus (-g)
  std::optional<unsigned long long> min_bytes, max_bytes;
  std::vector<Device> devices;
  std::vector<Row> rows;         ///< in output order (ascending sizes)
  std::optional<long long> out_of_bounds;   ///< "# Out of bounds values : N OK|FAILED"
  std::optional<bool> out_of_bounds_ok;
  std::optional<double> avg_busbw;          ///< "# Avg bus bandwidth : x"
  /// NCCL's "NCCL WARN" lines and the tests' failure lines ("host: Test NCCL failure
  /// common.cu:1204 '...'", " .. host pid 757466: Test failure common.cu:915"), verbatim, at
  /// most kMaxErrors.
  std::vector<std::string> errors;
  /// The avg line was printed: the run reached its end. A run that died midway has the rows
  /// it printed, errors, and complete == false.
  bool complete = false;
};
inline constexpr size_t kMaxErrors = 16;

/// Lines prefixed by mpirun's "[1,0]<stdout>:" are read as the line after it. NCCL INFO lines,
/// "NCCL version ..." and any other line that is neither a row nor a comment are ignored; a
/// row with the wrong number of columns or a bad number is a located error, unless it is a
/// last line cut short (then complete is false). Output with no header, no row and no error
/// line is not all_reduce_perf's: an error.
Result<Run> ParseAllReducePerf(std::string_view text);

/// Part allreduce -> {"present": bool, "complete": bool | null, "version": str | null,
///   "gpus": int | null (device lines), "rows": [{"size", "count", "type", "redop",
///   "time_oop_us", "algbw_oop", "busbw_oop", "wrong_oop": int | null, "time_ip_us", "algbw_ip",
///   "busbw_ip", "wrong_ip": int | null}], "largest_size": int | null,
///   "busbw_at_largest": max of both directions | null, "busbw_at_largest_oop": x | null,
///   "busbw_at_largest_ip": x | null, "wrong_total": sum of numeric #wrong | null,
///   "avg_busbw": x | null, "out_of_bounds": int | null, "out_of_bounds_ok": bool | null,
///   "errors": [str], "exit_status": int | null, "part_errors"?}
/// A run killed by the probe's timeout (exit 124, or a signal) keeps what it printed and is
/// also reported as a part error.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::nccl_bw
