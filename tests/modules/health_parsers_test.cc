// Health parsers (dcgm, gpu_health, nccl_bw, ib_health) on real-format outputs (tests/data/<module>,
// see SOURCES.md): the values each fixture must give, the located error each broken one must
// give, and the facts each module's parts make.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "modules/dcgm/parse.h"
#include "modules/fixtures.h"
#include "modules/gpu_health/parse.h"
#include "modules/ib_health/parse.h"
#include "modules/nccl_bw/parse.h"

using nlohmann::json;
using namespace plumb::modules;
using plumb::testing::MakeParts;
using plumb::testing::PartSpec;
using plumb::testing::ReadFixture;

namespace {

// Every pointer in `expect` is in `facts` with that value.
void CheckFacts(const json& facts, const json& expect) {
  for (const auto& item : expect.items()) {
    const std::string pointer = item.key();   // not a structured binding: CAPTURE is a lambda
    const json& want = item.value();
    CAPTURE(pointer);
    json::json_pointer p(pointer);
    REQUIRE_MESSAGE(facts.contains(p), facts.dump());
    CHECK(facts[p] == want);
  }
}

template <class T>
void CheckError(const plumb::Result<T>& r, const std::string& code, const std::string& message) {
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == code);
  CHECK_MESSAGE(r.error().message.find(message) != std::string::npos, r.error().message);
}

const dcgm::Test* FindTest(const dcgm::Diag& d, const std::string& name) {
  for (const auto& t : d.tests)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// dcgm

TEST_CASE("dcgm diag parser: both JSON layouts, per test and per GPU") {
  struct Row {
    const char* fixture;
    const char* layout;
    const char* version;
    const char* driver;
    size_t tests;
    const char* test;         // a test to look at
    const char* test_status;
    int failing_gpu;          // -1: none in that test
    int error_id;             // of the failing result's first warning; -1: none
  };
  for (const Row& r : std::vector<Row>{
           {"dcgm/diag-r1-dcgm3-8xh100-pass.json", "dcgm3", "3.3.5", "535.161.08", 9, "Page Retirement/Row Remap", "pass", -1, -1},
           {"dcgm/diag-r3-dcgm3-memory-fail-gpu3.json", "dcgm3", "3.3.5", "535.161.08", 15, "GPU Memory", "fail", 3, 80},
           {"dcgm/diag-r2-dcgm4-8xh100-pass.json", "dcgm4", "4.2.3", "550.90.07", 3, "memory", "pass", -1, -1},
           {"dcgm/diag-r2-dcgm4-memory-fail-gpu3.json", "dcgm4", "4.2.3", "550.90.07", 3, "memory", "fail", 3, 80},
           {"dcgm/diag-r1-dcgm4-gb10-persistence-fail.json", "dcgm4", "4.2.3", "580.82.09", 1, "software", "fail", 0, 29},
       }) {
    CAPTURE(r.fixture);
    auto d = dcgm::ParseDiagJson(ReadFixture(r.fixture));
    REQUIRE_MESSAGE(d.ok(), d.error().message);
    CHECK(d->layout == r.layout);
    CHECK(d->version == r.version);
    CHECK(d->driver_version == r.driver);
    CHECK(d->runtime_error.empty());
    CHECK(d->tests.size() == r.tests);
    const dcgm::Test* t = FindTest(*d, r.test);
    REQUIRE(t != nullptr);
    CHECK(t->status == r.test_status);
    int failing = -1, error_id = -1;
    for (const auto& res : t->results) {
      if (res.status != "fail") continue;
      REQUIRE(res.gpu.has_value());
      failing = *res.gpu;
      REQUIRE_FALSE(res.warnings.empty());
      CHECK_FALSE(res.warnings.front().message.empty());
      error_id = res.warnings.front().error_id.value_or(-1);
    }
    CHECK(failing == r.failing_gpu);
    CHECK(error_id == r.error_id);
  }
}

TEST_CASE("dcgm diag parser: details of the 3.x and 4.x documents") {
  auto d3 = dcgm::ParseDiagJson(ReadFixture("dcgm/diag-r3-dcgm3-memory-fail-gpu3.json"));
  REQUIRE(d3.ok());
  // 3.x Deployment results are for the whole node; per-GPU tests have one result per GPU.
  CHECK_FALSE(d3->tests.front().results.front().gpu.has_value());
  CHECK(d3->tests.front().category == "Deployment");
  const dcgm::Test* pcie = FindTest(*d3, "PCIe");
  REQUIRE(pcie != nullptr);
  CHECK(pcie->category == "Integration");
  REQUIRE(pcie->results.size() == 8);
  CHECK(pcie->results[7].gpu == 7);
  REQUIRE(pcie->results[7].info.size() == 1);
  CHECK(pcie->results[7].info[0].find("GPU 7 GPU to Host bandwidth:\t\t24.02 GB/s") == 0);
  const dcgm::Test* mem = FindTest(*d3, "GPU Memory");
  REQUIRE(mem != nullptr);
  CHECK(mem->results[3].warnings[0].message == "GPU 3 had uncorrectable memory errors and row remapping failed.");
  CHECK(FindTest(*d3, "Memory Bandwidth")->category == "Stress");

  auto gb10 = dcgm::ParseDiagJson(ReadFixture("dcgm/diag-r1-dcgm4-gb10-persistence-fail.json"));
  REQUIRE(gb10.ok());
  const dcgm::Test& sw = gb10->tests.at(0);
  CHECK(sw.results.at(0).entity_group == "GPU");
  CHECK(sw.results.at(0).warnings.at(0).message.find("Persistence Mode: Persistence mode for GPU 0 is disabled.") == 0);
  REQUIRE(sw.info.size() == 1);
  CHECK(sw.info[0].find("SRAM Threshold checking was skipped") != std::string::npos);

  auto failed = dcgm::ParseDiagJson(ReadFixture("dcgm/diag-dcgm3-runtime-error.json"));
  REQUIRE(failed.ok());
  CHECK(failed->runtime_error == "Error: Diagnostic could not be run while DCGM is paused.");
  CHECK(failed->tests.empty());
  CHECK(failed->version == "3.3.5");
}

TEST_CASE("dcgm diag parser: older warning and info forms, lines around the document") {
  // Plain-string warnings (DCGM 2.x), the Deployment tests' "warnings" text key and numeric
  // gpu_id (3.x), a gpu_id list, a CPU entity; a stderr line before and after the document.
  std::string text =
      "nvvs: note\n"
      "{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"category\": \"Deployment\", \"tests\": ["
      "{\"name\": \"Persistence Mode\", \"results\": [{\"gpu_id\": 2, \"status\": \"Fail\", \"warnings\": "
      "[{\"error_id\": 29, \"warnings\": \"Persistence mode for GPU 2 is disabled.\"}]}]},"
      "{\"name\": \"Inforom\", \"results\": [{\"gpu_id\": \"0,1\", \"status\": \"Warn\", \"warnings\": [\"old text\"]}]},"
      "{\"name\": \"CPU EUD Test\", \"results\": [{\"cpu_id\": \"0\", \"status\": \"SKIP\"}]}]}]}}\n"
      "trailing stderr\n";
  auto d = dcgm::ParseDiagJson(text);
  REQUIRE_MESSAGE(d.ok(), d.error().message);
  CHECK(d->notes == std::vector<std::string>{"nvvs: note", "trailing stderr"});
  REQUIRE(d->tests.size() == 3);
  CHECK(d->tests[0].results.at(0).gpu == 2);
  CHECK(d->tests[0].results.at(0).warnings.at(0).message == "Persistence mode for GPU 2 is disabled.");
  CHECK(d->tests[0].results.at(0).warnings.at(0).error_id == 29);
  REQUIRE(d->tests[1].results.size() == 2);
  CHECK(d->tests[1].results[1].gpu == 1);
  CHECK(d->tests[1].results[1].warnings.at(0).message == "old text");
  CHECK(d->tests[1].status == "warn");
  CHECK(d->tests[2].results.at(0).entity_group == "CPU");
  CHECK_FALSE(d->tests[2].results.at(0).gpu.has_value());
  CHECK(d->tests[2].status == "skip");
}

TEST_CASE("dcgm diag parser: broken outputs are located errors") {
  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("dcgm/diag-truncated.json"), "JSON document cut short in line"},
           {ReadFixture("dcgm/diag-r3-text-mode-excerpt.txt"), "expected a JSON document in line 1"},
           {"", "empty output"},
           {"\n\n", "empty output"},
           {"{\"version\": \"3.3.5\"}\n", "no \"DCGM GPU Diagnostic\" (DCGM 3) or \"DCGM Diagnostic\" (DCGM 4) object"},
           {"{\"DCGM GPU Diagnostic\": {\"test_categories\": [{\"category\": \"Hardware\", \"tests\": [{\"name\": "
            "\"GPU Memory\", \"results\": [{\"gpu_id\": \"0\", \"status\": \"Maybe\"}]}]}]}}\n",
            "unknown status 'Maybe' in test 'GPU Memory'"},
           {"{\"DCGM Diagnostic\": {\"test_categories\": 3}}\n", "\"test_categories\" is not a list"},
           {"{\"DCGM Diagnostic\": {}}\n", "no \"test_categories\" and no \"runtime_error\""},
           {"{\"DCGM Diagnostic\":\n {\"test_categories\": [,]}}\n", "not valid JSON in line 2"},
       }) {
    CAPTURE(r.text);
    CheckError(dcgm::ParseDiagJson(r.text), "probe.dcgm", r.error);
  }
}

