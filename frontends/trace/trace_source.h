// `workload.trace`: a workload written in the native trace format (docs/trace-format.md). The
// file is parsed once; each CTA's program is expanded from the body template when the
// dispatcher asks for it, so memory is bounded by one CTA whatever the grid.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/program.h"
#include "trace_program.h"

namespace simfa::trace {

class TraceSource final : public ProgramSource {
 public:
  explicit TraceSource(const BuildContext& context);
  TraceSource(const TraceSource&) = delete;  // the expander refers to program_
  TraceSource& operator=(const TraceSource&) = delete;
  static void describe(Schema& schema);

  const std::vector<TensorMap>& tensor_maps() const override { return program_.maps; }
  std::uint64_t cta_count() const override { return program_.cta_count(); }
  void build(std::uint64_t index, CtaProgram& out) override;
  std::vector<std::pair<std::string, std::string>> parameters() const override {
    return parameters_;
  }

 private:
  TraceProgram program_;
  CtaExpander expander_;
  std::vector<std::pair<std::string, std::string>> parameters_;
};

}  // namespace simfa::trace
