// The program builder every frontend writes CTA programs with (simfa/program_builder.h), the
// TensorMap declaration beside it, and the WarpGroup deduplication of recorded events
// (simfa/warpgroup_streams.h).
#include "simfa/program_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "simfa/instruction_set.h"
#include "simfa/warpgroup_streams.h"

namespace simfa {
namespace {

// ---- TensorMaps
// -----------------------------------------------------------------------------------

TEST(TensorMapDeclaration, DenseStridesAreEachDimensionTheSizeOfTheOneInside) {
  const TensorMap m = tensor_map("A", 0x1000, 2, {64, 32, 4}, {}, {16, 8, 1});
  EXPECT_EQ(m.name, "A");
  EXPECT_EQ(m.base, 0x1000u);
  EXPECT_EQ(m.rank, 3u);
  EXPECT_EQ(m.stride[0], 2u);
  EXPECT_EQ(m.stride[1], 64u * 2);
  EXPECT_EQ(m.stride[2], 64u * 32 * 2);
  EXPECT_EQ(m.box_bytes(), 16u * 8 * 2);
  // Dimensions past the rank stay zero, as a TensorMap built field by field leaves them.
  EXPECT_EQ(m.shape[3], 0u);
  EXPECT_EQ(m.stride[3], 0u);
  EXPECT_EQ(m.box[3], 0u);
}

TEST(TensorMapDeclaration, KeepsGivenStrides) {
  const TensorMap m = tensor_map("K", 0, 2, {128, 1024, 8}, {2, 8 * 256, 256}, {128, 64, 1});
  EXPECT_EQ(m.stride[1], 8u * 256);
  EXPECT_EQ(m.stride[2], 256u);
}

TEST(TensorMapDeclaration, RejectsInconsistentDeclarations) {
  EXPECT_THROW(tensor_map("R0", 0, 2, {}, {}, {}), Error);
  EXPECT_THROW(tensor_map("R6", 0, 2, {1, 1, 1, 1, 1, 1}, {}, {1, 1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(tensor_map("S", 0, 2, {8, 8}, {2}, {8, 8}), Error);
  EXPECT_THROW(tensor_map("B", 0, 2, {8, 8}, {}, {8}), Error);
  try {
    tensor_map("Empty", 0, 2, {8, 8}, {}, {8, 0});
    FAIL() << "an empty box was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TensorMap 'Empty'"), std::string::npos) << e.what();
  }
}

// ---- CTA programs
// ---------------------------------------------------------------------------------

class CtaProgramBuilderTest : public ::testing::Test {
 protected:
  std::vector<TensorMap> maps{tensor_map("A", 0, 2, {64, 64}, {}, {64, 64}),
                              tensor_map("Q", 0, 2, {64, 64, 2, 2}, {}, {64, 64, 1, 1})};
  CtaProgram program;
};

TEST_F(CtaProgramBuilderTest, StartsFromAClearedProgramAndDeclaresResources) {
  program.coords = {1, 2, 3};
  program.warpgroups.resize(3);
  CtaProgramBuilder cta(program, 7, maps);
  EXPECT_TRUE(program.coords.empty());
  EXPECT_TRUE(program.warpgroups.empty());
  cta.smem(1024).stages(3, 2).barrier(2, 4);
  EXPECT_EQ(program.cta_id, 7u);
  EXPECT_EQ(program.smem_bytes, 1024);
  EXPECT_EQ(program.stage_count, 3u);
  EXPECT_EQ(program.consumers_per_stage, 2u);
  // Barriers below the declared one keep the default of 2 participants.
  EXPECT_EQ(program.barrier_participants, (std::vector<std::uint32_t>{2, 2, 4}));

  EXPECT_EQ(cta.add_warpgroups(1, 40), 0u);
  EXPECT_EQ(cta.add_warpgroups(2, 232), 1u);
  ASSERT_EQ(cta.warpgroup_count(), 3u);
  EXPECT_EQ(program.warpgroups[0].registers, 40u * kThreadsPerWarpGroup);
  EXPECT_EQ(program.warpgroups[2].registers, 232u * kThreadsPerWarpGroup);
}

TEST_F(CtaProgramBuilderTest, PutsOperandsInThePoolsAndTheirOffsetsInTheInstructions) {
  CtaProgramBuilder cta(program, 0, maps);
  cta.stages(2);
  cta.add_warpgroups(2, 40);
  cta.warpgroup(0).tma_load(0, {64, 128}, 1).tma_bulk(0x2000, 256, 0);
  cta.warpgroup(1).tma_store(1, {0, 64, 1, 1});
  EXPECT_EQ(program.coords, (std::vector<std::int32_t>{64, 128, 0, 64, 1, 1}));
  EXPECT_EQ(program.addresses, (std::vector<Addr>{0x2000}));
  EXPECT_EQ(program.warpgroups[0].code[0], Instruction::tma_load(0, 0, 1));
  EXPECT_EQ(program.warpgroups[0].code[1], Instruction::tma_bulk(0, 256, 0));
  EXPECT_EQ(program.warpgroups[1].code[0], Instruction::tma_store(1, 2));
}

TEST_F(CtaProgramBuilderTest, NumbersEachWarpGroupsWgmmaGroupsFromZero) {
  CtaProgramBuilder cta(program, 0, maps);
  cta.add_warpgroups(2, 40);
  WarpGroupCode first = cta.warpgroup(0);
  EXPECT_EQ(first.wgmma_group(2, 64, 128, 16), 0u);
  EXPECT_EQ(first.wgmma_group(1, 64, 128, 16), 1u);
  EXPECT_EQ(cta.warpgroup(1).wgmma_group(1, 64, 64, 16), 0u);
  const std::vector<Instruction> expected{
      Instruction::wgmma(64, 128, 16, 0), Instruction::wgmma(64, 128, 16, 0),
      Instruction::wgmma_commit(0), Instruction::wgmma(64, 128, 16, 1),
      Instruction::wgmma_commit(1)};
  EXPECT_EQ(program.warpgroups[0].code, expected);
  EXPECT_EQ(first.size(), expected.size());
}

TEST_F(CtaProgramBuilderTest, SplitsLongBubblesAndSharesRepeatedWork) {
  CtaProgramBuilder cta(program, 0, maps);
  cta.add_warpgroups(1, 40);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  WarpGroupCode code = cta.warpgroup(0);
  code.bubbles(0).bubbles(kMax + 5).bubble(0);
  const ComputeWork exp{.fp32 = 1, .alu = 2, .sfu = 3};
  code.compute(10, exp).compute(10, exp).compute(0, ComputeWork{.alu = 4});
  const std::vector<Instruction> expected{
      Instruction::bubble(static_cast<std::uint32_t>(kMax)),
      Instruction::bubble(5),
      Instruction::bubble(0),  // a BUBBLE of 0 cycles is still an instruction
      Instruction::compute(10, 0),
      Instruction::compute(10, 0),
      Instruction::compute(0, 1)};
  EXPECT_EQ(program.warpgroups[0].code, expected);
  EXPECT_EQ(program.work, (std::vector<ComputeWork>{exp, {.alu = 4}}));
}

TEST_F(CtaProgramBuilderTest, FinishedProgramsPassTheInstructionTablesChecks) {
  CtaProgramBuilder cta(program, 3, maps);
  cta.smem(4096).stages(2, 1).barrier(1, 2);
  cta.add_warpgroups(2, 40);
  cta.warpgroup(0).push(Instruction::acquire_stage(1)).tma_load(0, {0, 0}, 1);
  cta.warpgroup(0).push(Instruction::bar_arrive(1)).push(Instruction::exit());
  WarpGroupCode consumer = cta.warpgroup(1);
  consumer.push(Instruction::bar_wait(1)).push(Instruction::mb_wait(1));
  consumer.wgmma_group(4, 64, 256, 16);
  consumer.push(Instruction::wgmma_wait(0)).push(Instruction::release_stage(1));
  consumer.compute(5, {.fp32 = 64}).tma_store(1, {0, 0, 0, 0});
  cta.finish();
  for (const WarpGroupProgram& wg : program.warpgroups) {
    ASSERT_FALSE(wg.code.empty());
    EXPECT_EQ(wg.code.back().op, Opcode::kExit);
    // EXIT is added only where the code does not end with one.
    EXPECT_EQ(std::count_if(wg.code.begin(), wg.code.end(),
                            [](const Instruction& in) { return in.op == Opcode::kExit; }),
              1);
    for (const Instruction& in : wg.code)
      EXPECT_EQ(instruction_problem(InstructionSet::hopper()[in.op], in, program, &maps), "")
          << instruction_text(InstructionSet::hopper()[in.op], in, program, &maps);
  }
}

// A frontend's mistake is an error that names the CTA, not a program the SM rejects later.
TEST_F(CtaProgramBuilderTest, RejectsOperandsOutsideTheCtasResources) {
  CtaProgramBuilder cta(program, 5, maps);
  cta.stages(2);
  cta.add_warpgroups(1, 40);
  WarpGroupCode code = cta.warpgroup(0);
  auto message = [](auto&& build) -> std::string {
    try {
      build();
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message([&] {
              code.tma_load(0, {0, 0, 0}, 0);
            }),
            "internal: CTA 5: 3 coordinates for TensorMap 'A' of rank 2");
  EXPECT_EQ(message([&] {
              code.tma_load(2, {0, 0}, 0);
            }),
            "internal: CTA 5: TensorMap 2 is not declared (the workload has 2)");
  EXPECT_EQ(message([&] {
              code.tma_load(0, {std::int64_t{1} << 31, 0}, 0);
            }),
            "internal: CTA 5: TMA coordinate 2147483648 outside 32 bits");
  EXPECT_EQ(message([&] { code.push(Instruction::mb_wait(2)); }),
            "internal: CTA 5: MB_WAIT of stage 2 (the CTA has 2 stages)");
  EXPECT_EQ(message([&] { code.push(Instruction::bar_wait(kNamedBarriers)); }),
            "internal: CTA 5: BAR_WAIT of barrier 16 (ids 0..15)");
  EXPECT_EQ(message([&] { cta.barrier(kNamedBarriers, 2); }),
            "internal: CTA 5: barrier 16 is out of range (ids 0..15)");
  EXPECT_EQ(message([&] { cta.barrier(0, 0); }), "internal: CTA 5: barrier 0 with 0 participants");
  EXPECT_EQ(message([&] { cta.stages(257); }),
            "internal: CTA 5: 257 stages; stage ids are 8 bits (at most 256)");
  EXPECT_EQ(message([&] { cta.stages(1, 0); }), "internal: CTA 5: stages freed by 0 consumers");
  EXPECT_EQ(message([&] { cta.warpgroup(1); }), "internal: CTA 5: WarpGroup 1 of 1");
  // Nothing that was rejected reached the program.
  EXPECT_TRUE(program.warpgroups[0].code.empty());
  EXPECT_TRUE(program.coords.empty());
}

// ---- WarpGroup deduplication
// ---------------------------------------------------------------------

struct Record {
  int event = 0;
  std::uint32_t warp = 0;  // the warp that wrote it: not part of the comparison
};
bool same_event(const Record& a, const Record& b) {
  return a.event == b.event;
}
using Streams = WarpGroupStreams<Record>;

TEST(WarpGroupStreams, TheFirstWarpAtAPositionWritesItTheOthersMustAgree) {
  Streams streams(2, 8);
  // Interleaved, as a log records them: warp 1 gets ahead of warp 0.
  EXPECT_EQ(streams.add(0, 1, {10, 1}, same_event), Streams::Merge::kAppended);
  EXPECT_EQ(streams.add(0, 0, {10, 0}, same_event), Streams::Merge::kMatched);
  EXPECT_EQ(streams.add(0, 1, {11, 1}, same_event), Streams::Merge::kAppended);
  EXPECT_EQ(streams.add(0, 0, {11, 0}, same_event), Streams::Merge::kMatched);
  EXPECT_EQ(streams.add(1, 4, {20, 4}, same_event), Streams::Merge::kAppended);
  ASSERT_EQ(streams.stream(0).size(), 2u);
  EXPECT_EQ(streams.stream(0)[1].warp, 1u);  // the record of the warp that was first
  EXPECT_EQ(streams.recorded(0), 2u);
  EXPECT_EQ(streams.recorded(4), 1u);
  EXPECT_EQ(streams.recorded(5), 0u);  // a warp that recorded nothing (yet)
}

TEST(WarpGroupStreams, ADifferingEventIsNotMergedAndLeavesTheWarpWhereItWas) {
  Streams streams(1, 4);
  streams.add(0, 0, {1}, same_event);
  streams.add(0, 0, {2}, same_event);
  EXPECT_EQ(streams.add(0, 2, {1}, same_event), Streams::Merge::kMatched);
  EXPECT_EQ(streams.add(0, 2, {3}, same_event), Streams::Merge::kDiffers);
  EXPECT_EQ(streams.recorded(2), 1u);
  EXPECT_EQ(streams.stream(0)[streams.recorded(2)].event, 2);  // what it should have recorded
  // A warp that goes on past the others extends the stream; short ones show in recorded().
  EXPECT_EQ(streams.add(0, 3, {1}, same_event), Streams::Merge::kMatched);
  EXPECT_LT(streams.recorded(3), streams.stream(0).size());
  const std::vector<std::vector<Record>> taken = streams.take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].size(), 2u);
}

}  // namespace
}  // namespace simfa
