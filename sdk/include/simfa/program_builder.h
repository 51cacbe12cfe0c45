// How a frontend writes a CTA program (DESIGN.md §4, §8): CtaProgramBuilder keeps what every
// frontend needs and none should write again -- the operand pools (TMA coordinates, bulk
// addresses, compute work) and the offsets instructions keep into them, each WarpGroup's WGMMA
// group numbers, BUBBLEs longer than one instruction holds, and the CTA's resources (shared
// memory, stages, named barriers, WarpGroups and their registers) -- and checks each where it is
// written, so a frontend's mistake names itself instead of reaching the SM. tensor_map() declares
// a workload's TensorMaps. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "simfa/error.h"
#include "simfa/instruction_set.h"
#include "simfa/isa.h"
#include "simfa/program.h"
#include "simfa/tensor_map.h"

namespace simfa {

/// A TensorMap of rank shape.size() (dimension 0 innermost): `stride` gives the bytes between
/// consecutive indices of every dimension, or is empty for a dense tensor (each dimension's
/// stride the size of the one inside it). Throws simfa::Error for a rank outside 1..5, lists of
/// different lengths or an empty box.
inline TensorMap tensor_map(std::string name, Addr base, std::uint32_t elem_bytes,
                            std::initializer_list<std::uint64_t> shape,
                            std::initializer_list<std::uint64_t> stride,
                            std::initializer_list<std::uint32_t> box) {
  const std::string what = "TensorMap '" + name + "'";
  if (shape.size() < 1 || shape.size() > kMaxTensorRank)
    throw Error(what + ": rank " + std::to_string(shape.size()) + "; it must be 1 to " +
                std::to_string(kMaxTensorRank));
  if ((stride.size() != 0 && stride.size() != shape.size()) || box.size() != shape.size())
    throw Error(what + ": shape, stride and box must list the same " +
                std::to_string(shape.size()) + " dimensions");
  TensorMap map;
  map.name = std::move(name);
  map.base = base;
  map.elem_bytes = elem_bytes;
  map.rank = static_cast<std::uint32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), map.shape.begin());
  std::copy(box.begin(), box.end(), map.box.begin());
  if (stride.size() != 0) {
    std::copy(stride.begin(), stride.end(), map.stride.begin());
  } else {
    map.stride[0] = elem_bytes;
    for (std::uint32_t d = 1; d < map.rank; ++d)
      map.stride[d] = map.stride[d - 1] * map.shape[d - 1];
  }
  if (map.box_bytes() == 0) throw Error(what + ": a box with no elements");
  return map;
}

class CtaProgramBuilder;

/// Appends to one WarpGroup's code: a handle into a CtaProgramBuilder, cheap to copy and valid as
/// long as the builder is.
class WarpGroupCode {
 public:
  /// An instruction as it is (its pool operands, if any, placed with the builder's coordinates()
  /// or address()); the stage and barrier operands of Hopper's are checked against the CTA's
  /// resources.
  WarpGroupCode& push(const Instruction& in);

  WarpGroupCode& tma_load(std::uint16_t map, std::span<const std::int64_t> coords,
                          std::uint8_t stage);
  WarpGroupCode& tma_load(std::uint16_t map, std::initializer_list<std::int64_t> coords,
                          std::uint8_t stage) {
    return tma_load(map, std::span(coords.begin(), coords.size()), stage);
  }
  WarpGroupCode& tma_store(std::uint16_t map, std::span<const std::int64_t> coords);
  WarpGroupCode& tma_store(std::uint16_t map, std::initializer_list<std::int64_t> coords) {
    return tma_store(map, std::span(coords.begin(), coords.size()));
  }
  WarpGroupCode& tma_bulk(Addr address, std::uint32_t bytes, std::uint8_t stage);

  /// One BUBBLE of `cycles` (0 included: it still takes an issue slot).
  WarpGroupCode& bubble(std::uint32_t cycles) { return push(Instruction::bubble(cycles)); }
  /// `cycles` of BUBBLE in as few instructions as hold them; none for 0.
  WarpGroupCode& bubbles(std::uint64_t cycles);
  /// A compute BUBBLE: at least `latency` cycles, `work` on the SM's shared compute pipes.
  WarpGroupCode& compute(std::uint32_t latency, const ComputeWork& work);

