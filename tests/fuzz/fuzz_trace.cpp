// fuzz_trace: the native trace format (frontends/trace, docs/trace-format.md). The input is a
// trace file; it runs through the workload.trace frontend as `simfa run --workload w.toml` builds
// it (lexer, parser, the first and last CTA expanded). The workload file lowers
// max_instructions_per_cta so that a legal but huge `repeat` is an error, not a slow input (fuzz_support.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string trace = write_input("input.trace", data, size);
  static const std::string workload = write_workload_file(
      "trace_workload.toml", "trace",
      "path = " + toml_string(trace) + "\nmax_instructions_per_cta = 20000\n");
  accept_input_errors([&] { build_workload(workload); });
  return 0;
}
