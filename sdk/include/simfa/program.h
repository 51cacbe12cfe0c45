// Workloads as streamed per-CTA programs. A ProgramSource builds one CTA's program when the
// dispatcher places that CTA, so memory stays bounded however large the grid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simfa/component.h"
#include "simfa/isa.h"
#include "simfa/tensor_map.h"

namespace simfa {

struct WarpGroupProgram {
  std::vector<Instruction> code;
  std::uint32_t registers = 0;  ///< registers the WarpGroup holds (all 128 threads together)
};

/// Register arithmetic of one compute BUBBLE, in elements (one thread's operation each) per
/// pipe of the SM: FP32 add/mul/FMA; the ALU's compares, selects, min/max, integer and
/// conversions; the SFU's (MUFU) transcendentals.
struct ComputeWork {
  std::uint64_t fp32 = 0;
  std::uint64_t alu = 0;
  std::uint64_t sfu = 0;

  friend bool operator==(const ComputeWork&, const ComputeWork&) = default;
};

struct CtaProgram {
  std::uint64_t cta_id = 0;
  std::int64_t smem_bytes = 0;
  std::uint32_t stage_count = 0;                    ///< ring-buffer slots (mbarrier pairs)
  std::uint32_t consumers_per_stage = 1;            ///< RELEASE_STAGEs that free one slot
  std::vector<std::uint32_t> barrier_participants;  ///< per named barrier id; missing ids: 2
  std::vector<WarpGroupProgram> warpgroups;
  std::vector<std::int32_t> coords;  ///< TMA_LOAD / TMA_STORE coordinates (Instruction::x)
  std::vector<Addr> addresses;       ///< TMA_BULK addresses (Instruction::x)
  std::vector<ComputeWork> work;     ///< compute BUBBLEs' work (Instruction::y)

  void clear() {
    cta_id = 0;
    smem_bytes = 0;
    stage_count = 0;
    consumers_per_stage = 1;
    barrier_participants.clear();
    warpgroups.clear();
    coords.clear();
    addresses.clear();
    work.clear();
  }
};

/// Participants of named barrier `id` (the program's list; 2 for ids it does not list).
inline std::uint32_t barrier_participants(const CtaProgram& program, std::uint32_t id) {
  return id < program.barrier_participants.size() ? program.barrier_participants[id] : 2;
}

/// The summary of one CTA's program a frontend reports among its parameters():
/// `<prefix>.warpgroups`, `.instructions`, `.registers`, `.smem_bytes`, `.stages`.
inline void summarize_cta(const CtaProgram& cta, const std::string& prefix,
                          std::vector<std::pair<std::string, std::string>>& out) {
  std::size_t instructions = 0;
  std::uint64_t registers = 0;
  for (const auto& wg : cta.warpgroups) {
    instructions += wg.code.size();
    registers += wg.registers;
  }
  out.emplace_back(prefix + ".warpgroups", std::to_string(cta.warpgroups.size()));
  out.emplace_back(prefix + ".instructions", std::to_string(instructions));
  out.emplace_back(prefix + ".registers", std::to_string(registers));
  out.emplace_back(prefix + ".smem_bytes", std::to_string(cta.smem_bytes));
  out.emplace_back(prefix + ".stages", std::to_string(cta.stage_count));
}

/// The registers a CTA holds: its WarpGroups' together.
inline std::int64_t registers_of(const CtaProgram& cta) {
  std::int64_t registers = 0;
  for (const auto& wg : cta.warpgroups) registers += wg.registers;
  return registers;
}

/// The CTAs of a launch's first wave when every CTA holds what `cta` holds: the SMs times the
/// CTAs one SM keeps resident (its CTA slots, WarpGroup slots, shared memory and registers, as
/// the SM accepts them), at most `grid`. CTAs start in index order, so these are CTAs 0 to
/// the result - 1.
inline std::uint64_t first_wave_ctas(const CtaProgram& cta, const GpuConfig& gpu,
                                     std::uint64_t grid) {
  std::int64_t per_sm = gpu.max_ctas_per_sm;
  if (!cta.warpgroups.empty())
    per_sm = std::min<std::int64_t>(
        per_sm, gpu.max_warpgroups_per_sm / static_cast<std::int64_t>(cta.warpgroups.size()));
  if (cta.smem_bytes > 0 && gpu.smem_per_sm_bytes > 0)
    per_sm = std::min(per_sm, gpu.smem_per_sm_bytes / cta.smem_bytes);
  const std::int64_t registers = registers_of(cta);
  if (registers > 0 && gpu.regs_per_sm > 0) per_sm = std::min(per_sm, gpu.regs_per_sm / registers);
  const auto wave = static_cast<std::uint64_t>(std::max<std::int64_t>(per_sm, 1)) *
                    static_cast<std::uint64_t>(std::max(gpu.sm_count, 1));
  return std::min(wave, grid);
}

/// A workload: implemented by frontends (kind "workload").
class SIMFA_API ProgramSource : public Component {
 public:
  virtual const std::vector<TensorMap>& tensor_maps() const = 0;
  virtual std::uint64_t cta_count() const = 0;
  /// Fill `out` with CTA `index`'s program (0 <= index < cta_count()).
  virtual void build(std::uint64_t index, CtaProgram& out) = 0;
  /// The resolved workload parameters, for the stats file.
  virtual std::vector<std::pair<std::string, std::string>> parameters() const = 0;
};

}  // namespace simfa
