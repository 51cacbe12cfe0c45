// The corpus replay (docs/reliability.md): a main() for a fuzz target built without libFuzzer.
// `fuzz_X_replay [--max-seconds S] DIR|FILE...` runs every file of each DIR (sorted) and each
// FILE through LLVMFuzzerTestOneInput once. The target aborts on anything but a located input
// error; here an input that takes longer than S seconds (default 1) fails the replay too.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  double max_seconds = 1.0;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--max-seconds" && i + 1 < argc) {
      max_seconds = std::atof(argv[++i]);
      continue;
    }
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::directory_iterator(arg))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (fs::is_regular_file(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", arg.c_str());
      return 1;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs\n");
    return 1;
  }
  int slow = 0;
  double slowest = 0;
  fs::path slowest_input;
  for (const fs::path& input : inputs) {
    std::ifstream in(input, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::fprintf(stderr, "%s\n", input.c_str());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > slowest) {
      slowest = seconds;
      slowest_input = input;
    }
    if (seconds > max_seconds) {
      std::fprintf(stderr, "  too slow: %.3f s (limit %.3f s)\n", seconds, max_seconds);
      ++slow;
    }
  }
  std::printf("%zu inputs replayed, slowest %.3f s (%s), %d over %.3f s\n", inputs.size(), slowest,
              slowest_input.filename().c_str(), slow, max_seconds);
  return slow == 0 ? 0 : 1;
}
