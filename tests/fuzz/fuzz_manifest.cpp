// fuzz_manifest: the manifest loader (kernel/manifest.cpp): TOML, `extends`, and validation of
// every table against the real plugins' schemas, as `simfa validate` runs it. The input is written
// beside a copy of configs/, so it may extend h800.toml, h200.toml or an ablation.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simfa::fuzz;
  const std::string path = write_input("configs/input.toml", data, size);
  accept_input_errors([&] {
    const simfa::kernel::ManifestDocument doc = simfa::kernel::read_manifest(path, {});
    (void)simfa::kernel::resolve_manifest(doc, plugins());
  });
  return 0;
}
