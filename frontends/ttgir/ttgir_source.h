// `workload.ttgir`: Triton kernels from their TTGIR (docs/ttgir.md). Two routes:
//  - static (`file=K.ttgir`): the TTGIR is lowered for every CTA of `grid` from the launch
//    arguments alone, no GPU run;
//  - trace (`trace=T.chrome_trace,ttgir=K.ttgir`): the paper's section V, a Proton trace of the
//    instrumented kernel translated per CTA, operands rebuilt from the TTGIR.
// Both build each CTA's program when the dispatcher asks for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cta_lowering.h"
#include "proton_trace.h"
#include "simfa/component.h"
#include "simfa/program.h"
#include "trace_translation.h"
#include "ttgir_kernel.h"

namespace simfa::ttgir {

class TtgirSource final : public ProgramSource {
 public:
  explicit TtgirSource(const BuildContext& context);
  static void describe(Schema& schema);

  const std::vector<TensorMap>& tensor_maps() const override { return maps_; }
  std::uint64_t cta_count() const override { return lowering_->cta_count(); }
  void build(std::uint64_t index, CtaProgram& out) override;
  std::vector<std::pair<std::string, std::string>> parameters() const override {
    return parameters_;
  }

 private:
  std::unique_ptr<MlirDocument> doc_;
  std::unique_ptr<KernelProgram> kernel_;
  std::unique_ptr<ProtonTrace> trace_;
  std::unique_ptr<CtaLowering> lowering_;
  std::unique_ptr<TraceTranslation> translation_;
  std::vector<TensorMap> maps_;
  std::vector<std::vector<SiteRecord>> records_;
  std::vector<std::pair<std::string, std::string>> parameters_;
  std::uint64_t first_wave_ = 0;  ///< CTAs of the launch's first wave (static route)
};

}  // namespace simfa::ttgir
