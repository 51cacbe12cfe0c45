// fuzz_proton_trace: Proton chrome traces of instrumented TTGIR (frontends/ttgir/proton_trace.cpp,
// trace_translation.cpp; docs/ttgir.md), plain or gzip-compressed, through workload.ttgir's trace
// route against the committed GEMM (tests/data/ttgir/gemm_tma.ttgir, M = N = 128, K = 512): the
// grid is the trace's, and every CTA is translated, as `simfa run` does.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string trace = write_input("input.chrome_trace", data, size);
  static const std::string workload = write_workload_file(
      "proton_workload.toml", "ttgir",
      "trace = " + toml_string(trace) + "\nttgir = " +
          toml_string(std::string(SIMFA_SOURCE_DIR) + "/tests/data/ttgir/gemm_tma.ttgir") +
          "\nargs = \"M=128;N=128;K=512;a_desc.shape=128x512;b_desc.shape=128x512;"
          "c_desc.shape=128x128\"\nmax_instructions_per_cta = 20000\n");
  accept_input_errors([&] { build_workload(workload); });
  return 0;
}
