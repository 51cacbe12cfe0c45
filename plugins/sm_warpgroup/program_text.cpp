// Well-formedness of CTA programs and instruction text for reports.
#include "program_text.h"

#include <limits>

namespace simfa::sm_warpgroup {

namespace {

bool uses_stage(Opcode op) {
  return op == Opcode::kTmaLoad || op == Opcode::kTmaBulk || op == Opcode::kAcquireStage ||
         op == Opcode::kReleaseStage || op == Opcode::kMbWait;
}

// The first problem of one instruction, or "".
std::string instruction_problem(const Instruction& in, const CtaProgram& program,
                                const std::vector<TensorMap>* maps) {
  if (static_cast<int>(in.op) >= kOpcodeCount) return "unknown opcode";
  if (uses_stage(in.op) && in.stage >= program.stage_count)
    return "stage " + std::to_string(in.stage) + " is out of range (the CTA has " +
           std::to_string(program.stage_count) + " stages)";
  switch (in.op) {
    case Opcode::kTmaLoad:
    case Opcode::kTmaStore: {
      if (!maps) return "";
      if (in.map >= maps->size())
        return "TensorMap " + std::to_string(in.map) + " is not declared (the workload has " +
               std::to_string(maps->size()) + ")";
      const TensorMap& map = (*maps)[in.map];
      if (map.rank < 1 || map.rank > kMaxTensorRank)
        return "TensorMap '" + map.name + "' has rank " + std::to_string(map.rank) + " (1 to " +
               std::to_string(kMaxTensorRank) + ")";
      if (std::uint64_t{in.x} + map.rank > program.coords.size())
        return "coordinates " + std::to_string(in.x) + ".." + std::to_string(in.x + map.rank - 1) +
               " lie outside the CTA's coordinate pool (" + std::to_string(program.coords.size()) +
               " entries)";
      const std::uint64_t bytes = map.box_bytes();
      if (bytes == 0 || bytes > std::numeric_limits<std::uint32_t>::max())
        return "TensorMap '" + map.name + "' has a box of " + std::to_string(bytes) +
               " bytes (must be 1 byte to 4 GiB)";
      return "";
    }
    case Opcode::kTmaBulk:
      if (in.x >= program.addresses.size())
        return "address " + std::to_string(in.x) + " lies outside the CTA's address pool (" +
               std::to_string(program.addresses.size()) + " entries)";
      if (in.y == 0) return "a bulk copy of 0 bytes";
      return "";
    case Opcode::kWgmma:
      if (in.wgmma_m() == 0 || in.wgmma_n() == 0 || in.wgmma_k() == 0)
        return "a WGMMA shape with a zero dimension";
      return "";
    case Opcode::kBubble:
      if (in.is_compute() && in.y >= program.work.size())
        return "compute work " + std::to_string(in.y) + " lies outside the CTA's work pool (" +
               std::to_string(program.work.size()) + " entries)";
      return "";
    case Opcode::kBarArrive:
    case Opcode::kBarWait:
      if (in.x >= kNamedBarriers)
        return "barrier " + std::to_string(in.x) + " is out of range (ids 0.." +
               std::to_string(kNamedBarriers - 1) + ")";
      if (barrier_participants(program, in.x) == 0)
        return "barrier " + std::to_string(in.x) + " has 0 participants";
      return "";
    default:
      return "";
  }
}

}  // namespace

std::uint32_t barrier_participants(const CtaProgram& program, std::uint32_t id) {
  return id < program.barrier_participants.size() ? program.barrier_participants[id] : 2;
}

std::string check_program(const CtaProgram& program, const std::vector<TensorMap>* maps) {
  const std::string cta = "CTA " + std::to_string(program.cta_id);
  if (program.warpgroups.empty()) return cta + ": no WarpGroups";
  if (program.consumers_per_stage == 0) return cta + ": consumers_per_stage is 0";
  for (std::size_t w = 0; w < program.warpgroups.size(); ++w) {
    const std::vector<Instruction>& code = program.warpgroups[w].code;
    const std::string where = cta + " WarpGroup " + std::to_string(w);
    // Every path through a program ends in EXIT: running past the end has no meaning.
    if (code.empty() || code.back().op != Opcode::kExit)
      return where + ": the program does not end with EXIT";
    for (std::size_t pc = 0; pc < code.size(); ++pc) {
      std::string problem = instruction_problem(code[pc], program, maps);
      if (!problem.empty())
        return where + " instruction " + std::to_string(pc) + " (" +
               instruction_text(code[pc], program, maps) + "): " + problem;
    }
  }
  return "";
}

std::string instruction_text(const Instruction& in, const CtaProgram& program,
                             const std::vector<TensorMap>* maps) {
  const std::string name = opcode_name(in.op);
  auto coords = [&] {
    std::string s = "map " + std::to_string(in.map) + " coords";
    const std::uint32_t rank = maps && in.map < maps->size() ? (*maps)[in.map].rank : 0;
    for (std::uint32_t d = 0; d < rank && in.x + d < program.coords.size(); ++d)
      s += " " + std::to_string(program.coords[in.x + d]);
    return s;
  };
  switch (in.op) {
    case Opcode::kTmaLoad:
      return name + " " + coords() + " sid " + std::to_string(in.stage);
    case Opcode::kTmaBulk: {
      const std::string addr =
          in.x < program.addresses.size() ? std::to_string(program.addresses[in.x]) : "?";
      return name + " " + addr + " " + std::to_string(in.y) + " sid " + std::to_string(in.stage);
    }
    case Opcode::kTmaStore:
      return name + " " + coords();
    case Opcode::kAcquireStage:
    case Opcode::kReleaseStage:
    case Opcode::kMbWait:
      return name + " " + std::to_string(in.stage);
    case Opcode::kWgmma:
      return name + " " + std::to_string(in.wgmma_m()) + " " + std::to_string(in.wgmma_n()) + " " +
             std::to_string(in.wgmma_k()) + " gid " + std::to_string(in.gid());
    case Opcode::kWgmmaCommit:
      return name + " gid " + std::to_string(in.gid());
    case Opcode::kBubble:
      if (in.is_compute() && in.y < program.work.size()) {
        const ComputeWork& w = program.work[in.y];
        return name + " " + std::to_string(in.x) + " fp32 " + std::to_string(w.fp32) + " alu " +
               std::to_string(w.alu) + " sfu " + std::to_string(w.sfu);
      }
      return name + " " + std::to_string(in.x);
    case Opcode::kWgmmaWait:
    case Opcode::kBarArrive:
    case Opcode::kBarWait:
      return name + " " + std::to_string(in.x);
    case Opcode::kExit:
      return name;
  }
  return name;
}

}  // namespace simfa::sm_warpgroup