TEST_CASE("dcgm: no host engine is a Diagnostic with a hint, for diag and discovery") {
  std::string text = ReadFixture("dcgm/hostengine-unreachable.txt");
  auto said = dcgm::HostEngineError(text);
  REQUIRE(said.has_value());
  CHECK(*said == "Error: unable to establish a connection to the specified host: localhost; "
                 "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.");
  for (const auto& error : {dcgm::ParseDiagJson(text).error(), dcgm::ParseDiscovery(text).error()}) {
    CHECK(error.code == "probe.dcgm");
    CHECK(error.message.find("cannot reach the DCGM host engine") != std::string::npos);
    CHECK_FALSE(error.hint.empty());
  }
  CHECK_FALSE(dcgm::HostEngineError(ReadFixture("dcgm/discovery-8xh800-dcgm318.txt")).has_value());
}

TEST_CASE("dcgm discovery parser: the GPU table") {
  auto g = dcgm::ParseDiscovery(ReadFixture("dcgm/discovery-8xh800-dcgm318.txt"));
  REQUIRE_MESSAGE(g.ok(), g.error().message);
  REQUIRE(g->size() == 8);
  CHECK((*g)[0].name == "NVIDIA H800");
  CHECK((*g)[5].id == 5);
  CHECK((*g)[5].bus_id == "00000000:BD:00.0");
  CHECK((*g)[7].uuid == "GPU-474d838c-171f-d249-4f45-bbc01a8eb74a");

  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("dcgm/discovery-truncated.txt"), "expected two table cells in line 15"},
           {ReadFixture("nvidia_driver/smi-garbage.txt"), "expected 'N GPUs found.' in line 1"},
           {"", "empty output"},
           {"2 GPUs found.\n| 0      | Name: NVIDIA H100 80GB HBM3 |\n", "the table lists 1 GPUs, not the 2 announced in line 1"},
           {"1 GPUs found.\n|        | Name: NVIDIA H100 80GB HBM3 |\n", "device information before a GPU ID in line 2"},
           {"1 GPUs found.\n| x      | Name: NVIDIA H100 80GB HBM3 |\n", "bad GPU ID in line 2"},
       }) {
    CAPTURE(r.text);
    CheckError(dcgm::ParseDiscovery(r.text), "probe.dcgm", r.error);
  }
}