  /// `count` WGMMAs m64nNkK in the WarpGroup's next commit group, then the WGMMA_COMMIT that
  /// closes it. The WarpGroup's groups are numbered 0, 1, 2, ... in the order they are opened;
  /// returns this one's.
  std::uint32_t wgmma_group(std::uint32_t count, std::uint16_t m, std::uint16_t n, std::uint16_t k);

  /// Instructions so far.
  std::size_t size() const;

 private:
  friend class CtaProgramBuilder;
  WarpGroupCode(CtaProgramBuilder& builder, std::uint32_t index)
      : builder_(&builder), index_(index) {}
  CtaProgramBuilder* builder_;
  std::uint32_t index_;
};

/// Writes one CTA's program into a CtaProgram: resources first (smem, stages, barriers, the
/// WarpGroups), then each WarpGroup's code through warpgroup(w), then finish(). The program is the
/// caller's, reused from CTA to CTA, so its buffers keep their capacity.
class CtaProgramBuilder {
 public:
  /// Clears `out` and starts CTA `cta`'s program. `maps` are the workload's TensorMaps (tile
  /// operands are checked against them); both must outlive the builder.
  CtaProgramBuilder(CtaProgram& out, std::uint64_t cta, const std::vector<TensorMap>& maps)
      : out_(out), maps_(maps) {
    out_.clear();
    out_.cta_id = cta;
  }
  CtaProgramBuilder(const CtaProgramBuilder&) = delete;
  CtaProgramBuilder& operator=(const CtaProgramBuilder&) = delete;

  CtaProgramBuilder& smem(std::int64_t bytes) {
    if (bytes < 0) fail("shared memory of " + std::to_string(bytes) + " bytes");
    out_.smem_bytes = bytes;
    return *this;
  }
  /// `count` ring slots, each freed by `consumers_per_stage` RELEASE_STAGEs.
  CtaProgramBuilder& stages(std::uint32_t count, std::uint32_t consumers_per_stage = 1) {
    if (count > kMaxStages)
      fail(std::to_string(count) + " stages; stage ids are 8 bits (at most " +
           std::to_string(kMaxStages) + ")");
    if (consumers_per_stage == 0) fail("stages freed by 0 consumers");
    out_.stage_count = count;
    out_.consumers_per_stage = consumers_per_stage;
    return *this;
  }
  /// Named barrier `id` waits for `participants` WarpGroups (an undeclared id: 2).
  CtaProgramBuilder& barrier(std::uint32_t id, std::uint32_t participants) {
    if (id >= kNamedBarriers)
      fail("barrier " + std::to_string(id) + " is out of range (ids 0.." +
           std::to_string(kNamedBarriers - 1) + ")");
    if (participants == 0) fail("barrier " + std::to_string(id) + " with 0 participants");
    auto& list = out_.barrier_participants;
    if (list.size() <= id) list.resize(id + 1, 2);
    list[id] = participants;
    return *this;
  }
  /// Adds `count` WarpGroups whose threads hold `registers_per_thread` each; returns the first's
  /// index.
  std::uint32_t add_warpgroups(std::uint32_t count, std::uint32_t registers_per_thread) {
    const auto first = static_cast<std::uint32_t>(out_.warpgroups.size());
    for (std::uint32_t i = 0; i < count; ++i)
      out_.warpgroups.push_back({{}, registers_per_thread * kThreadsPerWarpGroup});
    next_group_.resize(out_.warpgroups.size(), 0);
    return first;
  }
  std::uint32_t warpgroup_count() const {
    return static_cast<std::uint32_t>(out_.warpgroups.size());
  }
  WarpGroupCode warpgroup(std::uint32_t index) {
    if (index >= out_.warpgroups.size())
      fail("WarpGroup " + std::to_string(index) + " of " + std::to_string(warpgroup_count()));
    return WarpGroupCode(*this, index);
  }

