// CTA programs as the SM sees them before running them: the well-formedness check that turns a
// broken workload into a message instead of undefined behaviour, and the text of an instruction
// for deadlock reports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/isa.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa::sm_warpgroup {

/// Participants of named barrier `id` (the program's list; 2 for ids it does not list).
std::uint32_t barrier_participants(const CtaProgram& program, std::uint32_t id);

/// An empty string when `program` can run, else what is wrong, naming the CTA, the WarpGroup and
/// the instruction. `maps` (the workload's TensorMaps) may be null: TensorMap references are then
/// not checked.
std::string check_program(const CtaProgram& program, const std::vector<TensorMap>* maps);

/// The instruction in trace spelling, e.g. "WGMMA 64 176 16 gid 3" or
/// "TMA_LOAD map 1 coords 0 64 sid 0". `maps` as for check_program.
std::string instruction_text(const Instruction& in, const CtaProgram& program,
                             const std::vector<TensorMap>* maps);

}  // namespace simfa::sm_warpgroup