TEST_CASE("dcgm discovery parser: DCGM 4.5+ says which GPUs it lists, and notes those left out") {
  // "7 GPUs found (Active)." then "Note: Use -a flag ..." (one GPU inactive), and the ConnectX
  // and CPU tables after the NvSwitches.
  auto g = dcgm::ParseDiscovery(ReadFixture("dcgm/discovery-7of8xh100-dcgm45.txt"));
  REQUIRE_MESSAGE(g.ok(), g.error().message);
  REQUIRE(g->size() == 7);
  CHECK((*g)[2].id == 2);
  CHECK((*g)[3].id == 4);
  CHECK((*g)[3].bus_id == "00000000:9A:00.0");
  CHECK((*g)[6].name == "NVIDIA H100 80GB HBM3");
  const std::string row =
      "| 0      | Name: NVIDIA H100 80GB HBM3                                          |\n"
      "|        | PCI Bus ID: 00000000:19:00.0                                         |\n";
  for (const char* header : {"1 GPU found (Active).\n", "1 GPU found (All).\n", "1 GPU found.\n"}) {
    CAPTURE(header);
    auto one = dcgm::ParseDiscovery(std::string(header) + row + "0 NvSwitches found.\n");
    REQUIRE_MESSAGE(one.ok(), one.error().message);
    CHECK(one->size() == 1);
    CHECK(one->front().bus_id == "00000000:19:00.0");
  }
  CheckError(dcgm::ParseDiscovery("2 GPUs found (Active).\n" + row), "probe.dcgm",
             "the table lists 1 GPUs, not the 2 announced in line 1");
  CheckError(dcgm::ParseDiscovery("1 GPUs found (Busy).\n" + row), "probe.dcgm",
             "expected 'N GPUs found.' in line 1");
}

TEST_CASE("dcgm facts: per test and GPU, failures named, parts read on their own") {
  auto failing = dcgm::FactsFromParts(MakeParts({{"diag", "@dcgm/diag-r3-dcgm3-memory-fail-gpu3.json", 226},
                                                 {"discovery", "@dcgm/discovery-8xh800-dcgm318.txt"}}));
  CheckFacts(failing, {{"/present", true}, {"/host_engine", "ok"}, {"/layout", "dcgm3"},
                       {"/dcgm_version", "3.3.5"}, {"/driver_version", "535.161.08"},
                       {"/runtime_error", nullptr}, {"/counts/fail", 1}, {"/counts/pass", 56},
                       {"/failures/0/test", "GPU Memory"}, {"/failures/0/category", "Hardware"},
                       {"/failures/0/gpu", 3}, {"/failures/0/status", "fail"},
                       {"/failures/0/message", "GPU 3 had uncorrectable memory errors and row remapping failed."},
                       {"/tests/10/name", "GPU Memory"}, {"/tests/10/status", "fail"},
                       {"/tests/10/results/3/warnings/0/error_id", 80}, {"/tests/0/results/0/gpu", nullptr},
                       {"/gpus/7/bus_id", "00000000:E2:00.0"}, {"/gpus/0/name", "NVIDIA H800"}});
  CHECK_FALSE(failing.contains("part_errors"));

  // dcgmi diag runs an embedded host engine when none is listening; discovery cannot.
  auto embedded = dcgm::FactsFromParts(MakeParts({{"diag", "@dcgm/diag-r1-dcgm3-8xh100-pass.json"},
                                                  {"discovery", "@dcgm/hostengine-unreachable.txt", 1}}));
  CheckFacts(embedded, {{"/host_engine", "unreachable"}, {"/counts/pass", 9}, {"/failures", json::array()},
                        {"/gpus", nullptr}, {"/part_errors/0/part", "discovery"}, {"/part_errors/0/code", "probe.dcgm"}});

  CheckFacts(dcgm::FactsFromParts(MakeParts({{"diag", "plumb-absent: dcgmi\n", 127}, {"discovery", "plumb-absent: dcgmi\n", 127}})),
             {{"/present", false}, {"/tests", json::array()}, {"/host_engine", nullptr}});
  CheckFacts(dcgm::FactsFromParts(MakeParts({{"diag", "@dcgm/diag-truncated.json", 124}})),
             {{"/present", true}, {"/tests", json::array()}, {"/part_errors/0/part", "diag"}});
  CheckFacts(dcgm::FactsFromParts(MakeParts({{"diag", "@dcgm/diag-dcgm3-runtime-error.json", 237}})),
             {{"/runtime_error", "Error: Diagnostic could not be run while DCGM is paused."}, {"/tests", json::array()}});
  CheckFacts(dcgm::FactsFromParts(MakeParts({{"diag", "@dcgm/diag-r2-dcgm4-memory-fail-gpu3.json", 226}})),
             {{"/layout", "dcgm4"}, {"/failures/0/test", "memory"}, {"/failures/0/gpu", 3}, {"/counts/fail", 1}});
}

// ---------------------------------------------------------------------------------------------
// gpu_health

