// Lowers one CTA of a compiled TTGIR kernel to simfa instructions by running its scalar code:
// program ids, loop trip counts, pipeline stage indices, mbarrier phases, predicates and TMA
// coordinates are evaluated for that CTA, and each op becomes instructions by the fixed table
// of docs/ttgir.md. Both routes use it: the static route as is, the trace route to give each
// recorded scope its operands (Proton records no values), via the per-site records.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "simfa/program.h"
#include "simfa/program_builder.h"
#include "ttgir_kernel.h"

namespace simfa::ttgir {

struct LaunchConfig {
  std::array<std::uint64_t, 3> grid{1, 1, 1};
  /// Values of kernel arguments, by slot (KernelProgram::scalar_args).
  std::vector<std::pair<std::uint32_t, std::int64_t>> scalars;
};

struct LoweringOptions {
  std::uint32_t prologue_bubble = 0;       ///< cycles at the start of every WarpGroup
  std::uint32_t per_iteration_bubble = 0;  ///< cycles per iteration of a loop holding a dot
  /// cycles at the start of every WarpGroup of a CTA of the launch's first wave (CtaLowering::
  /// set_first_wave), after prologue_bubble
  std::uint32_t first_wave_bubble = 0;
  std::uint32_t registers_per_thread = 0;  ///< 0: the TTGIR's or the estimate (docs/ttgir.md)
  /// cycles every WarpGroup of the partition waits at each ttng.init_barrier: the mbarrier's
  /// init (SYNCS.EXCH.64) and the CTA barrier Triton puts after it (0: free)
  std::uint32_t mbarrier_init_cycles = 0;
  /// bytes a cycle at which the issuing WarpGroup's ttng.async_tma_store_wait drains the TMA
  /// stores issued since the last such wait (0: the wait is free)
  double tma_store_wait_bytes_per_cycle = 0;
  CostRules costs;
  /// auto: ptxas's rule (simfa/wgmma_codegen.h); true, false: every dot's WGMMAs or none
  /// serialized, each waiting for the one before it.
  std::string wgmma_serialization = "auto";
  std::uint64_t max_instructions = std::uint64_t{1} << 24;  ///< per CTA: stops runaway loops
};

/// The instructions one execution of a site contributed to a WarpGroup: [begin, end) of its
/// code, including whatever the WarpGroup emitted since the previous site (bubbles).
struct SiteRecord {
  std::uint32_t site = kNone;  ///< kNone: the tail after the last site (with EXIT)
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

class CtaLowering {
 public:
  /// `maps`, the launch's TensorMaps, must outlive the lowering.
  CtaLowering(const KernelProgram& kernel, LaunchConfig launch, const std::vector<TensorMap>& maps,
              const LoweringOptions& options);

  std::uint64_t cta_count() const { return launch_.grid[0] * launch_.grid[1] * launch_.grid[2]; }

  /// CTAs 0 to `ctas` - 1 are the launch's first wave and pay options.first_wave_bubble.
  void set_first_wave(std::uint64_t ctas) { first_wave_ctas_ = ctas; }

  /// Fills `out` with CTA `cta`'s program; when `records` is given, also what each site
  /// contributed to each WarpGroup, in execution order. Throws InputError at the TTGIR op whose
  /// operands cannot be evaluated or lowered.
  void lower(std::uint64_t cta, CtaProgram& out,
             std::vector<std::vector<SiteRecord>>* records = nullptr);

 private:
  struct Value {
    std::int64_t v = 0;
    std::uint32_t alloc = kNone;  ///< memdesc values: their allocation; v is the element offset
    bool known = false;
    std::uint32_t origin = kNone;  ///< unknown values: the slot whose value simfa lacks
  };
  struct WarpGroupState {
    std::uint64_t pending_bubble = 0;
    /// The open compute phase: consecutive register-tensor ops, whose pipe work overlaps.
    struct Phase {
      bool open = false;
      double fp32 = 0, alu = 0, sfu = 0;
      std::uint32_t latency = 0;
    } phase;
    std::uint32_t phase_serial = 0;  ///< compute phases closed so far
    std::uint32_t record_end = 0;
    std::vector<std::uint32_t> waited;    ///< per stage: phases this WarpGroup waited for
    std::vector<std::uint32_t> acquired;  ///< per stage: ACQUIRE_STAGEs issued
  };

  void run(std::uint32_t begin, std::uint32_t end);
  void run_for(const Node& n);
  void execute(const Node& n);
  void after(const Node& n);
  std::int64_t integer(const Node& n, std::uint32_t k, const char* what);
  bool predicate(const Node& n, std::uint32_t k);
  std::uint8_t stage_of(const Node& n, std::uint32_t k);
  /// WarpGroup `wg`'s code, once what it was charged is issued (the calibration BUBBLE, then the
  /// open compute phase).
  WarpGroupCode code(std::uint32_t wg);
  /// Counts instructions issued against options.max_instructions.
  void add_instructions(std::uint64_t instructions);
  void emit(std::uint32_t wg, const Instruction& instruction);
  void charge(std::uint32_t wg, std::uint64_t cycles);
  void add_work(std::uint32_t wg, const OpCost& cost, double elements);
  /// Emits the held-back calibration BUBBLE, then the open compute phase.
  void flush_bubble(std::uint32_t wg);
  void close_phase(std::uint32_t wg);
  std::uint32_t operand(const Node& n, std::uint32_t k) const {
    return kernel_.operands[n.operands + k];
  }
  [[noreturn]] void fail(const Node& n, const std::string& message) const;

  const KernelProgram& kernel_;
  LaunchConfig launch_;
  const std::vector<TensorMap>& maps_;
  LoweringOptions options_;
  std::uint64_t first_wave_ctas_ = 0;
  std::vector<std::uint32_t> registers_;
  std::vector<bool> argument_slot_;

  // Per lowered CTA.
  std::uint64_t cta_ = 0;
  std::uint64_t store_bytes_ = 0;  ///< TMA store bytes issued since the last store wait
  std::array<std::int64_t, 3> pid_{};
  std::optional<CtaProgramBuilder> program_;  ///< the lowered CTA's, during lower()
  std::vector<std::vector<SiteRecord>>* records_ = nullptr;
  std::vector<Value> slots_;
  std::vector<Value> scratch_;
  /// Per slot: the phase_serial of the first WarpGroup when an element-wise compute op produced
  /// it (its phase open then), else kNone.
  std::vector<std::uint32_t> produced_in_;
  std::vector<WarpGroupState> wgs_;
  std::vector<std::uint32_t> acquirer_;  ///< per stage: the WarpGroup that ACQUIREs it
  std::uint32_t partition_ = 0;
  std::uint64_t instructions_ = 0;
};

}  // namespace simfa::ttgir
