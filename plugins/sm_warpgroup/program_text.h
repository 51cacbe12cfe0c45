// CTA programs as the SM sees them before running them: the well-formedness check that turns a
// broken workload into a message instead of undefined behaviour. Each instruction is checked as
// the instruction table declares it (simfa/instruction_set.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "simfa/instruction_set.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa::sm_warpgroup {

/// An empty string when `program` can run, else what is wrong, naming the CTA, the WarpGroup and
/// the instruction. `maps` (the workload's TensorMaps) may be null: TensorMap references are then
/// not checked. `engines` are the kinds of plugin engines wired into the SM ([sm.<kind>]): their
/// instructions run; those of any other kind but the SM's own are refused.
std::string check_program(const CtaProgram& program, const InstructionSet& instructions,
                          const std::vector<TensorMap>* maps,
                          std::span<const std::string> engines = {});

/// The instruction in trace spelling, e.g. "WGMMA 64 176 16 gid 3" or
/// "TMA_LOAD map 1 coords 0 64 sid 0"; "?" for an opcode `instructions` does not know.
std::string instruction_text(const Instruction& in, const CtaProgram& program,
                             const InstructionSet& instructions,
                             const std::vector<TensorMap>* maps);

}  // namespace simfa::sm_warpgroup
