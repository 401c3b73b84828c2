// Every drift format: content checks, and the machine formats validated against the schemas
// their consumers use (JUnit XML: junit-10.xsd via xmllint; SARIF: the 2.1.0 JSON Schema). The
// two schemas are third-party data outside the project (tests/third_party_schemas.h): without
// them, those validations are skipped with a message.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "plans/report/drift_render.h"
#include "plans/report/json_validate.h"
#include "plans/report/prom_grammar.h"
#include "plans/report/report_fixture.h"
#include "third_party_schemas.h"

using namespace plumb;
using namespace plumb::plans::report;

namespace {

// The layout DriftToJson(r, out) promises, built from the tree independently: dump(2), but each
// node in "nodes" on one line of its own as dump() writes it.
std::string NodePerLine(nlohmann::json tree) {
  const nlohmann::json nodes = std::exchange(tree["nodes"], "@nodes@");
  std::string text = tree.dump(2) + "\n";
  std::string lines = "[";
  for (size_t i = 0; i < nodes.size(); ++i) lines += (i ? ",\n    " : "\n    ") + nodes[i].dump();
  lines += nodes.empty() ? "]" : "\n  ]";
  const std::string placeholder = "\"@nodes@\"";
  text.replace(text.find(placeholder), placeholder.size(), lines);
  return text;
}

// Every line between "nodes": [ and its closing ] parses alone as one node.
void CheckNodeLines(const std::string& text, size_t nodes) {
  std::istringstream in(text);
  std::string line;
  size_t seen = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == "  \"nodes\": [") inside = true;
    else if (inside && (line == "  ]," || line == "  ]")) inside = false;
    else if (inside) {
      if (line.back() == ',') line.pop_back();
      REQUIRE(line.rfind("    {", 0) == 0);
      const auto node = nlohmann::json::parse(line);
      CHECK(node.contains("checks"));
      ++seen;
    }
  }
  CHECK(seen == nodes);
}

// Runs `cmd`, returns its exit status and output (stdout+stderr).
int Run(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return pclose(p);
}

std::string TempFile(const std::string& name, const std::string& content) {
  char dir[] = "/tmp/plumb-report-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string path = std::string(dir) + "/" + name;
  std::ofstream(path) << content;
  return path;
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("drift text: drifted keys with repair/intent, waived, unreadable, verdict") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.driver", "2099-01-01");
  std::string t = DriftToText(testing::WorldDriftReport(w));
  // gpu001 and gpu002 drift identically now that gpu002's driver is waived: one group.
  CHECK(t.find("~ gpu[001-002] (2 nodes): 1 drifted, 0 waived") == std::string::npos);
  CHECK(t.find("~ sysctl.vm.swappiness: 60 -> 10  (repair)  stacks/h100.yaml:4:34") !=
        std::string::npos);
  CHECK(t.find("= nvidia.driver: 535.161.08 (want 550.90.07)  waived: tuning trial INC-1234") !=
        std::string::npos);
  CHECK(t.find("! gpu004: unreadable: timeout") != std::string::npos);
  CHECK(t.find("Verdict: DRIFT: 2 of 4 node(s) drifted (2 key(s)), 1 key(s) waived, 1 node(s) "
               "unreadable, 1 in sync") != std::string::npos);
}

TEST_CASE("drift text: identical nodes collapse into one host list") {
  testing::ReportWorld w;
  w.plan.nodes[1].actions.erase(w.plan.nodes[1].actions.begin());   // gpu002 = gpu001 now
  std::string t = DriftToText(testing::WorldDriftReport(w));
  CHECK(t.find("~ gpu[001-002] (2 nodes): 1 drifted, 0 waived") != std::string::npos);
  CHECK(Count(t, "sysctl.vm.swappiness") == 1);
}

