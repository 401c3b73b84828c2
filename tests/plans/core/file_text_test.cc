#include <doctest/doctest.h>

#include <unistd.h>

#include <fstream>
#include <string>

#include "plans/core/file_text.h"

TEST_CASE("ReadFileText: every byte of a file, nothing for one that cannot be opened") {
  char dir[] = "/tmp/plumb-file-text-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/f";
  const std::string bytes("line 1\n\0two\r\n", 13);
  { std::ofstream(path, std::ios::binary) << bytes; }
  CHECK(plumb::plans::ReadFileText(path) == bytes);
  CHECK_FALSE(plumb::plans::ReadFileText(std::string(dir) + "/absent").has_value());
  unlink(path.c_str());
  rmdir(dir);
}
