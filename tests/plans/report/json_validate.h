#pragma once
// Validates a JSON document against a JSON Schema file with valijson; returns the errors, each
// as "<path>: <description>". Empty = valid.
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace plumb::testing {

inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

inline std::vector<std::string> ValidateAgainst(const std::string& schema_path,
                                                const nlohmann::json& doc) {
  nlohmann::json schema_doc = ReadJsonFile(schema_path);
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  std::vector<std::string> errors;
  if (validator.validate(schema, target, &results)) return errors;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string path;
    for (const auto& p : e.context) path += p;
    errors.push_back(path + ": " + e.description);
  }
  if (errors.empty()) errors.push_back("invalid (no detail)");
  return errors;
}

}  // namespace plumb::testing
