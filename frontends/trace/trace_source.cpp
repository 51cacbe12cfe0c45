#include "trace_source.h"

#include <sstream>

#include "simfa/error.h"
#include "simfa/input_file.h"
#include "simfa/spelling.h"
#include "trace_parser.h"

namespace simfa::trace {

namespace {

/// `defines = "SEQ=4096, HEADS=32"`: NAME=INTEGER items separated by ',' or spaces.
std::vector<Define> read_defines(const Params& params) {
  std::vector<Define> out;
  std::string text = params.string("defines");
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream items(text);
  std::string item;
  while (items >> item) {
    const auto eq = item.find('=');
    Define d;
    d.name = item.substr(0, eq);
    std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    const bool negative = !value.empty() && value.front() == '-';
    if (negative) value.erase(0, 1);
    std::string why = "expected NAME=INTEGER";
    if (d.name.empty() || value.empty() || !parse_number(value, d.value, &why))
      params.fail("defines", "bad define '" + item + "': " + why);
    if (negative) d.value = -d.value;
    for (const auto& other : out)
      if (other.name == d.name) params.fail("defines", "'" + d.name + "' is defined twice");
    out.push_back(std::move(d));
  }
  return out;
}

TraceProgram load(const Params& params, const InstructionSet& instructions) {
  const std::string& path = params.string("path");
  std::string text;
  if (const std::string why = read_regular_file(path, text); !why.empty())
    params.fail("path", "cannot read trace '" + path + "': " + why);
  const std::vector<Define> defines = read_defines(params);
  TraceProgram program = parse_trace(text, path, defines, instructions);
  for (const auto& d : defines) {
    std::vector<std::string_view> lets;
    bool found = false;
    for (const auto& [name, value] : program.lets) {
      lets.push_back(name);
      found = found || name == d.name;
    }
    if (!found)
      params.fail("defines", "'" + d.name + "' is not a top-level let of " + path +
                                 did_you_mean(d.name, lets));
  }
  return program;
}

}  // namespace

void TraceSource::describe(Schema& schema) {
  schema.string("path").required().doc("the trace file (docs/trace-format.md)");
  schema.string("defines").def("").doc(
      "values for top-level lets, replacing the trace's: 'NAME=VALUE,...' (e.g. "
      "'SEQ=4096,HEADS=32')");
  // 2^28 keeps the operand pools' offsets within 32 bits (5 coordinates per instruction).
  schema.integer("max_instructions_per_cta")
      .def(1 << 24)
      .range(1, 1 << 28)
      .unit("instructions")
      .doc("bound on one CTA's instructions and loop iterations: stops a runaway repeat");
}

TraceSource::TraceSource(const BuildContext& context)
    : program_(load(context.params, context.instructions ? *context.instructions
                                                         : InstructionSet::hopper())),
      expander_(program_,
                static_cast<std::uint64_t>(context.params.integer("max_instructions_per_cta"))) {
  // Expanding the first and the last CTA now reports their errors before the run starts (the
  // last CTA holds the grid's edge tiles); CTA 0 also describes the workload.
  CtaProgram first;
  expander_.expand(0, first);
  if (cta_count() > 1) {
    CtaProgram last;
    expander_.expand(cta_count() - 1, last);
  }

  const auto& grid = program_.grid;
  parameters_.emplace_back("path", context.params.string("path"));
  if (!context.params.string("defines").empty())
    parameters_.emplace_back("defines", context.params.string("defines"));
  parameters_.emplace_back("grid", std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                                       std::to_string(grid[2]));
  parameters_.emplace_back("cta_count", std::to_string(cta_count()));
  std::string maps;
  for (const auto& m : program_.maps) maps += (maps.empty() ? "" : ",") + m.name;
  parameters_.emplace_back("tensor_maps", maps);
  for (const auto& [name, value] : program_.lets)
    parameters_.emplace_back("let." + name, std::to_string(value));
  summarize_cta(first, "cta0", parameters_);
}

void TraceSource::build(std::uint64_t index, CtaProgram& out) {
  if (index >= cta_count())
    throw Error("internal: CTA " + std::to_string(index) + " requested from a grid of " +
                std::to_string(cta_count()));
  expander_.expand(index, out);
}

}  // namespace simfa::trace
