// The tail every read command shares: the report to stdout or --out, the verdict for a
// machine's log, the exit code.
#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "plans/core/command_output.h"
#include "schemas/exit_codes.h"

using namespace plumb;

namespace {

plans::CommandOutcome EmittedReport(int exit_code) {
  plans::CommandOutcome o;
  o.render = [](std::ostream& out) { out << "the report\n"; };
  o.verdict = "plumb drift: drift: 1 of 2 node(s) drifted";
  o.exit_code = exit_code;
  return o;
}

std::string OutputTempPath() {
  char dir[] = "/tmp/plumb-output-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return std::string(dir) + "/report.txt";
}

std::string ReadBackFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("command output: text to stdout is the report alone, with the outcome's exit code") {
  std::ostringstream out, err;
  CHECK(plans::EmitOutcome("drift", EmittedReport(2), {"", "text"}, out, err) == 2);
  CHECK(out.str() == "the report\n");
  CHECK(err.str().empty());
}

TEST_CASE("command output: machine output (a format, or a file) puts the verdict on stderr") {
  std::ostringstream out, err;
  SUBCASE("json on stdout") {
    CHECK(plans::EmitOutcome("drift", EmittedReport(0), {"-", "json"}, out, err) == 0);
    CHECK(out.str() == "the report\n");
  }
  SUBCASE("text to a file, written whole, nothing on stdout") {
    const std::string path = OutputTempPath();
    CHECK(plans::EmitOutcome("drift", EmittedReport(0), {path, "text"}, out, err) == 0);
    CHECK(out.str().empty());
    CHECK(ReadBackFile(path) == "the report\n");
    unlink(path.c_str());
    rmdir(path.substr(0, path.rfind('/')).c_str());
  }
  CHECK(err.str() == "plumb drift: drift: 1 of 2 node(s) drifted\n");
}

TEST_CASE("command output: a text report to stdout, or to a file written whole") {
  std::ostringstream out;
  CHECK(plans::WriteTextTo("", out, "one\ntwo\n").ok());
  CHECK(out.str() == "one\ntwo\n");
  const std::string path = OutputTempPath();
  std::ostringstream untouched;
  CHECK(plans::WriteTextTo(path, untouched, "in the file\n").ok());
  CHECK(untouched.str().empty());
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  CHECK(ss.str() == "in the file\n");
  unlink(path.c_str());
  rmdir(path.substr(0, path.rfind('/')).c_str());
}

TEST_CASE("command output: a report that does not get out is the verb's error, not its outcome") {
  std::ostringstream err;
  SUBCASE("stdout closed") {
    std::ostringstream out;
    out.setstate(std::ios::badbit);
    CHECK(plans::EmitOutcome("drift", EmittedReport(0), {"", "text"}, out, err) ==
          ExitCodeFor("drift", Outcome::kError));
    CHECK(err.str().find("cannot write the output to stdout") != std::string::npos);
  }
  SUBCASE("a file in a directory that does not exist") {
    std::ostringstream out;
    CHECK(plans::EmitOutcome("health", EmittedReport(0), {"/nonexistent-dir/x/report.txt", "json"}, out,
                             err) == ExitCodeFor("health", Outcome::kError));
    CHECK(err.str().find("/nonexistent-dir/x/report.txt") != std::string::npos);
    CHECK(err.str().find("1 of 2") == std::string::npos);   // no verdict for a report not written
  }
}

TEST_CASE("command output: JSON text never throws on bytes that are not UTF-8") {
  nlohmann::json j = {{"out", std::string("ok \xff")}};
  CHECK(plans::JsonText(j) == "{\n  \"out\": \"ok \xef\xbf\xbd\"\n}\n");
}