TEST_CASE("drift json: verdict, exit code and per-check status") {
  testing::ReportWorld w;
  auto j = DriftToJson(testing::WorldDriftReport(w));
  CHECK(j["verdict"] == "drift");
  CHECK(j["exit_code"] == 2);
  CHECK(j["summary"]["drift_keys"] == 3);
  CHECK(j["nodes"][0]["checks"][3]["key"] == "sysctl.vm.swappiness");
  CHECK(j["nodes"][0]["checks"][3]["status"] == "drift");
  CHECK(j["nodes"][0]["checks"][3]["reason"] == "repair");
  CHECK(j["nodes"][3]["readable"] == false);
}

TEST_CASE("drift json: the streamed document is the tree, a node per line") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.driver", "2099-01-01");
  w.AddWaiver("gpu001", "sysctl.*", "2020-01-01");   // expired: a diagnostic, a waiver object
  // Escapes stay inside strings, and a reason quoting the frame's own text is not spliced into.
  w.plan.unreadable[0].reason = "line one\nline \"two\" \"checks\":[] ,";
  DriftReport r = testing::WorldDriftReport(w);
  std::ostringstream streamed;
  DriftToJson(r, streamed);
  CHECK(streamed.str() == NodePerLine(DriftToJson(r)));
  CHECK(nlohmann::json::parse(streamed.str()) == DriftToJson(r));
  CheckNodeLines(streamed.str(), r.nodes.size());
  SUBCASE("bytes that are not UTF-8 (an SSH error's text) are written as U+FFFD, not thrown") {
    r.nodes.back().unreadable_reason = "bad \xff\xfe bytes";
    std::ostringstream out;
    DriftToJson(r, out);
    const auto back = nlohmann::json::parse(out.str());
    CHECK(back["nodes"].back()["unreadable_reason"] == "bad \xef\xbf\xbd\xef\xbf\xbd bytes");
    CheckNodeLines(out.str(), r.nodes.size());
  }
  SUBCASE("no nodes") {
    r.nodes.clear();
    std::ostringstream none;
    DriftToJson(r, none);
    CHECK(none.str() == DriftToJson(r).dump(2) + "\n");
    CHECK(none.str() == NodePerLine(DriftToJson(r)));
  }
}

TEST_CASE("drift json and sarif: streamed on all cores, the same bytes as from the tree") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.driver", "2099-01-01");
  DriftReport small = testing::WorldDriftReport(w);
  // 2000 nodes (copies of the 4, renamed): enough for the nodes to be formatted in chunks.
  DriftReport big = small;
  big.nodes.clear();
  for (int i = 0; i < 500; ++i)
    for (const DriftNode& n : small.nodes) {
      DriftNode copy = n;
      copy.node = fmt::format("{}-{:03}", n.node, i);
      big.nodes.push_back(std::move(copy));
    }
  DriftReport clean = small;   // nothing differs: an empty results array
  for (DriftNode& n : clean.nodes)
    for (DriftCheck& c : n.checks) c.status = plumb::plans::report::DriftStatus::kInSync;
  RenderOptions o;
  o.tool_version = "1.2.3";
  for (const DriftReport* r : {&small, &big, &clean}) {
    CAPTURE(r->nodes.size());
    std::ostringstream json_out, sarif_out;
    DriftToJson(*r, json_out);
    CHECK(json_out.str() == NodePerLine(DriftToJson(*r)));
    CheckNodeLines(json_out.str(), r->nodes.size());
    DriftToSarif(*r, o, sarif_out);
    CHECK(sarif_out.str() == DriftToSarif(*r, o).dump(2) + "\n");
  }
  CHECK(DriftToSarif(clean, o)["runs"][0]["results"].empty());
  CHECK(DriftToSarif(big, o)["runs"][0]["results"].size() == 500 * 3);
}

