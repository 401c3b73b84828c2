#pragma once
// FactsSchema: a module's facts schema (modules/<module>/facts.schema.json, embedded as
// "facts/<module>.schema.json"), loaded and checked with valijson, for tests that hold a
// module's facts up against the shape it documents.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "schemas/embedded.h"

namespace plumb::testing {

class FactsSchema {
 public:
  explicit FactsSchema(const std::string& module) {
    auto text = plumb::schemas::FindEmbedded("facts/" + module + ".schema.json");
    REQUIRE_MESSAGE(text.has_value(), "no schema for " << module);
    doc_ = nlohmann::json::parse(*text);
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