  /// Puts a tile's coordinates (one per dimension of `map`, each within 32 bits) in the pool and
  /// returns their offset, for a tile operand of an instruction a frontend writes itself.
  std::uint32_t coordinates(std::uint16_t map, std::span<const std::int64_t> coords) {
    if (map >= maps_.size())
      fail("TensorMap " + std::to_string(map) + " is not declared (the workload has " +
           std::to_string(maps_.size()) + ")");
    if (coords.size() != maps_[map].rank)
      fail(std::to_string(coords.size()) + " coordinates for TensorMap '" + maps_[map].name +
           "' of rank " + std::to_string(maps_[map].rank));
    for (const std::int64_t c : coords)
      if (c < std::numeric_limits<std::int32_t>::min() ||
          c > std::numeric_limits<std::int32_t>::max())
        fail("TMA coordinate " + std::to_string(c) + " outside 32 bits");
    const auto offset = static_cast<std::uint32_t>(out_.coords.size());
    for (const std::int64_t c : coords) out_.coords.push_back(static_cast<std::int32_t>(c));
    return offset;
  }
  /// Puts a bulk copy's address in the pool and returns its offset.
  std::uint32_t address(Addr address) {
    out_.addresses.push_back(address);
    return static_cast<std::uint32_t>(out_.addresses.size() - 1);
  }
  /// The work pool's entry for `work` (the last one again when it holds the same work).
  std::uint32_t work(const ComputeWork& work) {
    if (out_.work.empty() || !(out_.work.back() == work)) out_.work.push_back(work);
    return static_cast<std::uint32_t>(out_.work.size() - 1);
  }

  /// Ends every WarpGroup's code with EXIT, where it does not end with one already.
  void finish() {
    for (WarpGroupProgram& wg : out_.warpgroups)
      if (wg.code.empty() || wg.code.back().op != Opcode::kExit)
        wg.code.push_back(Instruction::exit());
  }

  const CtaProgram& program() const { return out_; }

 private:
  friend class WarpGroupCode;
  /// Stage ids are 8 bits wide in an Instruction.
  static constexpr std::uint32_t kMaxStages = 256;

  [[noreturn]] void fail(const std::string& message) const {
    throw Error("internal: CTA " + std::to_string(out_.cta_id) + ": " + message);
  }

  void append(std::uint32_t w, const Instruction& in) {
    // Hopper's stage and barrier operands, as the instruction table declares them; a plugin's
    // instructions are checked by the SM.
    if (const InstructionSpec* spec = InstructionSet::hopper().find(in.op))
      for (const OperandSpec& o : spec->operands) {
        if (o.kind == OperandKind::kStage && in.stage >= out_.stage_count)
          fail(std::string(spec->name) + " of stage " + std::to_string(in.stage) +
               " (the CTA has " + std::to_string(out_.stage_count) + " stages)");
        if (o.kind == OperandKind::kBarrier && in.x >= kNamedBarriers)
          fail(std::string(spec->name) + " of barrier " + std::to_string(in.x) + " (ids 0.." +
               std::to_string(kNamedBarriers - 1) + ")");
      }
    out_.warpgroups[w].code.push_back(in);
  }

  CtaProgram& out_;
  const std::vector<TensorMap>& maps_;
  std::vector<std::uint32_t> next_group_;  ///< per WarpGroup: the id of its next WGMMA group
};

inline WarpGroupCode& WarpGroupCode::push(const Instruction& in) {
  builder_->append(index_, in);
  return *this;
}

inline WarpGroupCode& WarpGroupCode::tma_load(std::uint16_t map,
                                              std::span<const std::int64_t> coords,
                                              std::uint8_t stage) {
  return push(Instruction::tma_load(map, builder_->coordinates(map, coords), stage));
}

inline WarpGroupCode& WarpGroupCode::tma_store(std::uint16_t map,
                                               std::span<const std::int64_t> coords) {
  return push(Instruction::tma_store(map, builder_->coordinates(map, coords)));
}

inline WarpGroupCode& WarpGroupCode::tma_bulk(Addr address, std::uint32_t bytes,
                                              std::uint8_t stage) {
  return push(Instruction::tma_bulk(builder_->address(address), bytes, stage));
}

inline WarpGroupCode& WarpGroupCode::bubbles(std::uint64_t cycles) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  for (; cycles > 0; cycles -= std::min(cycles, kMax))
    bubble(static_cast<std::uint32_t>(std::min(cycles, kMax)));
  return *this;
}

inline WarpGroupCode& WarpGroupCode::compute(std::uint32_t latency, const ComputeWork& work) {
  return push(Instruction::compute(latency, builder_->work(work)));
}

inline std::uint32_t WarpGroupCode::wgmma_group(std::uint32_t count, std::uint16_t m,
                                                std::uint16_t n, std::uint16_t k) {
  const std::uint32_t gid = builder_->next_group_[index_]++;
  for (std::uint32_t i = 0; i < count; ++i) push(Instruction::wgmma(m, n, k, gid));
  push(Instruction::wgmma_commit(gid));
  return gid;
}

inline std::size_t WarpGroupCode::size() const {
  return builder_->out_.warpgroups[index_].code.size();
}

}  // namespace simfa
