// The instruction table (DESIGN.md §4). Each instruction is declared once, as an
// InstructionSpec: its name, its operands (what kind each is, where the 16-byte Instruction keeps
// it, the values it accepts), its text, its timeline spans with their Gantt colours and the kind of
// engine that executes it. The trace parser, the program checker and printer, the timeline, the
// Gantt chart and the SM read the table;
// a plugin adds its own instructions to it (docs/plugin-authors.md, "Instructions").
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/error.h"
#include "simfa/isa.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa {

/// What an operand is. The kind fixes where it lives, how a trace writes it and what the checker
/// verifies before the SM reads it.
enum class OperandKind : std::uint8_t {
  /// A TensorMap and its rank's tile coordinates: `map`, the coordinates at coords[x..x+rank).
  /// A trace writes the map's name, then the coordinates; at most one, and first.
  kTile,
  /// A global address: addresses[x]. A trace writes the number.
  kAddress,
  /// A ring-buffer slot and its mbarrier pair (sid), below the CTA's stage count: `stage`.
  kStage,
  /// A named barrier id, below kNamedBarriers, with participants: `x`.
  kBarrier,
  /// A number in [min, max] obeying `rule`, kept in `field`.
  kValue,
};

/// Where a kValue operand lives in an Instruction.
enum class Field : std::uint8_t {
  kX,
  kY,
  kZ,
  kXHigh,  ///< the upper 16 bits of x
  kXLow,   ///< the lower 16 bits of x
};

struct OperandSpec {
  const char* name = "";  ///< in the signature: "stage", "N"
  OperandKind kind = OperandKind::kValue;
  Field field = Field::kX;         ///< kValue
  const char* what = "the value";  ///< kValue, kAddress, kBarrier: in messages, "WGMMA N"
  std::int64_t min = 0;            ///< kValue, kAddress: the values a trace may write
  std::int64_t max = std::numeric_limits<std::uint32_t>::max();
  /// kValue, kAddress: a rule beyond the range (null: none): the whole message when `value`
  /// breaks it ("WGMMA N is 100; it must be a multiple of 8"), else "". A value is kept as the
  /// field's unsigned bits: a range wider than the field needs a rule that narrows it.
  std::string (*rule)(std::int64_t value) = nullptr;
  const char* label = nullptr;  ///< in the text form: "gid 3" rather than "3"
};

/// A timeline span an instruction declares, and how the Gantt chart (`simfa run --gantt`,
/// docs/pictures.md) draws it. A plain name (`.span = "umma"`) is enough: the chart then gives
/// the span a colour derived from its name (one no other span of the run's table has, while its
/// palette lasts) and a legend label from the instruction ("UMMA issue", "wait: UMMA", "UMMA in
/// flight"). The chart reads its span kinds from the table alone, so a plugin's instruction gets
/// its own legend entry.
struct SpanSpec {
  constexpr SpanSpec() = default;
  // Not explicit: `.span = "umma"` names a span and leaves the rest to the chart.
  constexpr SpanSpec(const char* name_, const char* color_ = nullptr,  // NOLINT
                     const char* label_ = nullptr, bool lasts_ = false, const char* what_ = nullptr)
      : name(name_), color(color_), label(label_), lasts(lasts_), what(what_) {}

  const char* name = nullptr;   ///< as the timeline names it: "wgmma", "wait:mb"; null: none
  const char* color = nullptr;  ///< SVG colour, "#d62728"; null: derived from the name
  const char* label = nullptr;  ///< the legend's text; null: derived from the instruction
  /// InstructionSpec::span only: the span covers the instruction's work (a BUBBLE's cycles) and
  /// is drawn as such, not as the one issue cycle the chart draws over the WarpGroup's waits.
  bool lasts = false;
  /// InstructionSpec::flight only: what its row of a Gantt lane holds, in the plural, for the
  /// chart's note on the rows ("TMA loads"); null: the instruction's name and an s ("WGMMAs").
  const char* what = nullptr;
};

