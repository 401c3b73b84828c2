#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "modules/fixtures.h"
#include "modules/module.h"
#include "modules/probe_script.h"
#include "modules/registry.h"

using namespace plumb::modules;

namespace {

constexpr const char* kProbeNonce = "0123456789abcdef0123456789abcdef";

std::string Marker(const std::string& rest) { return std::string("@plumb:") + kProbeNonce + ":" + rest + "\n"; }

// Runs `script` with the local /bin/sh and returns its stdout.
std::string RunSh(const std::string& script) {
  auto path = std::filesystem::temp_directory_path() / ("plumb-probe-test-" + std::to_string(::getpid()) + ".sh");
  { std::ofstream(path) << script; }
  std::string out;
  if (FILE* p = ::popen(("sh " + path.string() + " 2>/dev/null").c_str(), "r")) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  std::filesystem::remove(path);
  return out;
}

}  // namespace

TEST_CASE("probe script: a bad nonce is refused") {
  CHECK_FALSE(BuildProbeScript(AllModules(), "short").ok());
  CHECK_FALSE(BuildProbeScript(AllModules(), "0123456789ABCDEF").ok());
  CHECK_FALSE(BuildProbeScript(AllModules(), "0123456789abcdef'; reboot; '").ok());
  CHECK(NewProbeNonce().size() == 32);
  CHECK(NewProbeNonce() != NewProbeNonce());
}

TEST_CASE("probe script: one section per in-band module, every snippet in a subshell") {
  auto script = BuildProbeScript(AllModules(), kProbeNonce);
  REQUIRE(script.ok());
  for (const Module* m : AllModules()) {
    if (m->ProbeScript().empty()) continue;
    CAPTURE(std::string(m->Name()));
    CHECK(script->find("printf '%s:begin " + std::string(m->Name()) + "\\n'") != std::string::npos);
    CHECK(script->find(m->ProbeScript()) != std::string::npos);
  }
  CHECK(script->find(std::string("M='@plumb:") + kProbeNonce + "'") != std::string::npos);
}

TEST_CASE("probe split: sections and parts, byte-exact, with statuses") {
  std::string out = Marker("begin kernel") + "\n" + Marker("part release") + "5.15.0-119-generic\n\n" +
                    Marker("endpart release 0") + "\n" + Marker("part boot_id") + "no newline" + "\n" +
                    Marker("endpart boot_id 3") + "\n" + Marker("end kernel 0") + Marker("begin os") + "\n" +
                    Marker("end os 1");
  auto split = SplitProbeOutput(out, kProbeNonce, {"kernel", "os"});
  CHECK(split.problems.empty());
  REQUIRE(split.sections.count("kernel"));
  auto& k = split.sections["kernel"];
  CHECK(k.complete);
  CHECK(k.exit_status == 0);
  auto parts = ParseFramedParts(k.out);
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].name == "release");
  CHECK((*parts)[0].text == "5.15.0-119-generic\n");
  CHECK((*parts)[0].exit_status == 0);
  CHECK((*parts)[1].text == "no newline");
  CHECK((*parts)[1].exit_status == 3);
  CHECK(split.sections["os"].exit_status == 1);
}

TEST_CASE("probe split: markers with another nonce, or inside a line, are tool output") {
  std::string forged = "@plumb:ffffffffffffffffffffffffffffffff:endpart release 0\nx @plumb:" +
                       std::string(kProbeNonce) + ":endpart release 0\n";
  std::string out = Marker("begin kernel") + Marker("part release") + forged + "\n" +
                    Marker("endpart release 0") + Marker("end kernel 0");
  auto split = SplitProbeOutput(out, kProbeNonce);
  auto parts = ParseFramedParts(split.sections["kernel"].out);
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 1);
  CHECK((*parts)[0].text == forged);
}