TEST_CASE("gpu_health nvidia-smi parser: health fields, N/A and R610 lines") {
  auto h200 = gpu_health::ParseHealthCsv(ReadFixture("gpu_health/smi-health-610-h200.txt"));
  REQUIRE_MESSAGE(h200.ok(), h200.error().message);
  REQUIRE(h200->gpus.size() == 1);
  const auto& g = h200->gpus[0];
  CHECK(g.bus_id == "00000000:83:00.0");
  CHECK(g.ecc_enabled == true);
  CHECK(g.uncorrected_volatile == 0);
  CHECK(g.uncorrected_aggregate == 0);
  CHECK_FALSE(g.retired_pages_pending.has_value());   // Hopper: row remapping, no page retirement
  CHECK(g.remapped_rows_pending == false);
  CHECK(g.remapped_rows_failure == false);
  CHECK(g.throttle_mask == 1);
  CHECK(g.throttle_reasons == std::vector<std::string>{"gpu_idle"});

  auto failing = gpu_health::ParseHealthCsv(ReadFixture("gpu_health/smi-health-8xh100-failing.txt"));
  REQUIRE_MESSAGE(failing.ok(), failing.error().message);
  REQUIRE(failing->gpus.size() == 8);
  CHECK(failing->gpus[3].uncorrected_volatile == 2);
  CHECK(failing->gpus[3].remapped_rows_pending == true);
  CHECK(failing->gpus[5].remapped_rows_failure == true);
  CHECK(failing->gpus[5].uncorrected_aggregate == 3);
  CHECK(failing->gpus[5].throttle_reasons == std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown"});
  CHECK(failing->gpus[6].ecc_enabled == false);
  CHECK_FALSE(failing->gpus[6].uncorrected_volatile.has_value());
  CHECK(failing->gpus[6].throttle_reasons == std::vector<std::string>{"sw_power_cap"});
  CHECK_FALSE(failing->gpus[7].uncorrected_volatile.has_value());
  CHECK(failing->gpus[7].unavailable.at("ecc.errors.uncorrected.volatile.total") == "[Unknown Error]");
  CHECK(failing->gpus[6].unavailable.empty());

  auto geforce = gpu_health::ParseHealthCsv(ReadFixture("gpu_health/smi-health-610-geforce.txt"));
  REQUIRE(geforce.ok());
  CHECK_FALSE(geforce->gpus[0].ecc_enabled.has_value());
  CHECK_FALSE(geforce->gpus[0].remapped_rows_pending.has_value());

  auto v100 = gpu_health::ParseHealthCsv(ReadFixture("gpu_health/smi-health-v100.txt"));
  REQUIRE(v100.ok());
  CHECK(v100->gpus[1].retired_pages_pending == true);
  CHECK_FALSE(v100->gpus[1].remapped_rows_pending.has_value());
  CHECK(v100->gpus[1].throttle_reasons.empty());

  // The header of `--format=csv`, as each era prints it for the same query: drivers 535 and
  // later rename clocks_throttle_reasons.active to clocks_event_reasons.active there.
  for (const char* era : {"gpu_health/smi-health-header-pre535.txt", "gpu_health/smi-health-header-535.txt"}) {
    CAPTURE(era);
    auto header = gpu_health::ParseHealthCsv(ReadFixture(era));
    REQUIRE_MESSAGE(header.ok(), header.error().message);
    CHECK(header->gpus.size() == 2);
    CHECK(header->gpus[1].throttle_reasons == std::vector<std::string>{"gpu_idle"});
  }
  // A header of other fields (another query's output in this part) would misread every
  // column: refused, where it is.
  CheckError(gpu_health::ParseHealthCsv("index, pci.bus_id, ecc.mode.current, ecc.errors.uncorrected.volatile.total, "
                                        "ecc.errors.uncorrected.aggregate.total, retired_pages.pending, "
                                        "remapped_rows.pending, remapped_rows.failure, clocks_event_reasons.supported\n" +
                                        ReadFixture("gpu_health/smi-health-8xh100.txt")),
             "probe.gpu_health", "a CSV header of other fields than the query's");

  // R610 relabels the driver version "KMD Version" and marks "Driver Version" deprecated:
  // such lines (ReadFixture("samples/nvidia-smi/q-610-head.txt")'s) are notes, not errors.
  auto r610 = gpu_health::ParseHealthCsv(
      "KMD Version                                            : 610.43.02\n" + ReadFixture("gpu_health/smi-health-610-h200.txt") +
      "Driver Version                                         : 610.43.02 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]\n");
  REQUIRE_MESSAGE(r610.ok(), r610.error().message);
  CHECK(r610->gpus.size() == 1);
  CHECK(r610->notes.size() == 2);

  auto no_driver = gpu_health::ParseHealthCsv(ReadFixture("nvidia_driver/smi-no-driver.txt"));
  REQUIRE(no_driver.ok());
  CHECK(no_driver->nvml == "no-driver");
  CHECK(no_driver->gpus.empty());
  auto mismatch = gpu_health::ParseHealthCsv(ReadFixture("nvidia_driver/smi-nvml-mismatch.txt"));
  REQUIRE(mismatch.ok());
  CHECK(mismatch->nvml == "version-mismatch");
}

TEST_CASE("gpu_health nvidia-smi parser: broken outputs are located errors") {
  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("gpu_health/smi-health-truncated.txt"), "output cut short in line 5"},
           {ReadFixture("nvidia_driver/smi-csv-8xh100.txt"), "expected 9 CSV fields in line 1"},
           {ReadFixture("nvidia_driver/smi-garbage.txt"), "expected 9 CSV fields in line 1"},
           {"0, 00000000:18:00.0, On, 0, 0, [N/A], No, No, 0x1\n", "bad ecc.mode.current in line 1"},
           {"0, 00000000:18:00.0, Enabled, -1, 0, [N/A], No, No, 0x1\n", "bad ecc.errors.uncorrected.volatile.total in line 1"},
           {"0, 00000000:18:00.0, Enabled, 0, 0, [N/A], Maybe, No, 0x1\n", "bad remapped_rows.pending in line 1"},
           {"0, 00000000:18:00.0, Enabled, 0, 0, [N/A], No, No, 1\n", "bad clocks_throttle_reasons.active in line 1"},
           {"x, 00000000:18:00.0, Enabled, 0, 0, [N/A], No, No, 0x1\n", "bad GPU index in line 1"},
       }) {
    CAPTURE(r.text);
    CheckError(gpu_health::ParseHealthCsv(r.text), "probe.gpu_health", r.error);
  }
  CHECK(gpu_health::ParseHealthCsv("")->gpus.empty());
}

