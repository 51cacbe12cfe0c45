// `workload.gemm`: the TMA + WGMMA GEMM (gemm_kernel.h) as a workload, its parameters checked
// against the limits of TMA and WGMMA with errors that name the offending key.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gemm_kernel.h"
#include "simfa/component.h"
#include "simfa/program.h"

namespace simfa::gemm {

class GemmSource final : public ProgramSource {
 public:
  explicit GemmSource(const BuildContext& context);
  static void describe(Schema& schema);

  const std::vector<TensorMap>& tensor_maps() const override { return kernel_.maps(); }
  std::uint64_t cta_count() const override { return kernel_.cta_count(); }
  void build(std::uint64_t index, CtaProgram& out) override;
  std::vector<std::pair<std::string, std::string>> parameters() const override;

 private:
  GemmKernel kernel_;
};

}  // namespace simfa::gemm
