#include <doctest/doctest.h>

#include "schemas/diagnostics.h"
#include "schemas/result.h"

using namespace plumb;

TEST_CASE("a diagnostic renders its location, key and hint") {
  auto d = Diagnostic::Error("schema.unknown-key", "unknown key 'drivr'",
                             Location{"stacks/h100.yaml", 3, 11}, "nvidia.drivr",
                             "did you mean 'driver'?");
  CHECK(d.ToString() ==
        "stacks/h100.yaml:3:11: error: unknown key 'drivr' [key: nvidia.drivr]\n"
        "  hint: did you mean 'driver'?");
  auto j = d.ToJson();
  CHECK(j["file"] == "stacks/h100.yaml");
  CHECK(j["line"] == 3);
  CHECK(j["column"] == 11);
  CHECK(j["code"] == "schema.unknown-key");
}

TEST_CASE("diagnostics sort by file and line and count by severity") {
  Diagnostics ds;
  ds.Add(Diagnostic::Error("e", "second", Location{"b.yaml", 1, 1}));
  ds.Add(Diagnostic::Warning("w", "first", Location{"a.yaml", 9, 1}));
  ds.Add(Diagnostic::Error("e", "third", Location{"b.yaml", 2, 1}));
  ds.Sort();
  CHECK(ds.items()[0].message == "first");
  CHECK(ds.items()[2].message == "third");
  CHECK(ds.ErrorCount() == 2);
  CHECK(ds.WarningCount() == 1);
  CHECK(ds.HasErrors());
}

TEST_CASE("Result holds a value or a diagnostic") {
  Result<int> good = 42;
  REQUIRE(good.ok());
  CHECK(*good == 42);
  Result<int> bad = Diagnostic::Error("x", "nope");
  CHECK_FALSE(bad.ok());
  CHECK(bad.error().message == "nope");
}
