// Well-formedness of CTA programs and instruction text for reports.
#include "program_text.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace simfa::sm_warpgroup {

namespace {

// The engines sm.warpgroup has: itself, its TMA engine and its tensor core, and the plugin
// engines its manifest wires into it ([sm.<kind>]).
bool runs(const InstructionSpec& spec, std::span<const std::string> engines) {
  const std::string_view engine = spec.engine;
  return engine == "sm" || engine == "tma" || engine == "wgmma" ||
         std::find(engines.begin(), engines.end(), engine) != engines.end();
}

}  // namespace

std::string check_program(const CtaProgram& program, const InstructionSet& instructions,
                          const std::vector<TensorMap>* maps,
                          std::span<const std::string> engines) {
  // Every CTA is checked when it is dispatched: the report's words are built only for a problem,
  // and whether an opcode's engine is here is asked once an opcode.
  auto cta = [&] { return "CTA " + std::to_string(program.cta_id); };
  if (program.warpgroups.empty()) return cta() + ": no WarpGroups";
  if (program.consumers_per_stage == 0) return cta() + ": consumers_per_stage is 0";
  enum : std::uint8_t { kUnasked, kRuns, kMissing };
  std::array<std::uint8_t, 256> engine_here{};
  for (std::size_t w = 0; w < program.warpgroups.size(); ++w) {
    const std::vector<Instruction>& code = program.warpgroups[w].code;
    auto where = [&] { return cta() + " WarpGroup " + std::to_string(w); };
    // Every path through a program ends in EXIT: running past the end has no meaning.
    if (code.empty() || code.back().op != Opcode::kExit)
      return where() + ": the program does not end with EXIT";
    for (std::size_t pc = 0; pc < code.size(); ++pc) {
      const InstructionSpec* spec = instructions.find(code[pc].op);
      std::uint8_t& here = engine_here[static_cast<std::uint8_t>(code[pc].op)];
      if (spec && here == kUnasked) here = runs(*spec, engines) ? kRuns : kMissing;
      std::string problem =
          !spec ? "unknown opcode"
          : here == kMissing
              ? std::string(spec->name) + " runs on an engine of kind '" + spec->engine +
                    "', which sm.warpgroup does not have (the manifest names none "
                    "in [sm." +
                    spec->engine + "])"
              : instruction_problem(*spec, code[pc], program, maps);
      if (!problem.empty())
        return where() + " instruction " + std::to_string(pc) + " (" +
               instruction_text(code[pc], program, instructions, maps) + "): " + problem;
    }
  }
  return "";
}

std::string instruction_text(const Instruction& in, const CtaProgram& program,
                             const InstructionSet& instructions,
                             const std::vector<TensorMap>* maps) {
  const InstructionSpec* spec = instructions.find(in.op);
  return spec ? simfa::instruction_text(*spec, in, program, maps) : "?";
}

}  // namespace simfa::sm_warpgroup
