// fuzz_workload: workload TOML files (kernel/workload_spec.cpp, docs/workloads.md): the
// [workload] table, its frontend, the frontend's schema, then the frontend itself built as
// `simfa run --workload FILE.toml` builds it. The input is written beside a copy of configs/ and
// examples/traces/ seeds' names resolve there; a file it names that does not exist is an error.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string path = write_input("configs/workload.toml", data, size);
  accept_input_errors([&] { build_workload(path); });
  return 0;
}
