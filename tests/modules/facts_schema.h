#pragma once
// FactsSchema: schemas/facts/<module>.schema.json, loaded and checked with valijson, for tests
// that hold a module's facts up against the shape it documents.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

namespace plumb::testing {

class FactsSchema {
 public:
  explicit FactsSchema(const std::string& module) {
    std::ifstream in(std::string(PLUMB_SOURCE_DIR) + "/schemas/facts/" + module + ".schema.json");
    REQUIRE_MESSAGE(in.good(), "no schema for " << module);
    doc_ = nlohmann::json::parse(in);
    valijson::SchemaParser parser;
    valijson::adapters::NlohmannJsonAdapter adapter(doc_);
    parser.populateSchema(adapter, schema_);
  }
  /// Every violation, one a line ("" when `facts` conforms).
  std::string Errors(const nlohmann::json& facts) const {
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(facts);
    if (validator.validate(schema_, target, &results)) return {};
    std::string out;
    valijson::ValidationResults::Error e;
    while (results.popError(e)) {
      std::string ctx;
      for (const auto& c : e.context) ctx += c;
      out += ctx + ": " + e.description + "\n";
    }
    return out;
  }

 private:
  nlohmann::json doc_;
  valijson::Schema schema_;
};

}  // namespace plumb::testing
