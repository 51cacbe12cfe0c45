// fuzz_ttgir: TTGIR text (frontends/ttgir: mlir_text, ttgir_syntax, ttgir_kernel, cta_lowering,
// launch_args; docs/ttgir.md) through workload.ttgir's static route, as `simfa run` lowers it, and
// through the instrumentation pass of `simfa ttgir instrument`, whose output must parse again.
// A first line `// grid=G args=A` (an MLIR comment, so the file stays TTGIR) gives the launch;
// without it the grid is 1 and there are no arguments.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "ttgir_instrument.h"

namespace {

struct Launch {
  std::string grid = "1";
  std::string args;
};

Launch launch_line(std::string_view text) {
  Launch l;
  constexpr std::string_view kHead = "// grid=";
  if (!text.starts_with(kHead)) return l;
  std::string_view line = text.substr(kHead.size(), text.find('\n') - kHead.size());
  const auto space = line.find(" args=");
  l.grid = std::string(line.substr(0, space));
  if (space != std::string_view::npos) l.args = std::string(line.substr(space + 6));
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = write_input("input.ttgir", text);
  const Launch launch = launch_line(text);
  const std::string workload = write_workload_file(
      "ttgir_workload.toml", "ttgir",
      "file = " + toml_string(path) + "\ngrid = " + toml_string(launch.grid) +
          "\nargs = " + toml_string(launch.args) + "\nmax_instructions_per_cta = 20000\n");
  accept_input_errors([&] { build_workload(workload); });

  accept_input_errors([&] {
    simfa::ttgir::MlirDocument doc;
    simfa::ttgir::read_mlir_file(path, doc, simfa::SourceLocation{path}, "TTGIR file");
    const std::string instrumented = simfa::ttgir::instrument_ttgir(doc);
    simfa::ttgir::MlirDocument again;
    again.file = path + " (instrumented)";
    again.text = instrumented;
    try {
      simfa::ttgir::parse_mlir(again);
    } catch (const simfa::InputError& e) {
      unexpected("the instrumented TTGIR does not parse", e.what());
    }
  });
  return 0;
}