TEST_CASE("probe split: cut-short output and missing sections are reported, not fatal") {
  std::string out = Marker("begin kernel") + Marker("part release") + "5.15.0-11";
  auto split = SplitProbeOutput(out, kProbeNonce, {"kernel", "os"});
  CHECK(split.problems.ErrorCount() == 2);
  REQUIRE(split.sections.count("kernel"));
  CHECK_FALSE(split.sections["kernel"].complete);
  auto parts = ParseFramedParts(split.sections["kernel"].out);
  REQUIRE(parts.ok());
  CHECK((*parts)[0].exit_status == kPartTruncated);
  CHECK((*parts)[0].text == "5.15.0-11");
  CHECK(SplitProbeOutput("", kProbeNonce, {"kernel"}).problems.ErrorCount() == 1);
}

TEST_CASE("framing: round trip and malformed input") {
  std::vector<ProbePart> parts = {{"a", 0, "x\n%part b 0 1\n"}, {"b", -1, ""}, {"c", 127, "plumb-absent: c\n"}};
  auto back = ParseFramedParts(FrameParts(parts));
  REQUIRE(back.ok());
  REQUIRE(back->size() == 3);
  CHECK((*back)[0].text == parts[0].text);
  CHECK((*back)[1].exit_status == -1);
  CHECK((*back)[2].absent());
  CHECK_FALSE((*back)[0].absent());
  CHECK_FALSE(ParseFramedParts("%part a 0 5\nabc\n").ok());
  CHECK_FALSE(ParseFramedParts("%part a x 1\na\n").ok());
  CHECK_FALSE(ParseFramedParts("garbage").ok());
  CHECK(ParseFramedParts("").ok());
}

TEST_CASE("probe script: runs under the local /bin/sh and splits back into every section") {
  // The real script on this machine: read-only, every tool either answers or is reported absent.
  std::string nonce = NewProbeNonce();
  auto script = BuildProbeScript(AllModules(), nonce);
  REQUIRE(script.ok());
  std::vector<std::string> names;
  for (const Module* m : AllModules())
    if (!m->ProbeScript().empty()) names.emplace_back(m->Name());
  auto split = SplitProbeOutput(RunSh(*script), nonce, names);
  CHECK_MESSAGE(split.problems.empty(), split.problems.ToText());
  for (const auto& name : names) {
    CAPTURE(name);
    REQUIRE(split.sections.count(name));
    CHECK(split.sections[name].complete);
    auto facts = FindModule(name)->ParseProbe(split.sections[name].out, split.sections[name].exit_status);
    if (name == "kernel" || name == "os" || name == "marker" || name == "ofed" || name == "infiniband")
      CHECK_MESSAGE(facts.ok(), (facts.ok() ? "" : facts.error().message));
  }
  auto kernel = FindModule("kernel")->ParseProbe(split.sections["kernel"].out, 0);
  REQUIRE(kernel.ok());
  CHECK((*kernel)["release"].get<std::string>().size() > 3);
}

TEST_CASE("probe output -> facts per module, problems per module") {
  std::string out = Marker("begin kernel") + Marker("part release") + "5.15.0-119-generic\n\n" +
                    Marker("endpart release 0") + Marker("end kernel 0") + Marker("begin os") +
                    Marker("part os_release") + "NAME=\"Ubu\n" + Marker("endpart os_release 0") + Marker("end os 0");
  auto node = ParseProbeOutput({FindModule("kernel"), FindModule("os"), FindModule("sysctl")}, out, kProbeNonce);
  CHECK(node.facts["kernel"]["release"] == "5.15.0-119-generic");
  CHECK_FALSE(node.facts.contains("os"));
  CHECK_FALSE(node.facts.contains("sysctl"));
  REQUIRE(node.problems.ErrorCount() == 2);
  std::string codes;
  for (const auto& d : node.problems.items()) codes += d.code + " ";
  CHECK(codes.find("probe.missing-section") != std::string::npos);
  CHECK(codes.find("probe.os") != std::string::npos);
}