TEST_CASE("drift junit: one testcase per node x key, validates against junit-10.xsd") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.driver", "2099-01-01");
  w.plan.unreadable[0].reason = "probe error: <sysctl> & \"quotes\"";   // must be escaped
  std::string xml = DriftToJunit(testing::WorldDriftReport(w));
  CHECK(Count(xml, "<testcase ") == 4 + 4 + 4 + 1);
  CHECK(Count(xml, "<failure ") == 2);
  CHECK(Count(xml, "<skipped ") == 1);
  CHECK(Count(xml, "<error ") == 1);
  CHECK(xml.find("<testsuites name=\"plumb drift pod-a\" tests=\"13\" failures=\"2\" errors=\"1\"") !=
        std::string::npos);
  CHECK(xml.find("&lt;sysctl&gt; &amp; &quot;quotes&quot;") != std::string::npos);
  std::string skip;
  auto xsd = testing::ThirdPartySchema("junit-10.xsd", "the JUnit XML schema", &skip);
  if (!xsd) {
    MESSAGE(skip);
    return;
  }
  std::string path = TempFile("drift.xml", xml);
  std::string out;
  int rc = Run("xmllint --noout --schema '" + *xsd + "' '" + path + "'", &out);
  INFO("xmllint (install libxml2-utils: scripts/install-deps.sh): " << out);
  CHECK(rc == 0);
  CHECK(out.find("validates") != std::string::npos);
}

TEST_CASE("drift junit: xmllint rejects a broken document (the validation can fail)") {
  std::string skip;
  auto xsd = testing::ThirdPartySchema("junit-10.xsd", "the JUnit XML schema", &skip);
  if (!xsd) {
    MESSAGE(skip);
    return;
  }
  std::string path = TempFile("bad.xml", "<testsuites><testsuite name=\"x\"/></testsuites>\n");
  std::string out;
  int rc = Run("xmllint --noout --schema '" + *xsd + "' '" + path + "'", &out);
  CHECK(rc != 0);   // testsuite lacks the required tests/failures/errors
}

