// Translates one CTA's deduplicated FlashAttention-3 events into its simfa program by the rules
// of the paper's section VI-B (docs/workloads.md lists them with their sources in FA3's code):
// loads become ACQUIRE_STAGE + TMA_LOAD with addresses from the tile indices, GEMM issues become
// one WGMMA group each, WAIT_WG_n becomes WGMMA_WAIT n followed by the RELEASE_STAGEs of the
// GEMMs it retires and, after an S = Q K^T, the softmax bubble; named barriers pass the tensor
// core between the consumers. Events that break the kernel's structure are InputErrors at the
// event's line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fa3_events.h"
#include "fa3_kernel.h"
#include "simfa/program.h"

namespace simfa::fa3 {

class Fa3EventTranslator {
 public:
  /// `file` names the log in error messages (the events' lines are its lines).
  Fa3EventTranslator(const Fa3Kernel& kernel, std::string file);

  void translate(std::uint64_t cta, const CtaEvents& events, CtaProgram& out);

 private:
  void producer(const std::vector<EventRecord>& events, std::vector<Instruction>& code,
                CtaProgram& out);
  void consumer(std::uint32_t c, const std::vector<EventRecord>& events,
                std::vector<Instruction>& code, CtaProgram& out);
  std::uint32_t push_coords(CtaProgram& out, std::int64_t row, std::int64_t head) const;
  [[noreturn]] void fail(const EventRecord& at, const std::string& message) const;

  const Fa3Kernel& kernel_;
  std::string file_;
  std::uint64_t cta_ = 0;
  Fa3Kernel::Tile tile_;
  std::vector<std::uint32_t> k_tiles_;  ///< the producer's K loads, in order
  std::vector<std::uint32_t> v_tiles_;
};

}  // namespace simfa::fa3