TEST_CASE("gpu_health throttle reasons: nvml.h bit names") {
  CHECK(gpu_health::ThrottleReasonNames(0).empty());
  CHECK(gpu_health::ThrottleReasonNames(0x1FF).size() == 9);
  CHECK(gpu_health::ThrottleReasonNames(0x1FF).back() == "display_clock_setting");
  CHECK(gpu_health::ThrottleReasonNames(0x84) == std::vector<std::string>{"sw_power_cap", "hw_power_brake_slowdown"});
  CHECK(gpu_health::ThrottleReasonNames(0x200) == std::vector<std::string>{"unknown_0x200"});
}

TEST_CASE("gpu_health kernel log parser: XID lines in every real form") {
  struct Row {
    const char* fixture;
    size_t count;
    size_t at;          // the XID to look at
    int xid;
    const char* pci;
    const char* bus_id;
    long long pid;      // -1: none
    const char* process;
    const char* message_start;
    int line;
  };
  for (const Row& r : std::vector<Row>{
           {"gpu_health/dmesg-xid79-h100.txt", 1, 0, 79, "0000:5d:00", "00000000:5D:00.0", -1, "",
            "GPU has fallen off the bus.", 7},
           {"gpu_health/dmesg-ctime-xid13-109.txt", 4, 3, 109, "0000:cb:00", "00000000:CB:00.0", 1797828,
            "pt_main_thread", "Ch 00000008, errorString CTX SWITCH TIMEOUT", 5},
           {"gpu_health/dmesg-old-xid31-no-pid.txt", 3, 2, 31, "0000:01:00", "00000000:01:00.0", -1, "",
            "Ch 00000003, engmask 00000101", 3},
           {"gpu_health/kmsg-xid-variants.txt", 5, 0, 31, "0000:08:00", "00000000:08:00.0", 169800, "chrome",
            "Ch 00000023, intr 00000000. MMU Fault", 2},
           {"gpu_health/kmsg-xid-variants.txt", 5, 1, 45, "0000:dc:00", "00000000:DC:00.0", 1818990, "python3",
            "Ch 00000001 caused by previous Xid 149", 3},
           {"gpu_health/kmsg-xid-variants.txt", 5, 3, 149, "0019:01:00", "00000019:01:00.0", -1, "",
            "NETIR Fatal XC0 i0 Link -1", 5},
           {"gpu_health/kmsg-xid-variants.txt", 5, 4, 94, "0000:9b:00", "00000000:9B:00.0", 1234, "python3",
            "Contained ECC error", 6},
       }) {
    CAPTURE(r.fixture);
    CAPTURE(r.at);
    auto xids = gpu_health::ParseKernelLog(ReadFixture(r.fixture));
    REQUIRE_MESSAGE(xids.ok(), xids.error().message);
    REQUIRE(xids->size() == r.count);
    const auto& x = (*xids)[r.at];
    CHECK(x.xid == r.xid);
    CHECK(x.pci == r.pci);
    CHECK(x.bus_id == r.bus_id);
    CHECK(x.pid.value_or(-1) == r.pid);
    CHECK(x.process == r.process);
    CHECK_MESSAGE(x.message.find(r.message_start) == 0, x.message);
    CHECK(x.line == r.line);
  }
  auto ctime = gpu_health::ParseKernelLog(ReadFixture("gpu_health/dmesg-ctime-xid13-109.txt"));
  CHECK(ctime->at(0).stamp == "[Fri Aug 30 11:43:09 2024]");
  CHECK(gpu_health::ParseKernelLog(ReadFixture("gpu_health/dmesg-no-xid.txt"))->empty());
  CHECK(gpu_health::ParseKernelLog("")->empty());
  CHECK(gpu_health::ParseKernelLog("-- No entries --\n")->empty());

  auto restricted = gpu_health::ParseKernelLog(ReadFixture("gpu_health/dmesg-restricted.txt"));
  CheckError(restricted, "probe.gpu_health", "kernel log: could not be read in line 1");
  CHECK_FALSE(restricted.error().hint.empty());
  CheckError(gpu_health::ParseKernelLog("No journal files were found.\n"), "probe.gpu_health", "could not be read");
  CheckError(gpu_health::ParseKernelLog("[ 1.0] NVRM: Xid (PCI:0000:5d:00): x, GPU has fallen off the bus.\n"),
             "probe.gpu_health", "Xid line without an XID number in line 1");
  CheckError(gpu_health::ParseKernelLog("[ 1.0] NVRM: Xid (PCI:0000:5d:00\n"), "probe.gpu_health",
             "Xid line without '): ' in line 1");
}

