#pragma once
/// Pure parsers for the CUDA toolkit probe: /usr/local/cuda/version.json (CUDA >= 11.1),
/// /usr/local/cuda/version.txt (older), and the list of /usr/local/cuda-* directories.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/probe_script.h"
#include "schemas/result.h"

namespace plumb::modules::cuda {

struct CudaVersion {
  std::string version;                          ///< "12.4.1" (the "cuda" entry)
  std::map<std::string, std::string> components;   ///< "cuda_nvcc" -> "12.4.131"
};
Result<CudaVersion> ParseVersionJson(std::string_view text);
/// "CUDA Version 11.0.228".
Result<std::string> ParseVersionTxt(std::string_view text);
/// Parts version_json, version_txt, toolkits -> {"version", "source", "components", "toolkits",
/// "part_errors"?}. Each part is read on its own (modules/part_facts.h); toolkits is null when
/// its listing could not be read.
nlohmann::json FactsFromParts(const std::vector<ProbePart>& parts);

/// "12.4" matches "12.4.1"; "12.4.1" matches only "12.4.1" (whole dot-separated components).
bool VersionPrefixMatches(std::string_view want, std::string_view have);

}  // namespace plumb::modules::cuda
