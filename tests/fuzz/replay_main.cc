// A libFuzzer-compatible driver for compilers without -fsanitize=fuzzer: feeds the target every
// file under the given directories, every prefix of each (cut-short output), and deterministic
// mutations (byte flips, inserted separators and markers, deletions, splices of two files).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Run(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

uint64_t Next(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream s;
      s << in.rdbuf();
      corpus.push_back(s.str());
    }
  }
  const char* tokens[] = {"\n", "\t", ":", "=", ", ", " = ", "'", "\"", "{", "}", "\xff", "\x00",
                          "@plumb:", "%part x 0 3\n", "CA '", "\tPort 1:\n", "\t\t", "plumb-absent: ",
                          "NVRM version: ", "Kernel Module  ", "/sys/module/", "-", "(none)", "99999999999999999999",
                          "NVRM: Xid (PCI:0000:5d:00): ", "# Port counters: Lid 1 port 1", ":......", "[N/A]",
                          " GPUs found.", "| 0      | Name: ", "\"status\" : ", "# Avg bus bandwidth : "};
  size_t runs = 0;
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  Run("");
  for (const auto& input : corpus) {
    Run(input);
    size_t step = input.size() > 4096 ? input.size() / 512 : 1;
    for (size_t n = 0; n < input.size(); n += step, ++runs) Run(input.substr(0, n));
    for (int m = 0; m < 200; ++m, ++runs) {
      std::string s = input;
      int edits = 1 + static_cast<int>(Next(seed) % 4);
      for (int e = 0; e < edits; ++e) {
        size_t pos = s.empty() ? 0 : Next(seed) % (s.size() + 1);
        switch (Next(seed) % 4) {
          case 0:
            if (!s.empty() && pos < s.size()) s[pos] = static_cast<char>(Next(seed));
            break;
          case 1: {
            const char* t = tokens[Next(seed) % (sizeof tokens / sizeof *tokens)];
            s.insert(pos, t[0] ? std::string(t) : std::string(1, '\0'));
            break;
          }
          case 2:
            if (pos < s.size()) s.erase(pos, 1 + Next(seed) % 16);
            break;
          case 3: {
            const std::string& other = corpus[Next(seed) % corpus.size()];
            size_t from = other.empty() ? 0 : Next(seed) % other.size();
            s.insert(pos, other.substr(from, 1 + Next(seed) % 200));
            break;
          }
        }
      }
      Run(s);
    }
  }
  std::printf("%s: %zu inputs from %zu files, no crash\n", argv[0], runs, corpus.size());
  return 0;
}
