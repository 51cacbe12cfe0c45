// The frontend tests' view of a WarpGroup's code: one line per instruction with its TMA operands
// resolved, so a test compares a built program with a hand-written one line by line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simfa/instruction_set.h"
#include "simfa/isa.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa::test {

/// One line per instruction, TMA operands resolved: "TMA_LOAD A 64,128 s1"; a compute BUBBLE
/// with its work: "BUBBLE 0 fp32 0 alu 24576 sfu 0".
inline std::vector<std::string> listing(const WarpGroupProgram& wg, const CtaProgram& p,
                                        const std::vector<TensorMap>& maps) {
  std::vector<std::string> out;
  for (const Instruction& i : wg.code) {
    std::string s = opcode_name(i.op);
    switch (i.op) {
      case Opcode::kTmaLoad:
      case Opcode::kTmaStore: {
        s += " " + maps[i.map].name + " ";
        for (std::uint32_t d = 0; d < maps[i.map].rank; ++d)
          s += (d ? "," : "") + std::to_string(p.coords[i.x + d]);
        if (i.op == Opcode::kTmaLoad) s += " s" + std::to_string(i.stage);
        break;
      }
      case Opcode::kAcquireStage:
      case Opcode::kReleaseStage:
      case Opcode::kMbWait:
        s += " " + std::to_string(i.stage);
        break;
      case Opcode::kWgmma:
        s += " " + std::to_string(i.wgmma_m()) + "," + std::to_string(i.wgmma_n()) + "," +
             std::to_string(i.wgmma_k()) + " gid " + std::to_string(i.gid());
        break;
      case Opcode::kWgmmaCommit:
        s += " " + std::to_string(i.gid());
        break;
      case Opcode::kExit:
        break;
      case Opcode::kBubble:
        s += " " + std::to_string(i.x);
        if (i.is_compute()) {
          const ComputeWork& w = p.work[i.y];
          s += " fp32 " + std::to_string(w.fp32) + " alu " + std::to_string(w.alu) + " sfu " +
               std::to_string(w.sfu);
        }
        break;
      default:
        s += " " + std::to_string(i.x);
    }
    out.push_back(s);
  }
  return out;
}

/// `n` copies of `line`, appended.
inline void repeat(std::vector<std::string>& v, int n, const std::string& line) {
  for (int i = 0; i < n; ++i) v.push_back(line);
}

}  // namespace simfa::test