struct InstructionSpec {
  const char* name = "";  ///< as a trace writes it: upper case, "TMA_LOAD"
  /// The kind of component that executes it: "sm" (the SM's own protocol state: stages,
  /// barriers, groups, BUBBLEs), "tma", "wgmma", or the kind of a plugin's engine.
  const char* engine = "sm";
  /// Whether it copies data between the memory and the SM for other instructions to compute on
  /// (Hopper's TMA_LOAD, TMA_BULK and TMA_STORE): the Gantt chart calls a WarpGroup that issues
  /// copies and no other engine's instructions a producer, and one that issues another engine's
  /// instructions a consumer.
  bool copy = false;
  std::span<const OperandSpec> operands = {};
  SpanSpec span = {};       ///< the timeline span its issue draws, or none
  SpanSpec wait_span = {};  ///< the span of a WarpGroup blocked on it, or none
  /// The span of its work in flight on an engine after the issue (TMA bytes until they land,
  /// WGMMAs until they complete), drawn in a row of its own below the WarpGroup's, or none.
  SpanSpec flight = {};
  /// What the checker verifies beyond the operands (null: nothing): the problem, or "".
  std::string (*check)(const Instruction& in, const CtaProgram& program) = nullptr;
  /// Text appended to the operands' in reports (null: none), e.g. a compute BUBBLE's work.
  std::string (*text)(const Instruction& in, const CtaProgram& program) = nullptr;
};

/// The most instructions one run knows: opcodes are 8 bits.
inline constexpr std::size_t kMaxInstructions = 256;