TEST_CASE("gpu_health facts: GPUs, XIDs matched to GPUs, parts read on their own") {
  auto facts = gpu_health::FactsFromParts(MakeParts({{"smi", "@gpu_health/smi-health-8xh100-failing.txt"},
                                                     {"kmsg", "@gpu_health/dmesg-xid79-h100.txt"}}));
  CheckFacts(facts, {{"/nvml", "ok"}, {"/gpu_count", 8}, {"/gpus/3/uncorrected_volatile", 2},
                     {"/gpus/3/remapped_rows_pending", true}, {"/gpus/5/throttle_mask", "0x0000000000000048"},
                     {"/gpus/5/throttle_reasons/1", "hw_thermal_slowdown"}, {"/gpus/6/ecc_enabled", false},
                     {"/gpus/6/uncorrected_volatile", nullptr}, {"/gpus/0/retired_pages_pending", nullptr},
                     {"/gpus/7/unavailable/ecc.errors.uncorrected.volatile.total", "[Unknown Error]"},
                     {"/xids/0/xid", 79}, {"/xids/0/gpu", 3}, {"/xids/0/bus_id", "00000000:5D:00.0"},
                     {"/xids/0/pid", nullptr}, {"/xids/0/process", nullptr}, {"/xid_counts/79", 1}});
  CHECK_FALSE(facts.contains("part_errors"));

  CheckFacts(gpu_health::FactsFromParts(MakeParts({{"smi", "@nvidia_driver/smi-no-driver.txt", 9},
                                                   {"kmsg", "@gpu_health/dmesg-restricted.txt", 1}})),
             {{"/nvml", "no-driver"}, {"/gpu_count", nullptr}, {"/gpus", json::array()}, {"/xids", nullptr},
              {"/part_errors/0/part", "kmsg"}});
  CheckFacts(gpu_health::FactsFromParts(MakeParts({{"smi", "@gpu_health/smi-health-truncated.txt", 124},
                                                   {"kmsg", "@gpu_health/dmesg-ctime-xid13-109.txt"}})),
             {{"/nvml", "timeout"}, {"/gpus", json::array()}, {"/xid_counts/13", 3}, {"/xid_counts/109", 1},
              {"/xids/0/gpu", nullptr}, {"/part_errors/0/part", "smi"}});
  CheckFacts(gpu_health::FactsFromParts(MakeParts({{"smi", "plumb-absent: nvidia-smi\n", 127}})),
             {{"/nvml", "absent"}, {"/xids", nullptr}});
}

// ---------------------------------------------------------------------------------------------
// nccl_bw

TEST_CASE("nccl_bw parser: the table, the summary, runs that failed") {
  struct Row {
    const char* fixture;
    size_t devices;
    size_t rows;
    bool complete;
    double busbw_last_oop, busbw_last_ip;   // -1: no rows
    double avg;                             // -1: none
    size_t errors;
  };
  for (const Row& r : std::vector<Row>{
           {"nccl_bw/allreduce-8xh100-g8.txt", 8, 31, true, 219.51, 220.61, 50.906, 0},
           {"nccl_bw/allreduce-2x8xh100-g8.txt", 16, 31, true, 219.51, 220.61, 50.906, 0},
           {"nccl_bw/allreduce-16rank-g1-mpi.txt", 16, 31, true, 338.82, 337.35, 70.742, 0},
           {"nccl_bw/allreduce-died-midway.txt", 8, 28, false, 193.93, 198.21, -1, 2},
           {"nccl_bw/allreduce-wrong-values.txt", 8, 31, true, 219.51, 220.61, 50.906, 0},
           {"nccl_bw/allreduce-v2.20-truncated.txt", 2, 4, false, 0.96, 1.01, -1, 0},
           {"nccl_bw/allreduce-2018-p100-nccl-failure.txt", 8, 0, false, -1, -1, -1, 1},
           {"nccl_bw/allreduce-nccl-warn.txt", 0, 0, false, -1, -1, -1, 2},
       }) {
    CAPTURE(r.fixture);
    auto run = nccl_bw::ParseAllReducePerf(ReadFixture(r.fixture));
    REQUIRE_MESSAGE(run.ok(), run.error().message);
    CHECK(run->devices.size() == r.devices);
    CHECK(run->rows.size() == r.rows);
    CHECK(run->complete == r.complete);
    if (r.busbw_last_oop >= 0) {
      REQUIRE_FALSE(run->rows.empty());
      CHECK(run->rows.back().out_of_place.busbw == doctest::Approx(r.busbw_last_oop));
      CHECK(run->rows.back().in_place.busbw == doctest::Approx(r.busbw_last_ip));
    }
    CHECK(run->avg_busbw.value_or(-1) == doctest::Approx(r.avg));
    CHECK(run->errors.size() == r.errors);
  }

  auto one = nccl_bw::ParseAllReducePerf(ReadFixture("nccl_bw/allreduce-8xh100-g8.txt"));
  REQUIRE(one.ok());
  CHECK(one->threads == 1);
  CHECK(one->gpus_per_thread == 8);
  CHECK(one->min_bytes == 8ULL);
  CHECK(one->max_bytes == 8589934592ULL);
  CHECK(one->devices[7].bus == "0x95");
  CHECK(one->devices[7].name == "NVIDIA H100 80GB HBM3");
  CHECK(one->devices[7].pid == 148287);
  CHECK(one->devices[7].host == "alpha-test-16way-node-001");
  CHECK(one->rows.back().size == 8589934592ULL);
  CHECK(one->rows.back().count == 2147483648ULL);
  CHECK(one->rows.back().root == -1);
  CHECK(one->rows.back().out_of_place.time_us == doctest::Approx(73372));
  CHECK(one->rows.back().out_of_place.wrong == 0);
  CHECK(one->out_of_bounds == 0);
  CHECK(one->out_of_bounds_ok == true);

  auto v220 = nccl_bw::ParseAllReducePerf(ReadFixture("nccl_bw/allreduce-v2.20-truncated.txt"));
  CHECK(v220->version == "2.20.0");
  CHECK(v220->devices[1].bus == "000f:01:00");

  auto old = nccl_bw::ParseAllReducePerf(ReadFixture("nccl_bw/allreduce-2018-p100-nccl-failure.txt"));
  CHECK_FALSE(old->devices[0].pid.has_value());
  CHECK(old->devices[3].name == "Tesla P100-PCIE-16GB");
  CHECK(old->errors[0] == "NCCL failure all_reduce.cu:95 'unhandled cuda error'");

  auto died = nccl_bw::ParseAllReducePerf(ReadFixture("nccl_bw/allreduce-died-midway.txt"));
  CHECK(died->errors[0].find("Test NCCL failure common.cu:1204 'unhandled cuda error") != std::string::npos);

  // mpirun --tag-output prefixes; "N/A" for an unchecked #wrong; the older float error column.
  auto tagged = nccl_bw::ParseAllReducePerf(
      "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "[1,0]<stdout>:   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  110.76    N/A\n"
      "        8192          2048     float     sum   61.27    0.13    0.25  0e+00   61.25    0.13    0.25  2e-07\n"
      "[1,0]<stdout>:# Avg bus bandwidth    : 92.3405 \n");
  REQUIRE_MESSAGE(tagged.ok(), tagged.error().message);
  REQUIRE(tagged->rows.size() == 2);
  CHECK_FALSE(tagged->rows[0].in_place.wrong.has_value());
  CHECK_FALSE(tagged->rows[1].root.has_value());
  CHECK(tagged->rows[1].out_of_place.wrong == 0);
  CHECK(tagged->rows[1].in_place.wrong == 1);
  CHECK(tagged->avg_busbw == doctest::Approx(92.3405));
}

