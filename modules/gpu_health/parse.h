#pragma once
/// Pure parsers for the GPU health probe: nvidia-smi's health fields (ECC mode and uncorrected
/// errors, pending page retirement, row remapping pending/failure, active clock throttle
/// reasons) and the kernel log's XID lines (`dmesg` or `journalctl -k`).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::gpu_health {

/// Probe part names: the nvidia-smi query below, and the kernel log since boot.
inline constexpr std::string_view kSmiPart = "smi";
inline constexpr std::string_view kKernelLogPart = "kmsg";

/// The fields ParseHealthCsv reads, in this order:
///   nvidia-smi --query-gpu=<kHealthQueryFields> --format=csv,noheader
/// The clock reasons are asked for by their old name, which every driver takes; drivers 535
/// and later also take (and print in a header) "clocks_event_reasons.active", older ones not.
inline constexpr std::string_view kHealthQueryFields =
    "index,pci.bus_id,ecc.mode.current,ecc.errors.uncorrected.volatile.total,"
    "ecc.errors.uncorrected.aggregate.total,retired_pages.pending,remapped_rows.pending,"
    "remapped_rows.failure,clocks_throttle_reasons.active";

/// One GPU's health fields. nullopt: nvidia-smi answered "[N/A]" or "[Not Supported]" (row
/// remapping on pre-Ampere GPUs, page retirement on Hopper, ECC on GeForce), or another
/// bracketed word, which is kept in `unavailable`.
struct GpuHealth {
  int index = 0;
  std::string bus_id;                                 ///< "00000000:18:00.0"
  std::optional<bool> ecc_enabled;                    ///< ecc.mode.current
  std::optional<long long> uncorrected_volatile;      ///< since the driver loaded
  std::optional<long long> uncorrected_aggregate;     ///< lifetime (InfoROM)
  std::optional<bool> retired_pages_pending;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;
  std::optional<uint64_t> throttle_mask;              ///< clocks_throttle_reasons.active
  std::vector<std::string> throttle_reasons;          ///< ThrottleReasonNames(throttle_mask)
  /// Field -> nvidia-smi's word for a value it could not give, other than N/A and Not
  /// Supported ("[Unknown Error]", "[GPU requires reset]"): each a health signal of its own.
  std::map<std::string, std::string> unavailable;
};

/// What the health query said. `nvml` is "ok" or nvidia-smi's failure in words
/// (nvidia_driver::SmiFailureState: "no-driver", "version-mismatch", "no-devices").
struct SmiHealth {
  std::string nvml = "ok";
  std::vector<GpuHealth> gpus;
  /// Lines that are neither rows nor failures but known not to be data: R610+ drivers label
  /// their version "KMD Version" and mark "Driver Version" deprecated in other outputs; when
  /// such a line reaches this part (a wrapper, merged stderr) it is kept here, verbatim.
  std::vector<std::string> notes;
};
inline constexpr size_t kMaxNotes = 8;

/// `nvidia-smi --query-gpu=<kHealthQueryFields> --format=csv,noheader[,nounits]`. A header row
/// (format=csv without noheader) is skipped if it names the query's fields (the last one as
/// either era says it: clocks_throttle_reasons.active, or clocks_event_reasons.active on 535+);
/// a header of other fields is a located error (the columns would be misread). Any other line that is not a 9-field row is a
/// located error, and so is a last line cut short.
Result<SmiHealth> ParseHealthCsv(std::string_view text);

/// The names of the bits set in a clocks_event_reasons mask, as nvidia-smi --help-query-gpu
/// names them (nvml.h nvmlClocksEventReason*): gpu_idle (0x1), applications_clocks_setting
/// (0x2), sw_power_cap (0x4), hw_slowdown (0x8), sync_boost (0x10), sw_thermal_slowdown
/// (0x20), hw_thermal_slowdown (0x40), hw_power_brake_slowdown (0x80), display_clock_setting
/// (0x100); another bit is "unknown_0x<bit>". In bit order.
std::vector<std::string> ThrottleReasonNames(uint64_t mask);

/// One XID the NVIDIA driver logged, e.g.
///   [ 4254.197860] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
struct Xid {
  int line = 0;                  ///< 1-based line in the log part
  std::string stamp;             ///< what came before "NVRM:" ("[ 4254.197860]", "May 27 16:50:10 host kernel:"), trimmed
  std::string pci;               ///< as logged: "0000:5d:00", "0019:01:00"
  std::string bus_id;            ///< as nvidia-smi writes it: "00000000:5D:00.0" ("" if pci is not d:b:d)
  int xid = 0;
  std::optional<long long> pid;  ///< nullopt when not logged or '<unknown>'
  std::string process;           ///< name=..., "" when not logged or <unknown>
  std::string message;           ///< the rest of the line
};
/// The kernel log (dmesg, dmesg -T, journalctl -k in any output format, lines prefixed by a
/// log shipper): every "NVRM: Xid (" line, in order; every other line is ignored. The
/// older form without "PCI:" ("Xid (0000:01:00)") and lines without pid/name are read too.
/// Fails only when the log could not be read ("dmesg: read kernel buffer failed: ...",
/// journalctl's "No journal files were found.") or on an Xid line without an XID number.
Result<std::vector<Xid>> ParseKernelLog(std::string_view text);
/// At most this many XIDs are kept in facts (the counts cover them all).
inline constexpr size_t kMaxXids = 256;

/// Parts smi, kmsg -> {"nvml": str | null, "gpu_count": int | null,
///   "gpus": [{"index", "bus_id", "ecc_enabled": bool | null,
///             "uncorrected_volatile": int | null, "uncorrected_aggregate": int | null,
///             "retired_pages_pending": bool | null, "remapped_rows_pending": bool | null,
///             "remapped_rows_failure": bool | null, "throttle_mask": "0x..." | null,
///             "throttle_reasons": [str], "unavailable"?: {field: word}}],
///   "xids": [{"xid", "pci", "bus_id", "gpu": index | null, "pid": int | null,
///             "process": str | null, "message", "line"}] | null,
///   "xid_counts": {"79": n, ...} | null, "xids_truncated"?: true, "smi_notes"?: [str],
///   "part_errors"?}
/// "gpu" is the index of the GPU whose bus id the XID names, when nvidia-smi listed it. Each
/// part is read on its own (modules/part_facts.h).
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

}  // namespace plumb::modules::gpu_health