namespace isa_detail {

inline std::string wgmma_m_rule(std::int64_t m) {
  return m == 64 ? ""
                 : "WGMMA M is " + std::to_string(m) +
                       "; Hopper's wgmma is m64 (one instruction per 64 rows)";
}
inline std::string wgmma_n_rule(std::int64_t n) {
  return n % 8 == 0 ? "" : "WGMMA N is " + std::to_string(n) + "; it must be a multiple of 8";
}
inline std::string wgmma_k_rule(std::int64_t k) {
  return k == 8 || k == 16 || k == 32
             ? ""
             : "WGMMA K is " + std::to_string(k) + "; it must be 8, 16 or 32";
}
// cp.async.bulk: 16-byte aligned address, size a multiple of 16 (PTX ISA 8.0).
inline std::string bulk_address_rule(std::int64_t addr) {
  return addr % 16 == 0
             ? ""
             : "the TMA_BULK address " + std::to_string(addr) + " is not 16-byte aligned";
}
inline std::string bulk_size_rule(std::int64_t bytes) {
  return bytes % 16 == 0 ? ""
                         : "the TMA_BULK size " + std::to_string(bytes) +
                               " is not a multiple of 16 bytes";
}

inline std::string bulk_check(const Instruction& in, const CtaProgram&) {
  return in.y == 0 ? "a bulk copy of 0 bytes" : "";
}
inline std::string wgmma_check(const Instruction& in, const CtaProgram&) {
  return in.wgmma_m() == 0 || in.wgmma_n() == 0 || in.wgmma_k() == 0
             ? "a WGMMA shape with a zero dimension"
             : "";
}
inline std::string bubble_check(const Instruction& in, const CtaProgram& program) {
  if (!in.is_compute() || in.y < program.work.size()) return "";
  return "compute work " + std::to_string(in.y) + " lies outside the CTA's work pool (" +
         std::to_string(program.work.size()) + " entries)";
}
inline std::string bubble_text(const Instruction& in, const CtaProgram& program) {
  if (!in.is_compute() || in.y >= program.work.size()) return "";
  const ComputeWork& w = program.work[in.y];
  return " fp32 " + std::to_string(w.fp32) + " alu " + std::to_string(w.alu) + " sfu " +
         std::to_string(w.sfu);
}

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kUint32Max = std::numeric_limits<std::uint32_t>::max();

constexpr OperandSpec kTile{.name = "map", .kind = OperandKind::kTile};
constexpr OperandSpec kStage{.name = "stage", .kind = OperandKind::kStage};
constexpr OperandSpec kSid{.name = "stage", .kind = OperandKind::kStage, .label = "sid"};
constexpr OperandSpec kBarrier{.name = "bid", .kind = OperandKind::kBarrier,
                               .what = "the barrier id"};

constexpr OperandSpec kTmaLoad[] = {kTile, kSid};
constexpr OperandSpec kTmaBulk[] = {
    {.name = "addr", .kind = OperandKind::kAddress, .what = "the TMA_BULK address",
     .max = kInt64Max, .rule = bulk_address_rule},
    {.name = "bytes", .field = Field::kY, .what = "the TMA_BULK size", .min = 16,
     .rule = bulk_size_rule},
    kSid};
constexpr OperandSpec kTmaStore[] = {kTile};
constexpr OperandSpec kStageOnly[] = {kStage};
// Hopper dense wgmma shapes (PTX ISA, wgmma.mma_async): m64nNkK, N a multiple of 8 up to 256,
// K 8 (tf32), 16 (f16/bf16) or 32 (fp8/int8).
constexpr OperandSpec kWgmma[] = {
    {.name = "M", .field = Field::kXHigh, .what = "WGMMA M", .min = kInt64Min, .max = kInt64Max,
     .rule = wgmma_m_rule},
    {.name = "N", .field = Field::kXLow, .what = "WGMMA N", .min = 8, .max = 256,
     .rule = wgmma_n_rule},
    {.name = "K", .field = Field::kY, .what = "WGMMA K", .min = 8, .max = 32,
     .rule = wgmma_k_rule},
    {.name = "gid", .field = Field::kZ, .what = "the WGMMA gid", .label = "gid"}};
constexpr OperandSpec kWgmmaCommit[] = {
    {.name = "gid", .field = Field::kZ, .what = "the gid", .label = "gid"}};
constexpr OperandSpec kWgmmaWait[] = {{.name = "N", .what = "the WGMMA_WAIT group count"}};
constexpr OperandSpec kBarrierOnly[] = {kBarrier};
constexpr OperandSpec kBubble[] = {{.name = "cycles", .what = "BUBBLE cycles"}};

// Hopper's spans, each declared once with its Gantt colour (docs/pictures.md). A span several
// instructions share is one legend entry: the chart takes its first declaration.
constexpr SpanSpec kTmaIssue{"tma_issue", "#1f77b4", "TMA issue"};
constexpr SpanSpec kTmaFlight{"tma_flight", "#9ecae1",
                              "TMA in flight (until the stage's bytes landed)", false, "TMA loads"};

// In Opcode order.
constexpr InstructionSpec kHopper[] = {
    {.name = "TMA_LOAD", .engine = "tma", .copy = true, .operands = kTmaLoad, .span = kTmaIssue,
     .flight = kTmaFlight},
    {.name = "TMA_BULK", .engine = "tma", .copy = true, .operands = kTmaBulk, .span = kTmaIssue,
     .flight = kTmaFlight, .check = bulk_check},
    {.name = "TMA_STORE", .engine = "tma", .copy = true, .operands = kTmaStore, .span = kTmaIssue},
    {.name = "ACQUIRE_STAGE", .operands = kStageOnly,
     .wait_span = {"wait:stage", "#e7ba52", "wait: stage release (ACQUIRE_STAGE)"}},
    {.name = "RELEASE_STAGE", .operands = kStageOnly},
    {.name = "MB_WAIT", .operands = kStageOnly,
     .wait_span = {"wait:mb", "#bdbdbd", "wait: stage data (MB_WAIT)"}},
    {.name = "WGMMA", .engine = "wgmma", .operands = kWgmma,
     .span = {"wgmma", "#d62728", "WGMMA issue"},
     .wait_span = {"wait:tensor_core", "#c49c94", "wait: tensor core buffer full"},
     .flight = {"wgmma_flight", "#fc9272", "WGMMA in flight (issued, not complete)"},
     .check = wgmma_check},
    {.name = "WGMMA_COMMIT", .operands = kWgmmaCommit},
    {.name = "WGMMA_WAIT", .operands = kWgmmaWait,
     .wait_span = {"wait:wgmma", "#f7b6d2", "wait: WGMMA groups (WGMMA_WAIT)"}},
    {.name = "BAR_ARRIVE", .operands = kBarrierOnly},
    {.name = "BAR_WAIT", .operands = kBarrierOnly,
     .wait_span = {"wait:barrier", "#9467bd", "wait: named barrier (BAR_WAIT, ping-pong)"}},
    {.name = "BUBBLE", .operands = kBubble,
     .span = {"bubble", "#2ca02c", "bubble (softmax, non-MMA work)", /*lasts=*/true},
     .check = bubble_check, .text = bubble_text},
    {.name = "EXIT", .span = {"exit", "#000000", "exit"}},
};
static_assert(std::size(kHopper) == kOpcodeCount, "one spec per Opcode, in Opcode order");

}  // namespace isa_detail