TEST_CASE("nccl_bw parser: broken outputs are located errors") {
  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("nvidia_driver/smi-garbage.txt"), "expected nccl-tests output in line 1"},
           {"", "empty output"},
           {"# nThread 1 nGpus 8\n         8             2     float     sum      -1    62.35    0.00    0.00      0\n"
            "        16             4     float     sum      -1    60.40    0.00    0.00      0    60.16    0.00    0.00      0\n",
            "expected 13 columns in line 2"},
           {"# nThread 1 nGpus 8\n           8             2     float     sum      -1    62.35    x.00    0.00      0    61.02    0.00    0.00      0\n",
            "bad time, bandwidth or #wrong in line 2"},
           {"# nThread 1 nGpus 8\n# Avg bus bandwidth    : fast\n", "bad average bus bandwidth in line 2"},
           {"# nThread 1 nGpus 8\n#  Rank  x Group  0 Pid 1 on h device  0 [0x63] NVIDIA H100 80GB HBM3\n", "bad device line in line 2"},
           {"# nThread 1 nGpus 8\n# Out of bounds values : many\n", "bad out-of-bounds count in line 2"},
       }) {
    CAPTURE(r.text);
    CheckError(nccl_bw::ParseAllReducePerf(r.text), "probe.nccl_bw", r.error);
  }
}

TEST_CASE("nccl_bw facts: busbw at the largest size, #wrong, a killed run") {
  CheckFacts(nccl_bw::FactsFromParts(MakeParts({{"allreduce", "@nccl_bw/allreduce-8xh100-g8.txt"}})),
             {{"/present", true}, {"/complete", true}, {"/gpus", 8}, {"/largest_size", 8589934592ULL},
              {"/busbw_at_largest", 220.61}, {"/busbw_at_largest_oop", 219.51}, {"/busbw_at_largest_ip", 220.61},
              {"/wrong_total", 0}, {"/avg_busbw", 50.906}, {"/out_of_bounds", 0}, {"/out_of_bounds_ok", true},
              {"/rows/30/size", 8589934592ULL}, {"/rows/30/busbw_ip", 220.61}, {"/rows/0/time_oop_us", 62.35},
              {"/errors", json::array()}, {"/exit_status", 0}, {"/version", nullptr}});
  CheckFacts(nccl_bw::FactsFromParts(MakeParts({{"allreduce", "@nccl_bw/allreduce-wrong-values.txt", 1}})),
             {{"/wrong_total", 22}, {"/out_of_bounds", 50}, {"/out_of_bounds_ok", false}, {"/exit_status", 1}});
  auto died = nccl_bw::FactsFromParts(MakeParts({{"allreduce", "@nccl_bw/allreduce-died-midway.txt", 1}}));
  CheckFacts(died, {{"/complete", false}, {"/largest_size", 1073741824ULL}, {"/busbw_at_largest", 198.21},
                    {"/avg_busbw", nullptr}, {"/errors/1", ".. alpha-test-16way-node-001 pid 148287: Test failure common.cu:915"}});
  CHECK_FALSE(died.contains("part_errors"));
  CheckFacts(nccl_bw::FactsFromParts(MakeParts({{"allreduce", "@nccl_bw/allreduce-8xh100-g8.txt", 124}})),
             {{"/complete", false}, {"/busbw_at_largest", 220.61}, {"/part_errors/0/part", "allreduce"}});
  CheckFacts(nccl_bw::FactsFromParts(MakeParts({{"allreduce", "plumb-absent: all_reduce_perf\n", 127}})),
             {{"/present", false}, {"/rows", json::array()}});
  CheckFacts(nccl_bw::FactsFromParts(MakeParts({{"allreduce", "@nvidia_driver/smi-garbage.txt"}})),
             {{"/present", true}, {"/rows", json::array()}, {"/part_errors/0/code", "probe.nccl_bw"}});
}

