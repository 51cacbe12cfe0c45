// The sdk's support layer: the did-you-mean distance, integer helpers, the slot pool, the FIFO
// ring, the WarpGroup constants and the frontends' tensor placement that the kernel, the plugins
// and the frontends share.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simfa/int_math.h"
#include "simfa/isa.h"
#include "simfa/ring_queue.h"
#include "simfa/slot_pool.h"
#include "simfa/spelling.h"
#include "simfa/stats.h"
#include "simfa/step_batch.h"
#include "simfa/tensor_map.h"
#include "simfa/tensor_map_limits.h"
#include "simfa/xor_fold.h"
#include "support/manual_event_queue.h"

namespace simfa {
namespace {

TEST(EditDistance, CountsEachEditOnce) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("assoc", "assoc"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("asoc", "assoc"), 1u);       // an insertion
  EXPECT_EQ(edit_distance("asssoc", "assoc"), 1u);     // a deletion
  EXPECT_EQ(edit_distance("block_n", "block_m"), 1u);  // a substitution
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(EditDistance, AnAdjacentTranspositionIsOneEdit) {
  EXPECT_EQ(edit_distance("memroy", "memory"), 1u);
  EXPECT_EQ(edit_distance("haeds", "heads"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  // Optimal string alignment, not unrestricted Damerau-Levenshtein: a transposed pair is not
  // edited again, so "ca" -> "abc" is 3 (Damerau-Levenshtein would give 2).
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

TEST(EditDistance, IsSymmetric) {
  const std::array<std::string_view, 5> words = {"", "l2", "dram", "memroy", "slice_map"};
  for (std::string_view a : words)
    for (std::string_view b : words) EXPECT_EQ(edit_distance(a, b), edit_distance(b, a)) << a << b;
}

TEST(TypoLimit, IsAThirdOfTheLengthRoundedUpAndAtLeastOne) {
  EXPECT_EQ(typo_limit(""), 1u);
  EXPECT_EQ(typo_limit("l2"), 1u);
  EXPECT_EQ(typo_limit("abc"), 1u);
  EXPECT_EQ(typo_limit("asoc"), 2u);
  EXPECT_EQ(typo_limit("memory"), 2u);
  EXPECT_EQ(typo_limit("replacement"), 4u);
  static_assert(typo_limit("assoc") == 2);
}

TEST(ClosestName, PicksTheNearestWithinTheTypoLimit) {
  const std::vector<std::string> keys = {"size", "assoc", "line_bytes"};
  EXPECT_EQ(closest_name("asoc", keys), "assoc");
  EXPECT_EQ(closest_name("sizes", keys), "size");
  EXPECT_EQ(closest_name("lines_bytes", keys), "line_bytes");
  EXPECT_EQ(closest_name("banks", keys), "");  // 3 edits from "assoc"; "banks" allows 2
  EXPECT_EQ(closest_name("anything", std::vector<std::string>{}), "");
  const std::string_view names[] = {"heads", "kv_heads", "head_dim"};
  EXPECT_EQ(closest_name("kv_head", names), "kv_heads");
  EXPECT_EQ(closest_name("zzzzzz", names), "");
  EXPECT_EQ(closest_name("l3", {"sm", "l2"}), "l2");
  // typo_limit rounds up: "seqln" (5 letters) allows 2 edits, so "sql" (2 away) is offered.
  EXPECT_EQ(closest_name("seqln", {"sql"}), "sql");
  EXPECT_EQ(closest_name("seql", {"sq"}), "sq");
  EXPECT_EQ(closest_name("abc", {"xyc"}), "");  // 2 edits; "abc" allows 1
}

TEST(ClosestName, IgnoresCaseButNeverOffersTheWordItself) {
  EXPECT_EQ(closest_name("bubble", {"BUBBLE", "EXIT"}), "BUBBLE");
  EXPECT_EQ(closest_name("TMA_LAOD", {"tma_load"}), "tma_load");
  EXPECT_EQ(closest_name("Assoc", {"assoc"}), "assoc");
  // The name exists and something else is wrong with it: the next closest, if any, is offered.
  EXPECT_EQ(closest_name("k", {"k"}), "");
  EXPECT_EQ(closest_name("kk", {"kk", "k"}), "k");
  EXPECT_EQ(closest_name("x", {"", "y"}), "y");  // an empty name is never offered
  EXPECT_EQ(closest_name("x", {""}), "");
}

TEST(ClosestName, TiesGoToTheEarlierCandidate) {
  const std::array<std::string_view, 3> names = {"lru", "lfu", "lru"};
  EXPECT_EQ(closest_name("lxu", names), "lru");
  const std::array<std::string_view, 2> swapped = {"lfu", "lru"};
  EXPECT_EQ(closest_name("lxu", swapped), "lfu");
}

TEST(DidYouMean, WritesTheHintForTheClosestName) {
  const std::vector<std::string> keys = {"size", "assoc"};
  EXPECT_EQ(did_you_mean("asoc", keys), " (did you mean 'assoc'?)");
  EXPECT_EQ(did_you_mean("banks", keys), "");
  EXPECT_EQ(did_you_mean("memroy", {"simfa", "memory"}, NameForm::kTable),
            " (did you mean [memory]?)");
  EXPECT_EQ(did_you_mean_text("tma.traffic"), "did you mean 'tma.traffic'?");
  EXPECT_EQ(did_you_mean_text("sm.tma", NameForm::kTable), "did you mean [sm.tma]?");
}

TEST(CeilDiv, RoundsUp) {
  static_assert(ceil_div(0, 4) == 0);
  static_assert(ceil_div(1, 4) == 1);
  static_assert(ceil_div(4, 4) == 1);
  static_assert(ceil_div(5, 4) == 2);
  EXPECT_EQ(ceil_div(2048, 128), 16);
  EXPECT_EQ(ceil_div(2049, 128), 17);
  EXPECT_EQ(ceil_div(7, 1), 7);
  const std::int64_t big = std::int64_t{1} << 61;
  EXPECT_EQ(ceil_div(big + 1, big), 2);
}

TEST(MulDivUp, RoundsUpAProductPast64Bits) {
  static_assert(mul_div_up(3, 5, 4) == 4);  // 15 / 4
  static_assert(mul_div_up(4, 5, 4) == 5);
  static_assert(mul_div_up(0, 7, 3) == 0);
  // 2^40 x 2^40 overflows 64 bits; the quotient does not.
  EXPECT_EQ(mul_div_up(std::uint64_t{1} << 40, std::uint64_t{1} << 40, std::uint64_t{1} << 30),
            std::uint64_t{1} << 50);
  // (2^64 - 1) x 3 / 4 rounded up is 3 x 2^62.
  EXPECT_EQ(mul_div_up(~std::uint64_t{0}, 3, 4), std::uint64_t{3} << 62);
}

TEST(XorFold, IsTheXorOfEveryShiftedCopyForEveryShift) {
  // 1011 ^ 101 ^ 10 ^ 1 = 1101
  static_assert(xor_fold(0b1011, 1) == 0b1101);
  static_assert(xor_fold(0, 7) == 0);
  // The definition, one copy a turn (the loop xor_fold replaced), for every shift, over values
  // with bits up to 63: a fold by doubling that stopped a turn early or late differs from it.
  const auto copies = [](std::uint64_t x, int shift) {
    std::uint64_t folded = 0;
    for (; x != 0; x >>= shift) folded ^= x;
    return folded;
  };
  std::vector<std::uint64_t> values = {1, ~std::uint64_t{0}, std::uint64_t{1} << 63,
                                       0x123456789abcdef0};
  std::uint64_t z = 42;
  for (int i = 0; i < 200; ++i) {
    // splitmix64
    z += 0x9e3779b97f4a7c15;
    std::uint64_t v = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    v = (v ^ (v >> 27)) * 0x94d049bb133111eb;
    values.push_back((v ^ (v >> 31)) >> (i % 64));  // every magnitude
  }
  for (int shift = 1; shift <= 63; ++shift) {
    const XorFold fold(shift);  // the unrolled turns of this shift
    for (std::uint64_t v : values) {
      ASSERT_EQ(xor_fold(v, shift), copies(v, shift)) << "shift " << shift << ", x " << v;
      ASSERT_EQ(fold(v), copies(v, shift)) << "XorFold, shift " << shift << ", x " << v;
    }
  }
}

TEST(XorFold, RefusesAShiftOutside1To63) {
  EXPECT_THROW(XorFold(0), Error);
  EXPECT_THROW(XorFold(64), Error);
  EXPECT_NO_THROW(XorFold(63));
}

TEST(RoundUp, GoesToTheNextMultiple) {
  static_assert(round_up(0, 8) == 0);
  static_assert(round_up(1, 8) == 8);
  static_assert(round_up(8, 8) == 8);
  static_assert(round_up(9, 8) == 16);
  static_assert(round_up(std::uint32_t{233}, kRegisterAllocationUnit) == 240);
  const Addr mib = Addr{1} << 20;
  EXPECT_EQ(round_up(5 * mib + 1, 2 * mib), 6 * mib);
  EXPECT_EQ(round_up(std::uint64_t{1} << 62, 2 * mib), std::uint64_t{1} << 62);
}

TEST(TensorPlacement, EachTensorStartsOnThe2MiBBoundaryAfterThePrevious) {
  // A 64 KiB tensor at the first base leaves the next at the following 2 MiB; a tensor ending on
  // a boundary leaves the next right there.
  EXPECT_EQ(next_tensor_base(kFirstTensorBase, 64 << 10), kFirstTensorBase + kTensorAlignment);
  EXPECT_EQ(next_tensor_base(kFirstTensorBase, 4 << 20), kFirstTensorBase + 2 * kTensorAlignment);
  EXPECT_EQ(next_tensor_base(kFirstTensorBase + 16, 4 << 20),
            kFirstTensorBase + 3 * kTensorAlignment);
  static_assert(kTensorAlignment == 2 << 20);
  static_assert(kFirstTensorBase % kTensorAlignment == 0);
}

TEST(TensorMapLimits, NameTheFirstPartOutsideCuTensorMapEncodeTiledsLimits) {
  // A 128 x 64 FP16 tensor, rows 256 bytes apart, loaded in 64 x 32 boxes: within every limit.
  TensorMap good;
  good.base = 0x1000, good.elem_bytes = 2, good.rank = 2;
  good.shape = {128, 64}, good.stride = {2, 256}, good.box = {64, 32};
  EXPECT_FALSE(tensor_map_fault(good));
  using Part = TensorMapFault::Part;
  auto fault = [&](auto change) {
    TensorMap m = good;
    change(m);
    const std::optional<TensorMapFault> f = tensor_map_fault(m);
    EXPECT_TRUE(f);
    return f.value_or(TensorMapFault{Part::kBase, 99, "none"});
  };
  auto is = [](const TensorMapFault& f, Part part, std::uint32_t dim, const std::string& message) {
    EXPECT_EQ(f.part, part) << f.message;
    EXPECT_EQ(f.dim, dim) << f.message;
    EXPECT_EQ(f.message, message);
  };
  is(fault([](TensorMap& m) { m.base = 0x1008; }), Part::kBase, 0,
     "base must be a multiple of 16 bytes, not 4104");
  is(fault([](TensorMap& m) { m.shape[1] = 0; }), Part::kShape, 1,
     "shape entries must be in 1..2^32, not 0");
  is(fault([](TensorMap& m) { m.shape[0] = (std::uint64_t{1} << 32) + 1; }), Part::kShape, 0,
     "shape entries must be in 1..2^32, not 4294967297");
  is(fault([](TensorMap& m) { m.stride[0] = 4; }), Part::kStride, 0,
     "the innermost dimension's stride is 4 bytes; TMA reads rows contiguously (2 bytes, one "
     "element)");
  is(fault([](TensorMap& m) { m.stride[1] = 100; }), Part::kStride, 1,
     "a stride must be a multiple of 16 bytes below 2^40, not 100");
  is(fault([](TensorMap& m) { m.stride[1] = std::uint64_t{1} << 40; }), Part::kStride, 1,
     "a stride must be a multiple of 16 bytes below 2^40, not 1099511627776");
  is(fault([](TensorMap& m) { m.box[1] = 257; }), Part::kBox, 1,
     "box entries must be in 1..256, not 257");
  is(fault([](TensorMap& m) { m.box[0] = 4; }), Part::kBox, 0,
     "the box's inner dimension is 8 bytes; it must be a multiple of 16");
  // The first in declaration order: the base before the box.
  is(fault([](TensorMap& m) { m.base = 8, m.box[0] = 0; }), Part::kBase, 0,
     "base must be a multiple of 16 bytes, not 8");
  // The limits' edges are inside.
  TensorMap edge = good;
  edge.shape[1] = std::uint64_t{1} << 32, edge.stride[1] = (std::uint64_t{1} << 40) - 16;
  edge.box = {256, 256};
  EXPECT_FALSE(tensor_map_fault(edge));
}

TEST(Uint128, HoldsAProductOfTwo64BitValues) {
  const std::uint64_t max = ~std::uint64_t{0};
  const Uint128 square = Uint128{max} * max;  // (2^64 - 1)^2 = 2^128 - 2^65 + 1
  EXPECT_EQ(static_cast<std::uint64_t>(square >> 64), max - 1);
  EXPECT_EQ(static_cast<std::uint64_t>(square), 1u);
  static_assert(sizeof(Uint128) == 16);
}

TEST(SlotPool, ReusesFreedSlotsMostRecentFirst) {
  SlotPool<std::string> pool;
  EXPECT_EQ(pool.add("a"), 0u);
  EXPECT_EQ(pool.add("b"), 1u);
  EXPECT_EQ(pool.add("c"), 2u);
  pool.release(0);
  pool.release(2);
  EXPECT_EQ(pool.add("d"), 2u);  // the last slot freed
  EXPECT_EQ(pool.add("e"), 0u);
  EXPECT_EQ(pool.add("f"), 3u);  // none free: a new slot
  EXPECT_EQ(pool[0], "e");
  EXPECT_EQ(pool[1], "b");
  EXPECT_EQ(pool[2], "d");
  EXPECT_EQ(pool[3], "f");
  pool[1] = "B";
  const SlotPool<std::string>& view = pool;
  EXPECT_EQ(view[1], "B");
}

TEST(SlotPool, AFreedSlotKeepsItsValueUntilReused) {
  // tma.traffic reads a freed op's serial to find that a late report belongs to no op.
  SlotPool<int> pool;
  const std::uint32_t s = pool.add(7);
  pool.release(s);
  EXPECT_EQ(pool[s], 7);
  EXPECT_EQ(pool.add(8), s);
  EXPECT_EQ(pool[s], 8);
}

TEST(RingQueue, IsFirstInFirstOutAcrossGrowth) {
  RingQueue<int> q;
  EXPECT_TRUE(q.empty());
  int next_in = 0, next_out = 0;
  // Interleave so the head wraps around the ring before and after each doubling.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3; ++i) q.push(next_in++);
    EXPECT_EQ(q.back(), next_in - 1);
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_EQ(q.at(i), next_out + static_cast<int>(i));
    EXPECT_EQ(q.front(), next_out);
    q.pop();
    ++next_out;
  }
  EXPECT_EQ(q.size(), 100u);
  while (!q.empty()) {
    EXPECT_EQ(q.front(), next_out++);
    q.pop();
  }
  EXPECT_EQ(next_out, next_in);
}

// Steps a port runs for its clients (StepBatch) run where the events they stand for would fire:
// deferrals one after another share an event, anything scheduled between them or another cycle
// starts a new one, and with a queue that does not count, each has its own.
TEST(StepBatch, RunsEachStepInThePlaceOfItsEvent) {
  struct Log final : MemClient {
    void on_response(Cycle, const MemRequest&) override {}
    void on_step(Cycle now) override { log->push_back(name + "@" + std::to_string(now)); }
    std::string name;
    std::vector<std::string>* log = nullptr;
  };
  for (const bool deferred : {true, false}) {
    for (const bool counted : {true, false}) {
      SCOPED_TRACE(std::string(deferred ? "deferred" : "events") + (counted ? ", counted" : ""));
      test::ManualEventQueue events;
      events.count_scheduled(counted);
      StepBatch batch(events);
      std::vector<std::string> log;
      std::array<Log, 6> c;
      for (std::size_t i = 0; i < c.size(); ++i) {
        c[i].name = std::string(1, static_cast<char>('A' + i));
        c[i].log = &log;
      }
      // A step as the engine would arm it: deferred to the batch, or its own event.
      auto step = [&](Cycle when, Log& client) {
        if (deferred) return batch.defer(when, client);
        events.call(when, Priority::kEngine, [&client](Cycle now) { client.on_step(now); });
      };
      events.call(5, Priority::kMemory, [&](Cycle) {
        step(5, c[0]);
        step(5, c[1]);
        events.call(5, Priority::kEngine, [&](Cycle now) {
          log.push_back("X@" + std::to_string(now));
          step(7, c[3]);
        });
        step(5, c[4]);
        step(6, c[2]);
      });
      // Scheduled before everything above, so it fires first in its cycle and priority; nothing
      // is scheduled between C's step and F's, so F's event would follow C's.
      events.call(5, Priority::kEngine, [&](Cycle) { step(6, c[5]); });
      events.run();
      EXPECT_EQ(log, (std::vector<std::string>{"A@5", "B@5", "X@5", "E@5", "C@6", "F@6", "D@7"}));
      // Besides the three calls: A and B share an event, so do C and F; E has its own (X's event
      // was scheduled between B and E), and D.
      EXPECT_EQ(events.fired(), deferred && counted ? 3u + 4u : 3u + 6u);
    }
  }
}

TEST(WarpGroup, IsFourWarpsOf32Threads) {
  static_assert(kWarpsPerWarpGroup == 4);
  static_assert(kThreadsPerWarp == 32);
  static_assert(kThreadsPerWarpGroup == 128);
  static_assert(kNamedBarriers == 16);  // bar.sync ids 0..15
}

// A registry that keeps what each statistic was declared with.
class RecordingStats final : public StatsRegistry {
 public:
  Counter& counter(const std::string& path, std::string_view unit, std::string_view doc) override {
    declared.push_back(path + " [" + std::string(unit) + "] " + std::string(doc));
    return counters_.emplace_back();
  }
  Histogram& histogram(const std::string& path, std::string_view unit, std::string_view doc,
                       std::uint64_t width, std::size_t count) override {
    declared.push_back(path + " [" + std::string(unit) + "] " + std::string(doc));
    return histograms_.emplace_back(width, count);
  }
  void formula(const std::string& path, std::string_view unit, std::string_view doc,
               Formula f) override {
    declared.push_back(path + " [" + std::string(unit) + "] " + std::string(doc) + " = " +
                       f.numerator.at(0) + " / " + f.denominator.at(0));
  }
  std::vector<std::string> declared;

 private:
  std::deque<Counter> counters_;
  std::deque<Histogram> histograms_;
};

TEST(StatsScope, BindsWhatTheSchemaDeclaresByName) {
  Schema schema;
  schema.stat("hits", StatKind::kCounter, "requests", "lines found");
  schema.stat("latency", StatKind::kHistogram, "cycles", "request latency");
  schema.stat("hit_rate", StatKind::kFormula, "fraction", "hits / requests");
  RecordingStats stats;
  const StatsScope scope(stats, "l2", &schema);
  scope.counter("hits").add(2);
  scope.histogram("latency", 10, 4).sample(25);
  scope.formula("hit_rate", Formula{{"hits"}, {"requests"}, 1.0});
  EXPECT_EQ(stats.declared, (std::vector<std::string>{
                                "l2.hits [requests] lines found",
                                "l2.latency [cycles] request latency",
                                "l2.hit_rate [fraction] hits / requests = l2.hits / l2.requests"}));
  EXPECT_THROW(scope.counter("misses"), Error);     // not declared
  EXPECT_THROW(scope.counter("latency"), Error);    // declared as another kind
  EXPECT_THROW(StatsScope(stats, "x").counter("hits"), Error);  // no schema to read
}

TEST(StatsScope, BindsAnIndexedOrNamedInstanceOfADeclaration) {
  Schema schema;
  schema.stat("slice[i].hits", StatKind::kCounter, "requests", "lines this slice found");
  schema.stat("issued.<op>", StatKind::kCounter, "instructions", "instructions of one kind");
  RecordingStats stats;
  const StatsScope scope(stats, "sm[0]", &schema);
  scope.counter("slice[12].hits");
  scope.child("slice[3]").counter("hits");
  scope.counter("issued.tma_load");
  EXPECT_EQ(stats.declared, (std::vector<std::string>{
                                "sm[0].slice[12].hits [requests] lines this slice found",
                                "sm[0].slice[3].hits [requests] lines this slice found",
                                "sm[0].issued.tma_load [instructions] instructions of one kind"}));
  EXPECT_THROW(scope.counter("hits"), Error);  // only as a slice's
  EXPECT_THROW(scope.child("slice[3]").counter("misses"), Error);
  EXPECT_THROW(scope.counter("issued"), Error);  // the name part is missing
  try {
    scope.child("slice[3]").counter("misses");
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "internal: statistic 'sm[0].slice[3].misses' is bound but not declared: the "
              "component's schema has no counter 'slice[3].misses' (Schema::stat in describe())");
  }
}

TEST(StatsScope, DeclaredNamesStandForIndicesAndNameParts) {
  EXPECT_TRUE(declared_stat_names("hits", "hits"));
  EXPECT_FALSE(declared_stat_names("hits", "hit"));
  EXPECT_FALSE(declared_stat_names("hits", "hitss"));
  EXPECT_TRUE(declared_stat_names("slice[i].hits", "slice[0].hits"));
  EXPECT_TRUE(declared_stat_names("slice[i].hits", "slice[127].hits"));
  EXPECT_FALSE(declared_stat_names("slice[i].hits", "slice[].hits"));
  EXPECT_FALSE(declared_stat_names("slice[i].hits", "slice[x].hits"));
  EXPECT_FALSE(declared_stat_names("slice[i].hits", "slice[1"));
  EXPECT_FALSE(declared_stat_names("slice[i].hits", "slice.hits"));
  EXPECT_TRUE(declared_stat_names("issued.<op>", "issued.wgmma_commit"));
  EXPECT_FALSE(declared_stat_names("issued.<op>", "issued."));
  EXPECT_FALSE(declared_stat_names("issued.<op>", "issued.a.b"));
  EXPECT_TRUE(declared_stat_names("channel[i].<op>.n", "channel[2].x.n"));
}

}  // namespace
}  // namespace simfa