/// The instructions of one run: Hopper's at their Opcode values, then those plugins add.
class InstructionSet {
 public:
  InstructionSet() : specs_(std::begin(isa_detail::kHopper), std::end(isa_detail::kHopper)) {}

  /// Hopper's instructions alone.
  static const InstructionSet& hopper() {
    static const InstructionSet set;
    return set;
  }

  /// Adds `spec` at the next opcode and returns it. Throws simfa::Error for a name already taken
  /// or a full table. The spec's strings and operands must outlive the set.
  Opcode add(const InstructionSpec& spec) {
    if (find(spec.name))
      throw Error("instruction " + std::string(spec.name) + " is declared twice");
    for (std::size_t i = 0; i < spec.operands.size(); ++i)
      if (spec.operands[i].kind == OperandKind::kTile && i != 0)
        throw Error("instruction " + std::string(spec.name) +
                    ": a tile operand must be the first (and only one)");
    if (specs_.size() == kMaxInstructions)
      throw Error("instruction " + std::string(spec.name) + ": the table is full (" +
                  std::to_string(kMaxInstructions) + " instructions)");
    specs_.push_back(spec);
    return static_cast<Opcode>(specs_.size() - 1);
  }

  /// The spec of `op`, or null when the set has none.
  const InstructionSpec* find(Opcode op) const {
    const auto i = static_cast<std::size_t>(op);
    return i < specs_.size() ? &specs_[i] : nullptr;
  }
  /// The spec named `name`, or null.
  const InstructionSpec* find(std::string_view name) const {
    for (const InstructionSpec& s : specs_)
      if (name == s.name) return &s;
    return nullptr;
  }
  /// The opcode of `spec`, which must be one of this set's.
  Opcode opcode(const InstructionSpec& spec) const {
    return static_cast<Opcode>(&spec - specs_.data());
  }
  /// The spec of `op`, which must be in the set.
  const InstructionSpec& operator[](Opcode op) const {
    return specs_[static_cast<std::size_t>(op)];
  }
  std::span<const InstructionSpec> specs() const { return specs_; }
  std::size_t size() const { return specs_.size(); }

 private:
  std::vector<InstructionSpec> specs_;
};

/// The name of a Hopper opcode ("TMA_LOAD"), "?" for any other.
inline const char* opcode_name(Opcode op) {
  const InstructionSpec* spec = InstructionSet::hopper().find(op);
  return spec ? spec->name : "?";
}

/// How a trace writes the instruction: "WGMMA M, N, K, gid", "TMA_LOAD map, c0, ..., stage".
inline std::string signature(const InstructionSpec& spec) {
  std::string s = spec.name;
  const char* separator = " ";
  for (const OperandSpec& o : spec.operands) {
    s += separator + std::string(o.name);
    if (o.kind == OperandKind::kTile) s += ", c0, ...";
    separator = ", ";
  }
  return s;
}

/// The value of a kValue operand kept in `field`.
inline std::uint32_t field_value(const Instruction& in, Field field) {
  switch (field) {
    case Field::kX:
      return in.x;
    case Field::kY:
      return in.y;
    case Field::kZ:
      return in.z;
    case Field::kXHigh:
      return in.x >> 16;
    case Field::kXLow:
      return in.x & 0xffffu;
  }
  return 0;
}

/// Stores `value` in `field` (kXHigh and kXLow keep the other half of x).
inline void set_field(Instruction& in, Field field, std::uint32_t value) {
  switch (field) {
    case Field::kX:
      in.x = value;
      break;
    case Field::kY:
      in.y = value;
      break;
    case Field::kZ:
      in.z = value;
      break;
    case Field::kXHigh:
      in.x = (in.x & 0xffffu) | (value << 16);
      break;
    case Field::kXLow:
      in.x = (in.x & 0xffff0000u) | (value & 0xffffu);
      break;
  }
}

