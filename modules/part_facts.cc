#include "modules/part_facts.h"

#include "modules/module.h"

namespace plumb::modules {

PartFacts::PartFacts(std::string_view module, nlohmann::json facts)
    : module_(module), facts_(std::move(facts)) {}

bool PartFacts::Read(std::string_view part, const std::function<Status()>& read) {
  Status st = read();
  if (st.ok()) return true;
  Fail(part, st.error());
  return false;
}

void PartFacts::Fail(std::string_view part, Diagnostic why) {
  errors_.push_back({{"part", std::string(part)},
                     {"code", "probe." + module_},
                     {"message", std::move(why.message)}});
}

nlohmann::json PartFacts::Finish() && {
  if (!errors_.empty()) facts_[kPartErrorsKey] = std::move(errors_);
  return std::move(facts_);
}

}  // namespace plumb::modules