TEST_CASE("drift sarif: results at the pin's file:line, waived as suppressed; schema-valid") {
  testing::ReportWorld w;
  w.AddWaiver("gpu002", "nvidia.driver", "2099-01-01");
  auto s = DriftToSarif(testing::WorldDriftReport(w), {"1.2.3", 0});
  const auto& results = s["runs"][0]["results"];
  REQUIRE(results.size() == 3);
  const auto& r0 = results[0];
  CHECK(r0["ruleId"] == "plumb.drift.sysctl");
  CHECK(r0["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "stacks/h100.yaml");
  CHECK(r0["locations"][0]["physicalLocation"]["region"]["startLine"] == 4);
  CHECK(r0["locations"][0]["logicalLocations"][0]["name"] == "gpu001");
  CHECK(r0["properties"]["reason"] == "repair");
  int suppressed = 0;
  for (const auto& r : results) suppressed += r.contains("suppressions");
  CHECK(suppressed == 1);
  CHECK(s["runs"][0]["invocations"][0]["toolExecutionNotifications"].size() == 1);
  std::string skip;
  auto schema = testing::ThirdPartySchema("sarif-schema-2.1.0.json", "the SARIF 2.1.0 JSON Schema", &skip);
  if (!schema) {
    MESSAGE(skip);
    return;
  }
  auto errors = testing::ValidateAgainst(*schema, s);
  INFO((errors.empty() ? std::string() : errors.front()));
  CHECK(errors.empty());
  // ...and the validator is not a rubber stamp.
  s["runs"][0]["results"][0]["level"] = "fatal";
  CHECK_FALSE(testing::ValidateAgainst(*schema, s).empty());
}

TEST_CASE("drift prom: textfile exposition with HELP/TYPE, per node/module gauges") {
  testing::ReportWorld w;
  w.cluster.name = w.plan.cluster = "pod\"a";   // label escaping
  std::string p = DriftToProm(testing::WorldDriftReport(w), {"1", 1764417600});
  CHECK(p.find("plumb_drift{cluster=\"pod\\\"a\",node=\"gpu001\",module=\"sysctl\"} 1\n") != std::string::npos);
  CHECK(p.find("plumb_drift{cluster=\"pod\\\"a\",node=\"gpu001\",module=\"kernel\"} 0\n") != std::string::npos);
  CHECK(p.find("plumb_drift_keys{cluster=\"pod\\\"a\",node=\"gpu002\"} 2\n") != std::string::npos);
  CHECK(p.find("plumb_node_readable{cluster=\"pod\\\"a\",node=\"gpu004\"} 0\n") != std::string::npos);
  CHECK(p.find("plumb_last_run_timestamp_seconds{cluster=\"pod\\\"a\"} 1764417600\n") != std::string::npos);
  // The exposition grammar, line by line (prom_grammar.h).
  testing::PromCheck check = testing::CheckPromText(p);
  INFO((check.problems.empty() ? std::string() : check.problems.front()));
  CHECK(check.problems.empty());
  CHECK(check.samples == 9 + 3 + 3 + 3 + 4 + 1 + 1);   // plumb_node_unhealthy: every readable node
}

TEST_CASE("drift html: one self-contained page, heat map cell per node, drifted node marked") {
  testing::ReportWorld w;
  std::string h = DriftToHtml(testing::WorldDriftReport(w));
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("src=") == std::string::npos);
  CHECK(h.find("href=") == std::string::npos);
  CHECK(h.find("<td class=\"cell s-drift\" title=\"gpu001: drift, 1 drifted, 0 waived\">gpu001</td>") !=
        std::string::npos);
  CHECK(h.find("<td class=\"cell s-ok\" title=\"gpu003: in sync") != std::string::npos);
  CHECK(h.find("<td class=\"cell s-unread\" title=\"gpu004: unreadable") != std::string::npos);
  CHECK(h.find("<th scope=\"row\">r01</th>") != std::string::npos);
  CHECK(h.find("<code>sysctl.vm.swappiness</code>: 60 &rarr; 10 (repair)") != std::string::npos);
}

namespace {

// The report world with what issue 33 asks every format to say: a month-old snapshot, two
// InfiniBand ports of gpu001 off their pin (each named), a driver row whose values read the
// same (and why), gpu003's failed GPU check and gpu001's warning (findings, not drift).
DriftReport Issue33Report(testing::ReportWorld& w) {
  w.plan.gathered_at = "2026-10-29T12:00:00.000Z";
  for (auto& [n, nd] : w.desired) {
    nd.desired.Mut()["fabric"] = {{"infiniband", {{"rate_gbps", 400}}}};
    nd.desired.Mut()["health"] = {{"gpu_health", {{"max_uncorrected_ecc", 0}}}};
    nd.origins.Mut()["/health/gpu_health/max_uncorrected_ecc"] = {"stacks/h100.yaml", 9, 30};
  }
  for (const char* ca : {"mlx5_0", "mlx5_1"}) {
    auto pa = testing::MakeAction("infiniband", "/fabric/infiniband/rate_gbps", "fabric.infiniband.rate_gbps",
                                  100.0, 400, modules::Disruption::kDrain, plans::ChangeReason::kIntent, {});
    pa.action.id = fmt::format("infiniband.{}.1.rate_gbps", ca);
    pa.action.params = {{"manual", true}, {"member", fmt::format("{} port 1", ca)}};
    w.plan.nodes[0].actions.push_back(pa);
  }
  auto same = testing::MakeAction("nvidia_driver", "/nvidia/driver", "nvidia.driver", "550.90.07", "550.90.07",
                                  modules::Disruption::kReboot, plans::ChangeReason::kRepair, {"stacks/h100.yaml", 2, 19});
  same.action.params = {{"gaps", {"nvidia-driver-550 is at 550.90.07-0ubuntu1, not 550.90.07-1"}}};
  w.plan.nodes[1].actions = {same};
  w.plan.health = {{"gpu001", {testing::XidFinding()}}, {"gpu003", {testing::EccFinding()}}};
  return testing::WorldDriftReport(w, "2026-11-29",
                                   {"kernel", "nvidia_driver", "sysctl", "infiniband", "gpu_health"});
}

}  // namespace

TEST_CASE("drift formats: findings, every member, why, and the facts' time in every format (issue 33)") {
  testing::ReportWorld w;
  const DriftReport r = Issue33Report(w);
  CHECK(r.gathered_at == "2026-10-29T12:00:00.000Z");
  CHECK(r.verdict == DriftVerdict::kDrift);   // gpu001, gpu002 drift; gpu003's finding is not drift

  const std::string t = DriftToText(r);
  CHECK(t.find("facts gathered 2026-10-29T12:00:00.000Z, 31d 0h before") != std::string::npos);
  CHECK(t.find("~ fabric.infiniband.rate_gbps [mlx5_0 port 1]: 100.0 -> 400  (intent)") != std::string::npos);
  CHECK(t.find("~ fabric.infiniband.rate_gbps [mlx5_1 port 1]: 100.0 -> 400  (intent)") != std::string::npos);
  CHECK(t.find("~ nvidia.driver: 550.90.07 -> 550.90.07  (repair)  stacks/h100.yaml:2:19\n"
               "      why: nvidia-driver-550 is at 550.90.07-0ubuntu1, not 550.90.07-1") != std::string::npos);
  CHECK(t.find("Health (findings, not drift: the verdict does not count them):\n") != std::string::npos);
  CHECK(t.find("  gpu003:\n    ! gpu_health: GPU uncorrected ECC errors on GPU 3: 2 (max 0): 2 uncorrected "
               "ECC errors since the driver loaded > 0  stacks/h100.yaml:9:30\n") != std::string::npos);
  CHECK(t.find("    ? gpu_health: GPU XID 13 on GPU 0: 1 (not 48, 63): 1 time since boot") != std::string::npos);
  CHECK(t.find("; health: 1 node(s) unhealthy, 2 finding(s)") != std::string::npos);

  const auto j = DriftToJson(r);
  CHECK(j["gathered_at"] == "2026-10-29T12:00:00.000Z");
  CHECK(j["facts_age_s"] == 31 * 86400);
  CHECK(j["summary"]["unhealthy_nodes"] == 1);
  CHECK(j["summary"]["findings"] == 2);
  CHECK(j["nodes"][2]["findings"][0]["subject"] == "GPU 3");
  CHECK(j["nodes"][2]["findings"][0]["threshold"] == nlohmann::json{{"max", 0}});
  CHECK(j["nodes"][2]["unhealthy"] == true);
  CHECK(j["nodes"][2]["drift"] == 0);
  std::vector<std::string> members;
  for (const auto& c : j["nodes"][0]["checks"])
    if (c.contains("member")) members.push_back(c["member"]);
  CHECK(members == std::vector<std::string>{"mlx5_0 port 1", "mlx5_1 port 1"});
  bool why = false;
  for (const auto& c : j["nodes"][1]["checks"])
    why |= c.value("why", "").find("550.90.07-0ubuntu1") != std::string::npos;
  CHECK(why);
  std::ostringstream streamed;
  DriftToJson(r, streamed);
  CHECK(streamed.str() == NodePerLine(j));

  const std::string xml = DriftToJunit(r);
  CHECK(xml.find("<testcase name=\"fabric.infiniband.rate_gbps [mlx5_1 port 1]\"") != std::string::npos);
  CHECK(xml.find("<testcase name=\"health: GPU uncorrected ECC errors [GPU 3]\" classname=\"gpu003.gpu_health\"") !=
        std::string::npos);
  CHECK(xml.find("<failure type=\"health.gpu_health\" message=\"gpu_health: GPU uncorrected ECC errors on GPU 3: "
                 "2 (max 0)") != std::string::npos);
  CHECK(xml.find("<system-out>warning: gpu_health: GPU XID 13 on GPU 0") != std::string::npos);
  CHECK(xml.find("<property name=\"gathered_at\" value=\"2026-10-29T12:00:00.000Z\"/>") != std::string::npos);
  CHECK(xml.find("why: nvidia-driver-550 is at 550.90.07-0ubuntu1") != std::string::npos);

  RenderOptions o{"1.2.3", 1764417600};
  const auto sarif = DriftToSarif(r, o);
  int health_errors = 0, health_warnings = 0;
  for (const auto& x : sarif["runs"][0]["results"]) {
    if (x["ruleId"] != "plumb.health.gpu_health") continue;
    (x["level"] == "error" ? health_errors : health_warnings)++;
    if (x["level"] == "error") {
      CHECK(x["message"]["text"] == "gpu003: gpu_health: GPU uncorrected ECC errors on GPU 3: 2 (max 0): 2 "
                                    "uncorrected ECC errors since the driver loaded > 0");
      CHECK(x["locations"][0]["physicalLocation"]["region"]["startLine"] == 9);
      CHECK(x["properties"]["subject"] == "GPU 3");
    }
  }
  CHECK(health_errors == 1);
  CHECK(health_warnings == 1);
  CHECK(sarif["runs"][0]["properties"]["gathered_at"] == "2026-10-29T12:00:00.000Z");
  std::ostringstream sarif_out;
  DriftToSarif(r, o, sarif_out);
  CHECK(sarif_out.str() == sarif.dump(2) + "\n");

  const std::string p = DriftToProm(r, o);
  CHECK(p.find("plumb_node_unhealthy{cluster=\"pod-a\",node=\"gpu003\"} 1\n") != std::string::npos);
  CHECK(p.find("plumb_node_unhealthy{cluster=\"pod-a\",node=\"gpu001\"} 0\n") != std::string::npos);
  CHECK(p.find("plumb_health_finding{cluster=\"pod-a\",node=\"gpu003\",module=\"gpu_health\","
               "check=\"gpu_health.gpu3.ecc\",subject=\"GPU 3\",status=\"fail\"} 1\n") != std::string::npos);
  CHECK(p.find("plumb_facts_gathered_timestamp_seconds{cluster=\"pod-a\"} 1793275200\n") != std::string::npos);
  testing::PromCheck check = testing::CheckPromText(p);
  INFO((check.problems.empty() ? std::string() : check.problems.front()));
  CHECK(check.problems.empty());

  const std::string h = DriftToHtml(r);
  CHECK(h.find("facts gathered 2026-10-29T12:00:00.000Z, 31d 0h before") != std::string::npos);
  CHECK(h.find("<code>fabric.infiniband.rate_gbps [mlx5_1 port 1]</code>") != std::string::npos);
  CHECK(h.find("health: gpu_health: GPU uncorrected ECC errors on GPU 3: 2 (max 0)") != std::string::npos);
  CHECK(h.find("why: nvidia-driver-550 is at 550.90.07-0ubuntu1") != std::string::npos);

  // The machine formats stay valid with the new content.
  std::string skip;
  if (auto xsd = testing::ThirdPartySchema("junit-10.xsd", "the JUnit XML schema", &skip)) {
    std::string out;
    int rc = Run("xmllint --noout --schema '" + *xsd + "' '" + TempFile("drift.xml", xml) + "'", &out);
    INFO(out);
    CHECK(rc == 0);
  } else {
    MESSAGE(skip);
  }
  if (auto schema = testing::ThirdPartySchema("sarif-schema-2.1.0.json", "the SARIF 2.1.0 JSON Schema", &skip)) {
    auto errors = testing::ValidateAgainst(*schema, sarif);
    INFO((errors.empty() ? std::string() : errors.front()));
    CHECK(errors.empty());
  } else {
    MESSAGE(skip);
  }
}