/// The first reason `in` cannot run as part of `program`, or "": its stages, TensorMap tile,
/// address and barrier in range, then its spec's own check. `maps` (the workload's TensorMaps)
/// may be null: tiles are then not checked.
inline std::string instruction_problem(const InstructionSpec& spec, const Instruction& in,
                                       const CtaProgram& program,
                                       const std::vector<TensorMap>* maps) {
  for (const OperandSpec& o : spec.operands)
    if (o.kind == OperandKind::kStage && in.stage >= program.stage_count)
      return "stage " + std::to_string(in.stage) + " is out of range (the CTA has " +
             std::to_string(program.stage_count) + " stages)";
  for (const OperandSpec& o : spec.operands) {
    switch (o.kind) {
      case OperandKind::kTile: {
        if (!maps) break;
        if (in.map >= maps->size())
          return "TensorMap " + std::to_string(in.map) + " is not declared (the workload has " +
                 std::to_string(maps->size()) + ")";
        const TensorMap& map = (*maps)[in.map];
        if (map.rank < 1 || map.rank > kMaxTensorRank)
          return "TensorMap '" + map.name + "' has rank " + std::to_string(map.rank) + " (1 to " +
                 std::to_string(kMaxTensorRank) + ")";
        if (std::uint64_t{in.x} + map.rank > program.coords.size())
          return "coordinates " + std::to_string(in.x) + ".." +
                 std::to_string(in.x + map.rank - 1) +
                 " lie outside the CTA's coordinate pool (" +
                 std::to_string(program.coords.size()) + " entries)";
        const std::uint64_t bytes = map.box_bytes();
        if (bytes == 0 || bytes > std::numeric_limits<std::uint32_t>::max())
          return "TensorMap '" + map.name + "' has a box of " + std::to_string(bytes) +
                 " bytes (must be 1 byte to 4 GiB)";
        break;
      }
      case OperandKind::kAddress:
        if (in.x >= program.addresses.size())
          return "address " + std::to_string(in.x) + " lies outside the CTA's address pool (" +
                 std::to_string(program.addresses.size()) + " entries)";
        break;
      case OperandKind::kBarrier:
        if (in.x >= kNamedBarriers)
          return "barrier " + std::to_string(in.x) + " is out of range (ids 0.." +
                 std::to_string(kNamedBarriers - 1) + ")";
        if (barrier_participants(program, in.x) == 0)
          return "barrier " + std::to_string(in.x) + " has 0 participants";
        break;
      case OperandKind::kStage:
      case OperandKind::kValue:
        break;
    }
  }
  return spec.check ? spec.check(in, program) : "";
}

/// `in` as a report shows it, close to its trace spelling: "WGMMA 64 176 16 gid 3",
/// "TMA_LOAD map 1 coords 0 64 sid 0". `maps` as for instruction_problem.
inline std::string instruction_text(const InstructionSpec& spec, const Instruction& in,
                                    const CtaProgram& program,
                                    const std::vector<TensorMap>* maps) {
  std::string s = spec.name;
  for (const OperandSpec& o : spec.operands) {
    s += " ";
    if (o.label) s += std::string(o.label) + " ";
    switch (o.kind) {
      case OperandKind::kTile: {
        s += "map " + std::to_string(in.map) + " coords";
        const std::uint32_t rank = maps && in.map < maps->size() ? (*maps)[in.map].rank : 0;
        for (std::uint32_t d = 0; d < rank && in.x + d < program.coords.size(); ++d)
          s += " " + std::to_string(program.coords[in.x + d]);
        break;
      }
      case OperandKind::kAddress:
        s += in.x < program.addresses.size() ? std::to_string(program.addresses[in.x]) : "?";
        break;
      case OperandKind::kStage:
        s += std::to_string(in.stage);
        break;
      case OperandKind::kBarrier:
        s += std::to_string(in.x);
        break;
      case OperandKind::kValue:
        s += std::to_string(field_value(in, o.field));
        break;
    }
  }
  if (spec.text) s += spec.text(in, program);
  return s;
}

}  // namespace simfa