// ---------------------------------------------------------------------------------------------
// ib_health

TEST_CASE("ib_health perfquery parser: default and extended forms") {
  auto x = ib_health::ParsePerfquery(ReadFixture("ib_health/perfquery-x-rhel75.txt"));
  REQUIRE_MESSAGE(x.ok(), x.error().message);
  REQUIRE(x->size() == 1);
  CHECK((*x)[0].extended);
  CHECK((*x)[0].lid == 10);
  CHECK((*x)[0].port == 1);
  CHECK((*x)[0].cap_mask == "0x5300");
  CHECK((*x)[0].counters.size() == 22);
  CHECK((*x)[0].counters.count("CounterSelect2") == 0);
  CHECK((*x)[0].counters.at("QP1Dropped") == 0);

  auto errors = ib_health::ParsePerfquery(ReadFixture("ib_health/perfquery-ndr-errors.txt"));
  REQUIRE(errors.ok());
  CHECK_FALSE((*errors)[0].extended);
  CHECK((*errors)[0].lid == 13);
  CHECK((*errors)[0].counters.at("SymbolErrorCounter") == 15);
  CHECK((*errors)[0].counters.at("LinkDownedCounter") == 1);
  CHECK((*errors)[0].counters.at("PortRcvErrors") == 3);
  CHECK((*errors)[0].counters.at("PortXmitData") == 4294967295ULL);

  auto both = ib_health::ParsePerfquery(ReadFixture("ib_health/perfquery-ndr-default-and-x.txt"));
  REQUIRE(both.ok());
  REQUIRE(both->size() == 2);
  CHECK((*both)[1].extended);
  CHECK((*both)[1].counters.at("PortRcvData") == 2341975277576ULL);

  auto bare = ib_health::ParsePerfquery(ReadFixture("ib_health/perfquery-no-header-ibsim.txt"));
  REQUIRE(bare.ok());
  CHECK_FALSE((*bare)[0].lid.has_value());
  CHECK((*bare)[0].counters.size() == 8);

  auto all = ib_health::ParsePerfquery("# Port counters: Lid 214 all ports\nPortXmitData:....................196508288843\n");
  REQUIRE(all.ok());
  CHECK((*all)[0].lid == 214);
  CHECK_FALSE((*all)[0].port.has_value());
  CHECK((*all)[0].cap_mask.empty());
  CHECK((*all)[0].counters.at("PortXmitData") == 196508288843ULL);

  auto max = ib_health::ParsePerfquery("PortXmitData:....................18446744073709551615\n");
  REQUIRE(max.ok());
  CHECK((*max)[0].counters.at("PortXmitData") == 18446744073709551615ULL);
}

TEST_CASE("ib_health perfquery parser: broken outputs are located errors") {
  struct Row { std::string text; const char* error; };
  for (const Row& r : std::vector<Row>{
           {ReadFixture("ib_health/perfquery-iberror.txt"), "perfquery: failed in line 1"},
           {"ibwarn: [1323906] mad_rpc_open_port: can't open UMAD port ((null):0)\n", "perfquery: failed in line 1"},
           {ReadFixture("ib_health/perfquery-truncated.txt"), "expected 'Name:....value' in line 12"},
           {ReadFixture("nvidia_driver/smi-garbage.txt"), "in line 1"},
           {"# Port counters: Lid 1 port 1 (CapMask: 0x5A00)\n", "no counters in line 1"},
           {"", "empty output"},
           {"# Port counters: Lid 1 port 1\nSymbolErrorCounter:..............many\n", "bad counter value in line 2"},
           {"# Port counters: Lid 1 port 1\nSymbolErrorCounter:..............18446744073709551616\n", "bad counter value in line 2"},
           {"# Hello\nSymbolErrorCounter:..............0\n", "expected '# Port counters: ...' in line 1"},
       }) {
    CAPTURE(r.text);
    CheckError(ib_health::ParsePerfquery(r.text), "probe.ib_health", r.error);
  }
}

TEST_CASE("ib_health facts: counters per CA port, extended values win, one bad port costs itself") {
  auto facts = ib_health::FactsFromParts(MakeParts({{"perfquery.mlx5_0.1", "@ib_health/perfquery-ndr-default-and-x.txt"},
                                                   {"perfquery.mlx5_3.1", "@ib_health/perfquery-ndr-errors.txt"},
                                                   {"perfquery.mlx5_5.1", "@ib_health/perfquery-iberror.txt", 255},
                                                   {"perfquery.mlx5_6.1", "plumb-absent: perfquery\n", 127},
                                                   {"ibstat", "@infiniband/ibstat-4xcx7-ndr.txt"}}));
  CheckFacts(facts, {{"/present", true}, {"/ports/0/ca", "mlx5_0"}, {"/ports/0/port", 1}, {"/ports/0/lid", 10},
                     {"/ports/0/counters/PortXmitData", 13672645927ULL}, {"/ports/0/counters/SymbolErrorCounter", 0},
                     {"/ports/0/counters/PortXmitWait", 239508}, {"/ports/0/error_total", 0},
                     {"/ports/1/ca", "mlx5_3"}, {"/ports/1/lid", 13}, {"/ports/1/error_total", 19},
                     {"/ports/1/counters/LinkDownedCounter", 1}, {"/part_errors/0/part", "perfquery.mlx5_5.1"},
                     {"/part_errors/0/code", "probe.ib_health"}});
  CHECK(facts["ports"].size() == 2);
  CheckFacts(ib_health::FactsFromParts(MakeParts({{"perfquery.mlx5_0.1", "plumb-absent: perfquery\n", 127}})),
             {{"/present", false}, {"/ports", json::array()}});
}
