// `plumb schemas` (cli/schema_files.h): the embedded files listed by name, and written under a
// directory with their folders, stopping at the first that cannot be written.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/schema_files.h"

using namespace plumb;

namespace {

const std::vector<schemas::EmbeddedFile> kSchemaFiles = {
    {"stack.schema.json", "{\"type\": \"object\"}\n"}, {"rules/compat.yaml", "cuda: {}\n"}};

std::string SchemaFileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

cli::WriteFile SchemaPlainWrite() {
  return [](const std::string& path, const std::string& text) -> Status {
    std::ofstream out(path);
    out << text;
    if (!out) return Diagnostic::Error("output.write", "cannot write " + path);
    return OkStatus();
  };
}

}  // namespace

TEST_CASE("schema_files: the list, a name a line") {
  CHECK(cli::EmbeddedFileList(kSchemaFiles) == "stack.schema.json\nrules/compat.yaml\n");
  CHECK(cli::EmbeddedFileList(schemas::EmbeddedFiles()).find("stack.schema.json\n") != std::string::npos);
}

TEST_CASE("schema_files: each file under the directory, folders made, each said as written") {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("plumb-schemas-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  std::vector<std::string> wrote;
  Status st = cli::WriteEmbeddedFiles(kSchemaFiles, dir, SchemaPlainWrite(),
                                      [&](const std::string& p) { wrote.push_back(p); });
  REQUIRE(st.ok());
  CHECK(wrote == std::vector<std::string>{dir + "/stack.schema.json", dir + "/rules/compat.yaml"});
  CHECK(SchemaFileText(dir + "/rules/compat.yaml") == "cuda: {}\n");
  CHECK(SchemaFileText(dir + "/stack.schema.json") == "{\"type\": \"object\"}\n");

  // A file where a folder must go: the first that cannot be written ends it.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/rules") << "a file";
  wrote.clear();
  Status blocked = cli::WriteEmbeddedFiles(kSchemaFiles, dir, SchemaPlainWrite(),
                                           [&](const std::string& p) { wrote.push_back(p); });
  REQUIRE_FALSE(blocked.ok());
  CHECK(blocked.error().message == "cannot create " + dir + "/rules");
  CHECK(wrote == std::vector<std::string>{dir + "/stack.schema.json"});
  std::filesystem::remove_all(dir);
}
