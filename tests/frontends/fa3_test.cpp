// The fa3 frontends: the 988-cycle softmax bubble, the generator -> event log -> translator round
// trip against a hand-written program, the event-log reader's errors with their lines, GQA head
// mapping, causal tile counts and CTA order, the bytes the tiling loads, and the cuDNN kernel's
// persistent grid, tile schedulers, masked tiles and softmax phases.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fa3_event_log.h"
#include "fa3_events.h"
#include "fa3_kernel.h"
#include "fa3_sources.h"
#include "simfa/error.h"
#include "support/null_build_context.h"
#include "support/program_listing.h"
#include "support/test_files.h"

namespace simfa::fa3 {
namespace {

using test::data_path;
using test::Keys;
using test::listing;
using test::read_file;
using test::repeat;

ParamValue i64(std::int64_t v) {
  return ParamValue{v};
}

/// Builds a component of type T from its schema's defaults and `keys`, each on its own line of
/// "w.toml" (line 2 + its index).
struct Harness : test::NullBuildContext {
  template <typename T>
  std::unique_ptr<T> make(const Keys& keys) {
    return build<T>(keys, ParamValue{std::string()});
  }
};

/// A file of the running test alone, removed when it goes out of scope: CTest runs each test in
/// its own process, several at once (and other build trees share the temporary directory), so the
/// name carries the process id.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path_.c_str()); }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The small shape of the round-trip test: two query heads sharing one KV head, one Q tile of
/// 128 rows, two KV tiles of 176 (352 keys).
const Keys kSmall = {
    {"heads", i64(2)}, {"kv_heads", i64(1)}, {"seqlen_q", i64(128)}, {"seqlen_k", i64(352)}};

Keys with(Keys keys, const Keys& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

std::string generated_log(const Keys& keys) {
  Harness h;
  std::ostringstream out;
  h.make<Fa3Generator>(keys)->write(out);
  return out.str();
}

void expect_same(const CtaProgram& a, const CtaProgram& b, const std::vector<TensorMap>& maps) {
  EXPECT_EQ(a.cta_id, b.cta_id);
  EXPECT_EQ(a.smem_bytes, b.smem_bytes);
  EXPECT_EQ(a.stage_count, b.stage_count);
  EXPECT_EQ(a.consumers_per_stage, b.consumers_per_stage);
  EXPECT_EQ(a.barrier_participants, b.barrier_participants);
  ASSERT_EQ(a.warpgroups.size(), b.warpgroups.size());
  for (std::size_t w = 0; w < a.warpgroups.size(); ++w) {
    EXPECT_EQ(a.warpgroups[w].registers, b.warpgroups[w].registers);
    EXPECT_EQ(listing(a.warpgroups[w], a, maps), listing(b.warpgroups[w], b, maps))
        << "CTA " << a.cta_id << " WarpGroup " << w;
  }
}

// ---- the kernel ---------------------------------------------------------------------------------

TEST(Fa3Bubbles, SoftmaxOf64x176IsThePapers988CyclesOnH800) {
  const Fa3Kernel kernel(Fa3Shape{1, 32, 8, 4096, 4096}, Fa3Throughputs{});
  EXPECT_EQ(kernel.shape().block_n, 176);
  // Section VI-B, per 64 x 176 tile of one consumer WarpGroup (T_M x T_N = 11264 scores):
  const int rowmax = 11264 / 128;      // 88: one FP32 compare per score, 128 per cycle
  const int exp = 11264 / 16;          // 704: one MUFU exp2 per score, 16 per SM per cycle
  const int rowsum = 11264 / 128;      // 88: one FP32 add per score
  const int convert = 11264 / 256;     // 44: FP32 -> FP16 of P, 256 per cycle
  const int rescale = 64 * 128 / 128;  // 64: O (T_M x D) multiply-adds
  EXPECT_EQ(rowmax + exp + rowsum + convert + rescale, 988);
  EXPECT_EQ(kernel.softmax_bubble(), 988u);
  // The epilogue: O / rowsum (8192 multiplies, 64 cycles) and its conversion (32 cycles).
  EXPECT_EQ(kernel.epilogue_bubble(), 96u);

  // Throughputs are parameters: H20's MUFU is not slower per SM, but a unit half as fast doubles
  // its term.
  const Fa3Kernel slow_exp(Fa3Shape{1, 32, 8, 4096, 4096}, Fa3Throughputs{8, 128, 256});
  EXPECT_EQ(slow_exp.softmax_bubble(), 988u + 704);
  Fa3Shape causal{1, 32, 8, 4096, 4096};
  causal.block_n = 128;
  EXPECT_EQ(Fa3Kernel(causal, Fa3Throughputs{}).softmax_bubble(), 64u + 512 + 64 + 32 + 64);
}

TEST(Fa3Kernel, WgmmasPerGemmFollowTheExpansionRule) {
  // ceil(M / 64) x ceil(N / instrN) x ceil(K / 16) with instrN = N: S = Q K^T is 64 x 176 x 128,
  // eight m64n176k16 (the paper's eight); O += P V is 64 x 128 x 176, eleven m64n128k16.
  const Fa3Kernel kernel(Fa3Shape{1, 32, 8, 4096, 4096}, Fa3Throughputs{});
  EXPECT_EQ(kernel.qk_wgmmas(), 8u);
  EXPECT_EQ(kernel.pv_wgmmas(), 11u);
  Fa3Shape s{1, 32, 8, 4096, 4096};
  s.head_dim = 64;
  s.block_n = 128;
  EXPECT_EQ(Fa3Kernel(s, Fa3Throughputs{}).qk_wgmmas(), 4u);
  EXPECT_EQ(Fa3Kernel(s, Fa3Throughputs{}).pv_wgmmas(), 8u);
}

TEST(Fa3Kernel, ResourcesAndTensorMaps) {
  const Fa3Kernel kernel(Fa3Shape{2, 64, 8, 4096, 4096}, Fa3Throughputs{});
  EXPECT_EQ(kernel.consumers(), 2u);
  EXPECT_TRUE(kernel.scheduler_barrier());
  EXPECT_EQ(kernel.smem_bytes(), 208 * 1024);  // Q 32 KiB + 2 x (K + V) 44 KiB
  EXPECT_EQ(kernel.producer_registers_per_thread(), 24u);
  EXPECT_EQ(kernel.consumer_registers_per_thread(), 240u);
  EXPECT_EQ(kernel.stage_count(), 5u);
  EXPECT_EQ(kernel.cta_count(), 32u * 64 * 2);
  const auto& q = kernel.maps()[kMapQ];
  EXPECT_EQ(q.name, "Q");
  EXPECT_EQ(q.base, kFirstTensorBase);
  EXPECT_EQ(q.rank, 4u);
  EXPECT_EQ(q.shape[0], 128u);
  EXPECT_EQ(q.shape[1], 4096u);
  EXPECT_EQ(q.shape[2], 64u);
  EXPECT_EQ(q.shape[3], 2u);
  EXPECT_EQ(q.stride[1], 64u * 128 * 2);  // BSHD: the next token is all heads further
  EXPECT_EQ(q.stride[2], 128u * 2);
  EXPECT_EQ(q.stride[3], 4096u * 64 * 128 * 2);
  EXPECT_EQ(q.box[1], 128u);
  const auto& k = kernel.maps()[kMapK];
  EXPECT_EQ(k.base, kFirstTensorBase + 64 * kTensorAlignment);  // Q is 128 MiB
  EXPECT_EQ(k.shape[2], 8u);
  EXPECT_EQ(k.stride[1], 8u * 128 * 2);
  EXPECT_EQ(k.box[1], 176u);
  EXPECT_EQ(kernel.maps()[kMapV].base, k.base + 8 * kTensorAlignment);  // K is 16 MiB
  EXPECT_EQ(kernel.maps()[kMapO].box[1], 64u);

  Fa3Shape three{1, 32, 8, 1024, 1024};
  three.block_m = 192;
  EXPECT_EQ(Fa3Kernel(three, Fa3Throughputs{}).consumer_registers_per_thread(), 160u);
  Fa3Shape wide{1, 32, 8, 1024, 1024};
  wide.head_dim = 256;
  wide.block_n = 80;
  EXPECT_FALSE(Fa3Kernel(wide, Fa3Throughputs{}).scheduler_barrier());  // FA3: hdim <= 128 only
}

// ---- generator -> event log -> translator -------------------------------------------------------

TEST(Fa3RoundTrip, SmallShapeTranslatesToTheHandWrittenProgram) {
  Harness h;
  auto source = h.make<Fa3Source>(kSmall);
  ASSERT_EQ(source->cta_count(), 2u);
  CtaProgram p;
  source->build(1, p);  // Q tile 0 of head 1, which reads KV head 0
  const auto& maps = source->tensor_maps();
  EXPECT_EQ(p.stage_count, 5u);  // Q; K ring 1-2; V ring 3-4
  EXPECT_EQ(p.consumers_per_stage, 2u);
  EXPECT_EQ(p.smem_bytes, (128 + 2 * 2 * 176) * 128 * 2);
  ASSERT_EQ(p.warpgroups.size(), 3u);
  EXPECT_EQ(p.warpgroups[0].registers, 24u * 128);
  EXPECT_EQ(p.warpgroups[1].registers, 240u * 128);

  // FA3's producer: K of the last tile, Q, then K of tile 0 with V of tile 1, then V of tile 0.
  EXPECT_EQ(
      listing(p.warpgroups[0], p, maps),
      (std::vector<std::string>{"ACQUIRE_STAGE 1", "TMA_LOAD K 0,176,0,0 s1", "ACQUIRE_STAGE 0",
                                "TMA_LOAD Q 0,0,1,0 s0", "ACQUIRE_STAGE 2", "TMA_LOAD K 0,0,0,0 s2",
                                "ACQUIRE_STAGE 3", "TMA_LOAD V 0,176,0,0 s3", "ACQUIRE_STAGE 4",
                                "TMA_LOAD V 0,0,0,0 s4", "EXIT"}));

  // Consumer 0: first S alone, then a turn (S of tile 0, P V of tile 1) between BAR_WAIT on its
  // barrier and BAR_ARRIVE on consumer 1's, then the last P V.
  std::vector<std::string> c0 = {"BAR_ARRIVE 1", "MB_WAIT 0", "MB_WAIT 1"};
  repeat(c0, 8, "WGMMA 64,176,16 gid 0");
  c0.insert(c0.end(), {"WGMMA_COMMIT 0", "WGMMA_WAIT 0", "RELEASE_STAGE 1", "BUBBLE 988",
                       "MB_WAIT 2", "BAR_WAIT 1"});
  repeat(c0, 8, "WGMMA 64,176,16 gid 1");
  c0.insert(c0.end(), {"WGMMA_COMMIT 1", "MB_WAIT 3"});
  repeat(c0, 11, "WGMMA 64,128,16 gid 2");
  c0.insert(c0.end(), {"WGMMA_COMMIT 2", "BAR_ARRIVE 2", "WGMMA_WAIT 1", "RELEASE_STAGE 2",
                       "BUBBLE 988", "WGMMA_WAIT 0", "RELEASE_STAGE 3", "MB_WAIT 4"});
  repeat(c0, 11, "WGMMA 64,128,16 gid 3");
  c0.insert(c0.end(), {"WGMMA_COMMIT 3", "WGMMA_WAIT 0", "RELEASE_STAGE 4", "BUBBLE 96",
                       "TMA_STORE O 0,0,1,0", "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[1], p, maps), c0);

  // Consumer 1 records no K / V waits inside its turns (FA3 lets only the first consumer wait
  // there); the model still waits on each fill, after its BAR_WAIT.
  std::vector<std::string> c1 = {"MB_WAIT 0", "MB_WAIT 1"};
  repeat(c1, 8, "WGMMA 64,176,16 gid 0");
  c1.insert(c1.end(), {"WGMMA_COMMIT 0", "WGMMA_WAIT 0", "RELEASE_STAGE 1", "BUBBLE 988",
                       "BAR_WAIT 2", "MB_WAIT 2"});
  repeat(c1, 8, "WGMMA 64,176,16 gid 1");
  c1.insert(c1.end(), {"WGMMA_COMMIT 1", "MB_WAIT 3"});
  repeat(c1, 11, "WGMMA 64,128,16 gid 2");
  c1.insert(c1.end(), {"WGMMA_COMMIT 2", "BAR_ARRIVE 1", "WGMMA_WAIT 1", "RELEASE_STAGE 2",
                       "BUBBLE 988", "WGMMA_WAIT 0", "RELEASE_STAGE 3", "MB_WAIT 4"});
  repeat(c1, 11, "WGMMA 64,128,16 gid 3");
  c1.insert(c1.end(), {"WGMMA_COMMIT 3", "WGMMA_WAIT 0", "RELEASE_STAGE 4", "BUBBLE 96",
                       "TMA_STORE O 0,64,1,0", "EXIT"});
  EXPECT_EQ(listing(p.warpgroups[2], p, maps), c1);

  // The generated log is the committed fixture, and reading it back gives the same programs.
  const std::string fixture = data_path("fa3_small_events.csv");
  EXPECT_EQ(generated_log(kSmall), read_file(fixture));
  auto events = h.make<Fa3EventsSource>(with(kSmall, {{"path", ParamValue{fixture}}}));
  for (std::uint64_t cta = 0; cta < 2; ++cta) {
    CtaProgram direct, read;
    source->build(cta, direct);
    events->build(cta, read);
    expect_same(direct, read, maps);
  }
}

TEST(Fa3RoundTrip, EventLogAndDirectPathAgreeOnWholeGrids) {
  const std::vector<Keys> shapes = {
      {{"model", ParamValue{"llama3-8b"}}, {"seqlen", i64(1024)}},
      {{"model", ParamValue{"llama3-8b"}},
       {"seqlen_q", i64(700)},
       {"seqlen_k", i64(1000)},
       {"causal", ParamValue{true}},
       {"batch", i64(2)}},
      {{"heads", i64(6)},
       {"kv_heads", i64(2)},
       {"seqlen", i64(600)},
       {"block_m", i64(192)},
       {"stages", i64(1)}},
      {{"heads", i64(2)}, {"seqlen", i64(500)}, {"block_m", i64(64)}, {"head_dim", i64(64)}},
  };
  for (const Keys& keys : shapes) {
    Harness h;
    auto direct = h.make<Fa3Source>(keys);
    const TempFile log("fa3_round_trip.csv", generated_log(keys));
    const std::string& path = log.path();
    auto read = h.make<Fa3EventsSource>(with(keys, {{"path", ParamValue{path}}}));
    ASSERT_EQ(direct->cta_count(), read->cta_count());
    CtaProgram a, b;
    for (std::uint64_t cta = 0; cta < direct->cta_count(); ++cta) {
      direct->build(cta, a);
      read->build(cta, b);
      expect_same(a, b, direct->tensor_maps());
    }
  }
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

TEST(Fa3EventLog, DeduplicatesWarpsInAnyInterleaving) {
  // An instrumented kernel's dump may interleave warps and let every producer warp record: the
  // lines sorted by timestamp across warps, with the producer's events on warps 1-3 as well.
  std::vector<std::string> lines = split_lines(generated_log(kSmall));
  const std::vector<std::string> head(lines.begin(), lines.begin() + 2);
  std::vector<std::pair<std::uint64_t, std::string>> records;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    std::vector<std::string> f;
    std::istringstream in(lines[i]);
    for (std::string field; std::getline(in, field, ',');) f.push_back(field);
    const std::uint64_t order = std::stoull(f[0]) * 1000000 + std::stoull(f[2]);
    records.emplace_back(order, lines[i]);
    if (f[1] == "0")
      for (const char* w : {"1", "2", "3"})
        records.emplace_back(order, f[0] + "," + w + "," + f[2] + "," + f[3] + "," + f[4]);
  }
  std::stable_sort(records.begin(), records.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> shuffled = head;
  for (const auto& r : records) shuffled.push_back(r.second);
  ASSERT_NE(shuffled, lines);

  Harness h;
  auto direct = h.make<Fa3Source>(kSmall);
  const TempFile log("fa3_shuffled.csv", join_lines(shuffled));
  auto read = h.make<Fa3EventsSource>(with(kSmall, {{"path", ParamValue{log.path()}}}));
  CtaProgram a, b;
  for (std::uint64_t cta = 0; cta < 2; ++cta) {
    direct->build(cta, a);
    read->build(cta, b);
    expect_same(a, b, direct->tensor_maps());
  }
  std::map<std::string, std::string> p;
  for (const auto& [k, v] : read->parameters()) p[k] = v;
  EXPECT_EQ(p["events"], std::to_string(records.size()));
}

/// The 1-based number of the first line of `lines` (from line `from`) that starts with `prefix`
/// and contains `part`.
std::uint32_t find_line(const std::vector<std::string>& lines, const std::string& prefix,
                        const std::string& part = "", std::uint32_t from = 1) {
  for (std::size_t i = from - 1; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0 && lines[i].find(part) != std::string::npos)
      return static_cast<std::uint32_t>(i + 1);
  ADD_FAILURE() << "no line " << prefix << "..." << part;
  return 0;
}

class Fa3EventLogErrors : public ::testing::Test {
 protected:
  void SetUp() override { lines_ = split_lines(generated_log(kSmall)); }

  /// Reads `text` as the log and expects an InputError at line:column whose message contains
  /// `needle`.
  void expect_error(const std::string& text, std::uint32_t line, std::uint32_t column,
                    const std::string& needle) {
    const TempFile log("fa3_bad.csv", text);
    const std::string& path = log.path();
    Harness h;
    try {
      h.make<Fa3EventsSource>(with(kSmall, {{"path", ParamValue{path}}}));
      ADD_FAILURE() << "no error; expected " << needle;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, path) << e.what();
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_EQ(e.where().column, column) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  void expect_error(const std::vector<std::string>& lines, std::uint32_t line, std::uint32_t column,
                    const std::string& needle) {
    expect_error(join_lines(lines), line, column, needle);
  }

  std::vector<std::string> lines_;
};

TEST_F(Fa3EventLogErrors, TruncatedFile) {
  std::string text = join_lines(lines_);
  text.resize(text.size() - 4);  // "1,11,9,WAIT_WG_0,0\n" loses its last field and line end
  expect_error(text, static_cast<std::uint32_t>(lines_.size()), 16,
               "truncated log: the last line has no line end and 4 of the 5 fields");
  // Cut at a line end: the last consumer warp stops one event short of its WarpGroup.
  std::vector<std::string> cut(lines_.begin(), lines_.end() - 1);
  expect_error(cut, static_cast<std::uint32_t>(cut.size()), 1,
               "warp 11 of CTA 1 is missing events: it stops after 9 events, while warp 8 of its "
               "WarpGroup goes on with WAIT_WG_0 tile 0");
  // Cut after a whole CTA: the next one has no events.
  const std::uint32_t cta1 = find_line(lines_, "1,0,");
  std::vector<std::string> half(lines_.begin(), lines_.begin() + cta1 - 1);
  expect_error(half, static_cast<std::uint32_t>(half.size()), 1,
               "CTA 1 (Q tile 0, head 1, batch 0) has no events, but attends 2 K/V tiles");
  // Cut inside a consumer's stream on all its warps: its GEMMs are never waited for.
  std::vector<std::string> stream;
  for (const std::string& l : lines_)
    if (!(l.rfind("1,", 0) == 0 && l.find(",9,WAIT_WG_0,0") != std::string::npos))
      stream.push_back(l);
  const std::uint32_t last_pv = find_line(lines_, "1,8,8,GEMM_PV_ISSUE");
  expect_error(stream, last_pv, 7,
               "CTA 1: truncated: the consumer's events end with 1 GEMM(s) never waited for");
}

TEST_F(Fa3EventLogErrors, UnknownEvent) {
  const std::uint32_t line = find_line(lines_, "0,5,", "GEMM_QK_ISSUE");
  std::vector<std::string> bad = lines_;
  bad[line - 1].replace(bad[line - 1].find("GEMM_QK"), 7, "GEMM_KQ");
  expect_error(bad, line, 7, "unknown event 'GEMM_KQ_ISSUE' (events: TMA_Q_ISSUE, TMA_K_ISSUE");
}

TEST_F(Fa3EventLogErrors, WarpWithMissingEvents) {
  // Warp 6 skips one event: it disagrees with its WarpGroup from there on.
  const std::uint32_t line = find_line(lines_, "0,6,1,GEMM_QK_ISSUE");
  std::vector<std::string> bad = lines_;
  bad.erase(bad.begin() + line - 1);
  bad[line - 1].replace(0, 6, "0,6,1,");  // its next event now claims the skipped one's slot
  expect_error(bad, line, 7,
               "warp 6 disagrees with warp 4 of its WarpGroup (CTA 0, WarpGroup 1): its event 2 is "
               "WAIT_WG_0 tile 1, warp 4's (line " +
                   std::to_string(find_line(lines_, "0,4,1,GEMM_QK_ISSUE")) +
                   ") is GEMM_QK_ISSUE tile 1");
  // Warp 9 records nothing at all.
  std::vector<std::string> silent;
  for (const std::string& l : lines_)
    if (l.rfind("0,9,", 0) != 0) silent.push_back(l);
  const std::uint32_t last = find_line(silent, "0,8,9,");
  expect_error(silent, last, 1, "warp 9 of CTA 0 is missing events: it stops after 0 events");
}

TEST_F(Fa3EventLogErrors, OutOfOrderTimestamps) {
  const std::uint32_t line = find_line(lines_, "1,5,3,");
  std::vector<std::string> bad = lines_;
  bad[line - 1].replace(0, 6, "1,5,1,");
  expect_error(
      bad, line, 5,
      "timestamp 1 of warp 5 of CTA 1 is earlier than that of its previous event (2, line " +
          std::to_string(line - 1) + "): a warp's events must be in time order");
}

TEST_F(Fa3EventLogErrors, MalformedLines) {
  std::vector<std::string> bad = lines_;
  bad[1] = "cta,warp,time,event,tile";
  expect_error(bad, 2, 1, "expected the header line 'cta,warp,timestamp,event,tile'");
  expect_error(std::string("# nothing\n"), 1, 1, "the event log is empty");

  bad = lines_;
  bad[4] = "0,0,2,TMA_K_ISSUE";
  expect_error(bad, 5, 18, "expected 5 fields (cta,warp,timestamp,event,tile), found 4");
  bad[4] = "0,0,2,TMA_K_ISSUE,0,7";
  expect_error(bad, 5, 20, "found 6");
  bad[4] = "0,x0,2,TMA_K_ISSUE,0";
  expect_error(bad, 5, 3, "bad warp 'x0': expected an integer");
  bad[4] = "2,0,2,TMA_K_ISSUE,0";
  expect_error(bad, 5, 1, "CTA 2 is outside the grid of 2 CTAs");
  bad[4] = "0,12,2,TMA_K_ISSUE,0";
  expect_error(bad, 5, 3, "warp 12 is outside the CTA's 12 warps");
}

TEST_F(Fa3EventLogErrors, EventsThatBreakTheKernelsStructure) {
  // A consumer multiplies a K tile the producer did not load in that slot.
  std::vector<std::string> bad = lines_;
  for (std::string& l : bad)
    if (l.rfind("0,", 0) == 0 && l.find(",1,GEMM_QK_ISSUE,1") != std::string::npos) l.back() = '0';
  const std::uint32_t line = find_line(bad, "0,4,1,GEMM_QK_ISSUE");
  expect_error(bad, line, 7,
               "CTA 0: GEMM_QK_ISSUE tile 0 uses the producer's K load 1, which is of tile 1");
  // A producer event on a consumer warp.
  bad = lines_;
  for (std::string& l : bad)
    if (l.rfind("0,", 0) == 0 && l.find(",0,WAIT_K_START,1") != std::string::npos && l[2] != '0')
      l.replace(l.find("WAIT_K_START"), 12, "TMA_K_ISSUE");
  expect_error(bad, find_line(bad, "0,4,0,"), 7,
               "TMA_K_ISSUE is a producer event, but warp 4 is in consumer WarpGroup 1");
  // The Q tile must be the CTA's in FA3's order.
  bad = lines_;
  bad[find_line(bad, "0,0,1,TMA_Q_ISSUE") - 1] = "0,0,1,TMA_Q_ISSUE,1";
  expect_error(bad, find_line(bad, "0,0,1,TMA_Q_ISSUE"), 7,
               "TMA_Q_ISSUE loads Q tile 1, but this CTA computes Q tile 0 (head 0, batch 0)");
  // A K tile outside seqlen_k.
  bad = lines_;
  bad[find_line(bad, "0,0,0,TMA_K_ISSUE") - 1] = "0,0,0,TMA_K_ISSUE,5";
  expect_error(bad, find_line(bad, "0,0,0,TMA_K_ISSUE"), 7,
               "TMA_K_ISSUE tile 5 is outside the 2 K/V tiles of seqlen_k");
}

TEST(Fa3EventsSource, MissingFile) {
  Harness h;
  try {
    h.make<Fa3EventsSource>(with(kSmall, {{"path", ParamValue{"/nonexistent.csv"}}}));
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 6u);
    EXPECT_NE(std::string(e.what()).find("cannot read event log '/nonexistent.csv': no such file"),
              std::string::npos);
  }
}

// Found reviewing the event log reader beside fuzz_workload (docs/reliability.md): shape keys of
// 5 x 10^11 CTAs sized the log's per-CTA tables (a 13 TB allocation) before a line was read.
TEST(Fa3EventsSource, GridsTheLogCannotHoldAreRejectedBeforeTheyAreAllocated) {
  Harness h;
  const TempFile log("fa3_header_only.csv", "cta,warp,timestamp,event,tile\n");
  const std::string& path = log.path();
  auto error = [&](const Keys& keys) {
    try {
      h.make<Fa3EventsSource>(with(keys, {{"path", ParamValue{path}}}));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // 2^23 Q tiles x 65535 batches, each attending K/V tiles: one line cannot record them.
  std::string e = error({{"heads", i64(1)},
                         {"kv_heads", i64(1)},
                         {"seqlen_q", i64(1 << 30)},
                         {"seqlen_k", i64(1024)},
                         {"batch", i64(65535)}});
  EXPECT_NE(e.find(path + ": error: the shape keys give 549747425280 CTAs that attend K/V tiles, "
                          "more than the log's 1 lines can record"),
            std::string::npos)
      << e;
  // Causal with seqlen_q 2^26 over one key: only the last Q tile attends it, but the grid is
  // 2^19 CTAs.
  e = error({{"heads", i64(1)},
             {"kv_heads", i64(1)},
             {"seqlen_q", i64(1 << 26)},
             {"seqlen_k", i64(1)},
             {"causal", ParamValue{true}}});
  EXPECT_NE(e.find(path + ": error: the shape keys give a grid of 524288 CTAs; an event log "
                          "describes at most 262144"),
            std::string::npos)
      << e;
}

// ---- grid, GQA, causal --------------------------------------------------------------------------

TEST(Fa3Grid, GqaQueryHeadsReadTheirKvHeadAndItsCtasAreConsecutive) {
  Harness h;
  auto source = h.make<Fa3Source>({{"model", ParamValue{"llama3-70b"}}, {"seqlen", i64(512)}});
  // 64 query heads, 8 KV heads: heads 8g .. 8g+7 read KV head g; 4 Q tiles per head.
  ASSERT_EQ(source->cta_count(), 4u * 64);
  CtaProgram p;
  for (std::uint64_t cta = 0; cta < source->cta_count(); ++cta) {
    source->build(cta, p);
    const std::int64_t head = static_cast<std::int64_t>(cta / 4);
    for (const Instruction& i : p.warpgroups[0].code) {
      if (i.op != Opcode::kTmaLoad) continue;
      const std::int32_t* c = &p.coords[i.x];
      if (i.map == kMapQ) {
        EXPECT_EQ(c[1], static_cast<std::int32_t>(cta % 4) * 128);
        EXPECT_EQ(c[2], head);
      } else {
        EXPECT_EQ(c[2], head / 8) << "CTA " << cta;  // the 32 CTAs of a KV head are consecutive
      }
    }
  }
  // Grouped-query attention on uneven counts.
  const Fa3Kernel k(Fa3Shape{1, 12, 4, 256, 256}, Fa3Throughputs{});
  EXPECT_EQ(k.kv_head(0), 0);
  EXPECT_EQ(k.kv_head(2), 0);
  EXPECT_EQ(k.kv_head(3), 1);
  EXPECT_EQ(k.kv_head(11), 3);
}

std::uint32_t count(const WarpGroupProgram& wg, Opcode op, std::uint16_t map) {
  std::uint32_t n = 0;
  for (const Instruction& i : wg.code) n += i.op == op && (op != Opcode::kTmaLoad || i.map == map);
  return n;
}

TEST(Fa3Causal, TileCountsFollowTheBottomRightMask) {
  // seqlen_q = seqlen_k = 1024, 128 x 128 tiles (FA3's causal kBlockN): Q tile m sees keys up to
  // row (m+1) 128 - 1, so m + 1 KV tiles.
  {
    Harness h;
    auto source =
        h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(1024)}, {"causal", ParamValue{true}}});
    std::map<std::string, std::string> params;
    for (const auto& [k, v] : source->parameters()) params[k] = v;
    EXPECT_EQ(params["block_n"], "128");
    CtaProgram p;
    for (std::uint64_t cta = 0; cta < 8; ++cta) {
      source->build(cta, p);
      const std::int64_t m = 7 - static_cast<std::int64_t>(cta);  // longest tile first
      EXPECT_EQ(count(p.warpgroups[0], Opcode::kTmaLoad, kMapK), m + 1);
      EXPECT_EQ(count(p.warpgroups[0], Opcode::kTmaLoad, kMapV), m + 1);
      EXPECT_EQ(count(p.warpgroups[1], Opcode::kBubble, 0), m + 1 + 1);  // softmax each, epilogue
    }
  }
  // seqlen_q 256 < seqlen_k 1024: the mask is aligned to the bottom right, so Q tile 0 sees
  // 128 + 768 keys (7 tiles) and Q tile 1 all 8.
  const Fa3Kernel shorter(Fa3Shape{1, 1, 1, 256, 1024, 128, 128, 128, 2, true}, Fa3Throughputs{});
  EXPECT_EQ(shorter.n_block_max(0), 7);
  EXPECT_EQ(shorter.n_block_max(1), 8);
  // seqlen_q 1024 > seqlen_k 256: the first six Q tiles see no key at all.
  const Fa3Kernel longer(Fa3Shape{1, 1, 1, 1024, 256, 128, 128, 128, 2, true}, Fa3Throughputs{});
  EXPECT_EQ(longer.n_block_max(5), 0);
  EXPECT_EQ(longer.n_block_max(6), 1);
  EXPECT_EQ(longer.n_block_max(7), 2);
  Fa3EventTranslator translator(longer, "t");
  CtaEvents events;
  CtaProgram p;
  const std::uint64_t cta = 7;  // the last CTA: Q tile 0
  ASSERT_EQ(longer.tile_of(cta).m_block, 0);
  generate_events(longer, cta, events);
  for (const auto& stream : events) EXPECT_TRUE(stream.empty());
  translator.translate(cta, events, p);
  EXPECT_EQ(listing(p.warpgroups[0], p, longer.maps()), std::vector<std::string>{"EXIT"});
  EXPECT_EQ(listing(p.warpgroups[2], p, longer.maps()),
            (std::vector<std::string>{"TMA_STORE O 0,64,0,0", "EXIT"}));  // FA3 stores zeros
}

TEST(Fa3Causal, CtasAttendingKvCountTheGridsTilesWithKeys) {
  for (const bool causal : {false, true})
    for (const std::int64_t seqlen_q : {64, 128, 1000, 1024, 4096})
      for (const std::int64_t seqlen_k : {1, 128, 1000, 4096})
        for (const std::int64_t block_m : {64, 128, 192}) {
          const Fa3Kernel k(Fa3Shape{2, 4, 2, seqlen_q, seqlen_k, 128, block_m, 128, 2, causal},
                            Fa3Throughputs{});
          std::uint64_t attending = 0;
          for (std::uint64_t cta = 0; cta < k.cta_count(); ++cta)
            attending += k.n_block_max(k.tile_of(cta).m_block) > 0;
          EXPECT_EQ(k.ctas_attending_kv(), attending)
              << causal << " " << seqlen_q << " " << seqlen_k << " " << block_m;
        }
}

TEST(Fa3Grid, CtaOrderFollowsFa3sTileSchedulers) {
  // Non-causal (StaticPersistentTileScheduler): Q tile fastest, then head, then batch.
  const Fa3Kernel plain(Fa3Shape{2, 32, 8, 4096, 4096}, Fa3Throughputs{});
  EXPECT_EQ(plain.tile_of(0).m_block, 0);
  EXPECT_EQ(plain.tile_of(31).m_block, 31);
  EXPECT_EQ(plain.tile_of(32).head, 1);
  EXPECT_EQ(plain.tile_of(32 * 32).batch, 1);
  // Causal (DynamicPersistentTileScheduler): FA3's formula counts one KV head at 4096 tokens as
  // 4 MiB, so 8 KV heads (x 4 query heads each: all 32) fit its 32 MiB budget: one section;
  // heads fastest, the longest Q tile first.
  const Fa3Kernel causal(Fa3Shape{1, 32, 8, 4096, 4096, 128, 128, 128, 2, true}, Fa3Throughputs{});
  EXPECT_EQ(causal.tile_of(0).m_block, 31);
  EXPECT_EQ(causal.tile_of(0).head, 0);
  EXPECT_EQ(causal.tile_of(31).head, 31);
  EXPECT_EQ(causal.tile_of(32).m_block, 30);
  // At 32768 tokens one KV head counts 32 MiB: sections of one KV head's 4 query heads; with batch
  // 3 the 96 (head, batch) pairs split evenly.
  const Fa3Kernel big(Fa3Shape{3, 32, 8, 32768, 32768, 128, 128, 128, 2, true}, Fa3Throughputs{});
  EXPECT_EQ(big.tile_of(0).head, 0);
  EXPECT_EQ(big.tile_of(3).head, 3);
  EXPECT_EQ(big.tile_of(4).head, 0);
  EXPECT_EQ(big.tile_of(4).m_block, 254);
  EXPECT_EQ(big.tile_of(4 * 256).head, 4);
  EXPECT_EQ(big.tile_of(4 * 256).m_block, 255);
  // A residual section: at 8192 tokens 4 heads fit (8 MiB each); 6 heads leave a last section
  // of 2.
  const Fa3Kernel residual(Fa3Shape{1, 6, 6, 8192, 8192, 128, 128, 128, 2, true}, Fa3Throughputs{});
  EXPECT_EQ(residual.tile_of(4 * 64 - 1).head, 3);
  EXPECT_EQ(residual.tile_of(4 * 64 - 1).m_block, 0);
  EXPECT_EQ(residual.tile_of(4 * 64).head, 4);
  EXPECT_EQ(residual.tile_of(4 * 64).m_block, 63);
  EXPECT_EQ(residual.tile_of(4 * 64 + 1).head, 5);
  EXPECT_EQ(residual.tile_of(4 * 64 + 2).head, 4);
  EXPECT_EQ(residual.tile_of(4 * 64 + 2).m_block, 62);
  for (const Fa3Kernel* k : {&plain, &causal, &big, &residual}) {
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
    for (std::uint64_t c = 0; c < k->cta_count(); ++c) {
      const auto t = k->tile_of(c);
      seen.emplace(t.m_block, t.head, t.batch);
    }
    EXPECT_EQ(seen.size(), k->cta_count());
  }
}

// ---- traffic ------------------------------------------------------------------------------------

TEST(Fa3Traffic, LlcBytesFollowFromTheTiling) {
  struct Case {
    Keys keys;
    std::int64_t b, h, lq, lk, d, bm, bn;
    bool causal;
  };
  const std::vector<Case> cases = {
      {{{"model", ParamValue{"llama3-8b"}}, {"seqlen", i64(1024)}},
       1,
       32,
       1024,
       1024,
       128,
       128,
       176,
       false},
      {{{"heads", i64(4)},
        {"kv_heads", i64(2)},
        {"seqlen_q", i64(1000)},
        {"seqlen_k", i64(700)},
        {"batch", i64(2)}},
       2,
       4,
       1000,
       700,
       128,
       128,
       176,
       false},
      {{{"heads", i64(4)},
        {"kv_heads", i64(1)},
        {"seqlen_q", i64(900)},
        {"seqlen_k", i64(1300)},
        {"causal", ParamValue{true}}},
       1,
       4,
       900,
       1300,
       128,
       128,
       128,
       true},
      {{{"heads", i64(2)},
        {"seqlen_q", i64(1000)},
        {"seqlen_k", i64(300)},
        {"causal", ParamValue{true}},
        {"head_dim", i64(64)},
        {"block_m", i64(192)},
        {"block_n", i64(112)}},
       1,
       2,
       1000,
       300,
       64,
       192,
       112,
       true},
  };
  for (const Case& c : cases) {
    Harness h;
    auto source = h.make<Fa3Source>(c.keys);
    // Section III-C: each CTA reads its Q tile and streams the K and V tiles its Q tile attends;
    // TMA clips the last tile of each at the sequence's end.
    std::uint64_t expected = 0;
    const std::int64_t m_blocks = (c.lq + c.bm - 1) / c.bm;
    for (std::int64_t m = 0; m < m_blocks; ++m) {
      const std::int64_t q_rows = std::min(c.bm, c.lq - m * c.bm);
      std::int64_t keys = c.lk;
      if (c.causal) keys = std::clamp<std::int64_t>((m + 1) * c.bm + c.lk - c.lq, 0, c.lk);
      const std::int64_t tiles = (keys + c.bn - 1) / c.bn;
      const std::int64_t kv_rows = std::min(tiles * c.bn, c.lk);
      const std::int64_t q_bytes = tiles > 0 ? q_rows * c.d * 2 : 0;
      expected += static_cast<std::uint64_t>(c.b * c.h * (q_bytes + 2 * kv_rows * c.d * 2));
    }
    std::uint64_t in_bounds = 0;
    CtaProgram p;
    for (std::uint64_t cta = 0; cta < source->cta_count(); ++cta) {
      source->build(cta, p);
      for (const auto& wg : p.warpgroups)
        for (const Instruction& i : wg.code)
          if (i.op == Opcode::kTmaLoad)
            in_bounds += source->tensor_maps()[i.map].bytes_in_bounds(&p.coords[i.x]);
    }
    EXPECT_EQ(in_bounds, expected) << c.lq << " x " << c.lk << (c.causal ? " causal" : "");
  }
}

// ---- parameters ---------------------------------------------------------------------------------

TEST(Fa3Config, ModelsDefaultsAndErrors) {
  Harness h;
  auto source = h.make<Fa3Source>({{"model", ParamValue{"llama3-405b"}}, {"seqlen", i64(4096)}});
  std::map<std::string, std::string> p;
  for (const auto& [k, v] : source->parameters()) p[k] = v;
  EXPECT_EQ(p["heads"], "128");
  EXPECT_EQ(p["kv_heads"], "8");
  EXPECT_EQ(p["head_dim"], "128");
  EXPECT_EQ(p["block_m"], "128");
  EXPECT_EQ(p["block_n"], "176");
  EXPECT_EQ(p["stages"], "2");
  EXPECT_EQ(p["causal"], "false");
  EXPECT_EQ(p["grid"], "32x128x1");
  EXPECT_EQ(p["softmax_bubble"], "988");
  EXPECT_EQ(p["qk_wgmmas"], "8");
  EXPECT_EQ(p["pv_wgmmas"], "11");
  EXPECT_EQ(p["smem_bytes"], std::to_string(208 * 1024));

  auto no_model = h.make<Fa3Source>({{"heads", i64(16)}, {"seqlen", i64(256)}});
  EXPECT_EQ(no_model->parameters()[2].second, "16");  // kv_heads defaults to heads

  auto expect_error = [](const Keys& keys, std::uint32_t line, const std::string& needle,
                         std::int64_t smem = 0) {
    Harness harness;
    harness.gpu.smem_per_sm_bytes = smem;
    try {
      harness.make<Fa3Source>(keys);
      ADD_FAILURE() << "no error; expected " << needle;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().line, line) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({{"seqlen", i64(1024)}}, 1, "missing heads: give heads, or model = llama3-8b");
  expect_error({{"heads", i64(8)}}, 1, "missing seqlen (or seqlen_q and seqlen_k)");
  expect_error({{"heads", i64(8)}, {"seqlen_k", i64(64)}}, 3,
               "missing seqlen_q (seqlen_k is given)");
  expect_error({{"heads", i64(8)}, {"seqlen", i64(64)}, {"seqlen_q", i64(64)}}, 4,
               "seqlen sets both seqlen_q and seqlen_k");
  expect_error({{"heads", i64(8)}, {"kv_heads", i64(3)}, {"seqlen", i64(64)}}, 3,
               "heads (8) must be a multiple of kv_heads (3)");
  expect_error({{"heads", i64(8)}, {"seqlen", i64(64)}, {"block_n", i64(100)}}, 4,
               "block_n = 100 is not a multiple of 16");
  expect_error({{"heads", i64(8)}, {"seqlen", i64(64)}, {"block_m", i64(96)}}, 4,
               "block_m = 96 is not a multiple of 64");
  expect_error({{"heads", i64(8)}, {"seqlen", i64(64)}, {"head_dim", i64(72)}}, 4,
               "head_dim = 72 is not a multiple of 16");
  expect_error({{"heads", i64(8)}, {"seqlen", i64(64)}, {"stages", i64(3)}}, 4,
               "need 296 KiB of shared memory; gpu.smem_per_sm is 228 KiB", 228 * 1024);
}

// ---- the cuDNN kernel: persistent grid, tile schedulers, the mask's work, softmax phases ----

std::map<std::string, std::string> params_of(const ProgramSource& source) {
  std::map<std::string, std::string> p;
  for (const auto& [k, v] : source.parameters()) p[k] = v;
  return p;
}

/// The Q tiles (row / 128) a CTA's producer loads, with their heads, in program order.
std::vector<std::pair<std::int32_t, std::int32_t>> q_loads(const CtaProgram& p) {
  std::vector<std::pair<std::int32_t, std::int32_t>> q;
  for (const Instruction& i : p.warpgroups[0].code)
    if (i.op == Opcode::kTmaLoad && i.map == kMapQ)
      q.emplace_back(p.coords[i.x + 1] / 128, p.coords[i.x + 2]);
  return q;
}

/// kernel = cudnn: the Q ring's slots are stages 0 and 1 (q_stages 2).
constexpr std::uint8_t kCudnnQSlots = 2;

TEST(Fa3Cudnn, KernelPresetIsAPersistentGridOfOneCtaPerSm) {
  Harness h;
  h.gpu.sm_count = 132;
  auto source = h.make<Fa3Source>(
      {{"kernel", ParamValue{"cudnn"}}, {"model", ParamValue{"llama3-8b"}}, {"seqlen", i64(4096)}});
  // ncu: 132 CTAs of 3 WarpGroups; the kernel name's 64x128 tile per consumer; its SASS: two Q,
  // two K and two V slots and an O buffer.
  EXPECT_EQ(source->cta_count(), 132u);
  auto p = params_of(*source);
  EXPECT_EQ(p["tiles"], std::to_string(32 * 32));
  // Its SASS takes every tile from an atomic counter, causal or not (validation/h200/opmix/).
  EXPECT_EQ(p["scheduler"], "dynamic");
  EXPECT_EQ(p["tile_order"], "ascending");
  EXPECT_EQ(p["softmax"], "pipes");
  EXPECT_EQ(p["block_n"], "128");
  EXPECT_EQ(p["stages"], "2");
  EXPECT_EQ(p["q_stages"], "2");
  EXPECT_EQ(p["mask_ops"], "2");
  // (2 x 128 + 2 x 2 x 128 + 128) x 128 x 2 = 229376 bytes: ncu's 232448 less 3 KiB of barriers.
  EXPECT_EQ(p["smem_bytes"], "229376");
  // Causal: the same. A tile grid smaller than the SMs launches one CTA a tile.
  auto causal = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                   {"heads", i64(4)},
                                   {"seqlen", i64(1024)},
                                   {"causal", ParamValue{true}}});
  EXPECT_EQ(params_of(*causal)["scheduler"], "dynamic");
  EXPECT_EQ(causal->cta_count(), 32u);
}

// first_wave_bubble: the first BUBBLE of every WarpGroup of a first-wave CTA, and of no other
// (docs/calibration.md §21): a persistent grid is all first wave, and pays it once a CTA, not a
// tile; a CTA a tile pays it on SMs x the CTAs one SM holds.
TEST(Fa3Cudnn, FirstWaveBubbleOpensTheFirstWavesCtasOnly) {
  const auto first_is_bubble = [](const CtaProgram& p, const std::vector<TensorMap>& maps) {
    std::size_t n = 0;  // WarpGroups that open with it; none has it anywhere else
    for (const WarpGroupProgram& wg : p.warpgroups) {
      const auto lines = listing(wg, p, maps);
      const bool first = lines[0] == "BUBBLE 3000";
      EXPECT_EQ(std::count(lines.begin(), lines.end(), "BUBBLE 3000"), first ? 1 : 0);
      n += first;
    }
    return n;
  };
  Harness h;
  h.gpu.sm_count = 4;
  h.gpu.max_ctas_per_sm = 1;
  h.gpu.max_warpgroups_per_sm = 16;
  h.gpu.regs_per_sm = 65536;
  h.gpu.smem_per_sm_bytes = 233472;
  auto persistent = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                       {"heads", i64(4)},
                                       {"seqlen", i64(1024)},
                                       {"first_wave_bubble", i64(3000)}});
  ASSERT_EQ(persistent->cta_count(), 4u);  // 32 tiles on 4 persistent CTAs
  for (std::uint64_t cta = 0; cta < 4; ++cta) {
    CtaProgram p;
    persistent->build(cta, p);
    EXPECT_EQ(first_is_bubble(p, persistent->tensor_maps()), p.warpgroups.size()) << cta;
  }
  h.gpu.sm_count = 2;
  auto per_tile = h.make<Fa3Source>(
      with(kSmall, {{"heads", i64(8)}, {"kv_heads", i64(8)}, {"first_wave_bubble", i64(3000)}}));
  ASSERT_EQ(per_tile->cta_count(), 8u);
  for (std::uint64_t cta = 0; cta < 8; ++cta) {
    CtaProgram p;
    per_tile->build(cta, p);
    EXPECT_EQ(first_is_bubble(p, per_tile->tensor_maps()), cta < 2 ? p.warpgroups.size() : 0u)
        << cta;
  }
}

// tile_barrier (docs/calibration.md §25): cuDNN's SASS hands a persistent CTA's tiles over through
// named barriers: the producer publishes the next tile's index (BAR.ARV 0x3) once the consumers
// have read the last one (BAR.SYNC 0x2), the consumers wait for it after their O store and
// announce the read, and meet each other after Q's wait (BAR.SYNC 0x6).
TEST(Fa3Cudnn, TilesAreHandedOverThroughNamedBarriers) {
  const std::uint32_t full = Fa3Kernel::tile_full_barrier();
  const std::uint32_t empty = Fa3Kernel::tile_empty_barrier();
  const std::uint32_t start = Fa3Kernel::tile_start_barrier();
  const auto uses = [](const WarpGroupProgram& wg, Opcode op, std::uint32_t bar) {
    return std::count_if(wg.code.begin(), wg.code.end(),
                         [&](const Instruction& i) { return i.op == op && i.x == bar; });
  };
  Harness h;
  h.gpu.sm_count = 2;
  // 1 x 1 x 1 x 1024 x 128: 8 Q tiles on 2 CTAs, 4 each; causal with seqlen_k 512: the first 4
  // Q tiles attend no key (torch's and FA3's bottom-right mask), so their consumers store zeros.
  for (const bool blind : {false, true}) {
    auto source = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                     {"heads", i64(1)},
                                     {"seqlen_q", i64(1024)},
                                     {"seqlen_k", i64(blind ? 512 : 1024)},
                                     {"causal", ParamValue{blind}}});
    EXPECT_EQ(params_of(*source)["tile_barrier"], "true");
    std::size_t tiles_seen = 0;
    for (std::uint64_t cta = 0; cta < source->cta_count(); ++cta) {
      CtaProgram p;
      source->build(cta, p);
      // A tile a consumer's O store (a tile without keys loads no Q).
      const auto tiles =
          std::count_if(p.warpgroups[1].code.begin(), p.warpgroups[1].code.end(),
                        [](const Instruction& i) { return i.op == Opcode::kTmaStore; });
      if (!blind) {
        EXPECT_EQ(tiles, static_cast<std::int64_t>(q_loads(p).size()));
      }
      tiles_seen += static_cast<std::size_t>(tiles);
      ASSERT_GE(p.barrier_participants.size(), start + 1);
      EXPECT_EQ(p.barrier_participants[full], 3u);  // the producer and both consumers
      EXPECT_EQ(p.barrier_participants[empty], 3u);
      EXPECT_EQ(p.barrier_participants[start], 2u);  // the consumers
      EXPECT_EQ(p.barrier_participants[Fa3Kernel::turn_barrier(0)], 2u);
      const WarpGroupProgram& producer = p.warpgroups[0];
      EXPECT_EQ(uses(producer, Opcode::kBarArrive, full), tiles);
      EXPECT_EQ(uses(producer, Opcode::kBarWait, empty), tiles - 1);
      // The first index goes out after the first tile's loads, before the second tile's Q.
      std::size_t q_seen = 0;
      for (const Instruction& i : producer.code) {
        if (i.op == Opcode::kTmaLoad && i.map == kMapQ) ++q_seen;
        if (i.op == Opcode::kBarArrive && i.x == full) {
          EXPECT_LE(q_seen, 1u);  // a first tile without keys loads no Q
          if (!blind) {
            EXPECT_EQ(q_seen, 1u);
          }
          break;
        }
      }
      for (std::uint32_t c = 1; c <= 2; ++c) {
        const WarpGroupProgram& wg = p.warpgroups[c];
        EXPECT_EQ(uses(wg, Opcode::kBarWait, full), tiles) << c;
        EXPECT_EQ(uses(wg, Opcode::kBarArrive, empty), tiles - 1) << c;  // none after the last
        const std::int64_t starts = uses(wg, Opcode::kBarWait, start);
        const auto q_waits = std::count_if(
            wg.code.begin(), wg.code.end(),
            [](const Instruction& i) { return i.op == Opcode::kMbWait && i.stage < kCudnnQSlots; });
        EXPECT_EQ(starts, q_waits) << c;  // a tile with keys: Q's wait, then the barrier
        if (!blind) {
          EXPECT_EQ(starts, tiles) << c;
        }
        for (std::size_t k = 0; k < wg.code.size(); ++k) {
          const Instruction& i = wg.code[k];
          if (i.op == Opcode::kBarWait && i.x == full) {
            ASSERT_GT(k, 0u);
            EXPECT_EQ(wg.code[k - 1].op, Opcode::kTmaStore);  // after the O store
          }
          if (i.op == Opcode::kBarWait && i.x == start) {
            ASSERT_GT(k, 0u);
            EXPECT_EQ(wg.code[k - 1].op, Opcode::kMbWait);  // after Q's wait
            EXPECT_LT(wg.code[k - 1].stage, kCudnnQSlots);
          }
        }
      }
    }
    EXPECT_EQ(tiles_seen, 8u);
  }
  // Off: none of the three barriers; fa3's own kernel (a CTA a tile) has none either.
  auto off = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                {"heads", i64(1)},
                                {"seqlen", i64(1024)},
                                {"tile_barrier", ParamValue{"false"}}});
  auto fa3 = h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(1024)}});
  EXPECT_EQ(params_of(*fa3)["tile_barrier"], "false");
  for (ProgramSource* source :
       {static_cast<ProgramSource*>(off.get()), static_cast<ProgramSource*>(fa3.get())}) {
    CtaProgram p;
    source->build(0, p);
    for (const WarpGroupProgram& wg : p.warpgroups)
      for (std::uint32_t bar : {full, empty, start})
        EXPECT_EQ(uses(wg, Opcode::kBarWait, bar) + uses(wg, Opcode::kBarArrive, bar), 0);
  }
}

// first_index_cycles (docs/calibration.md §25): cuDNN's producer takes even a CTA's first tile
// from the atomic counter, so its first load waits for the answer; the consumers do not pay it
// (they wait for Q), nor does a grid without the counter.
TEST(Fa3Cudnn, FirstTileIndexHoldsTheProducersFirstLoad) {
  Harness h;
  h.gpu.sm_count = 2;
  const Keys cudnn = {{"kernel", ParamValue{"cudnn"}},
                      {"heads", i64(1)},
                      {"seqlen", i64(1024)},
                      {"first_wave_bubble", i64(3000)}};
  auto source = h.make<Fa3Source>(cudnn);
  EXPECT_EQ(params_of(*source)["first_index_cycles"], "1536");  // the kernel's default
  auto index_bubbles = [](const CtaProgram& p, const std::vector<TensorMap>& maps, std::size_t wg) {
    const auto lines = listing(p.warpgroups[wg], p, maps);
    return std::count(lines.begin(), lines.end(), "BUBBLE 700");
  };
  auto set = h.make<Fa3Source>(with(cudnn, {{"first_index_cycles", i64(700)}}));
  for (std::uint64_t cta = 0; cta < set->cta_count(); ++cta) {
    CtaProgram p;
    set->build(cta, p);
    const auto lines = listing(p.warpgroups[0], p, set->tensor_maps());
    ASSERT_GE(lines.size(), 3u);
    EXPECT_EQ(lines[0], "BUBBLE 3000");  // the cold start, then the index, then the first load
    EXPECT_EQ(lines[1], "BUBBLE 700");
    EXPECT_EQ(index_bubbles(p, set->tensor_maps(), 0), 1);  // once a CTA, not a tile
    for (std::size_t c = 1; c < p.warpgroups.size(); ++c)
      EXPECT_EQ(index_bubbles(p, set->tensor_maps(), c), 0);
  }
  // A grid without the counter: none.
  for (const char* scheduler : {"static", "none"}) {
    auto other = h.make<Fa3Source>(
        with(cudnn, {{"first_index_cycles", i64(700)}, {"scheduler", ParamValue{scheduler}}}));
    CtaProgram p;
    other->build(0, p);
    EXPECT_EQ(index_bubbles(p, other->tensor_maps(), 0), 0) << scheduler;
  }
  auto fa3 = h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(1024)}});
  EXPECT_EQ(params_of(*fa3)["first_index_cycles"], "0");
}

// q_stages (docs/calibration.md §27): cuDNN's SASS double-buffers Q (its mbarrier and slot index
// toggle once a tile) and has two K and two V slots, so a persistent CTA's producer loads the
// next tile's Q into the other slot while the consumers still use this one; each tile's consumers
// wait on and free the slot of its Q. With q_stages 1 every tile's Q is slot 0 (FA3's kernel).
TEST(Fa3Cudnn, QRingHoldsTheNextTilesQ) {
  Harness h;
  h.gpu.sm_count = 1;
  const Keys cudnn = {{"kernel", ParamValue{"cudnn"}}, {"heads", i64(1)}, {"seqlen", i64(512)}};
  for (const std::int64_t q_stages : {0, 1, 3}) {  // 0: the kernel's, 2
    auto source = h.make<Fa3Source>(with(cudnn, {{"q_stages", i64(q_stages)}}));
    const std::uint32_t slots = q_stages == 0 ? 2 : static_cast<std::uint32_t>(q_stages);
    EXPECT_EQ(params_of(*source)["q_stages"], std::to_string(slots));
    ASSERT_EQ(source->cta_count(), 1u);  // the four Q tiles in one CTA
    CtaProgram p;
    source->build(0, p);
    EXPECT_EQ(p.stage_count, slots + 2 * 2);  // then the K ring and the V ring, two each
    EXPECT_EQ(p.smem_bytes, (slots * 128 + 2 * 2 * 128 + 128) * 128 * 2);  // and the O buffer
    std::vector<std::uint32_t> q_loads, k_loads;
    const std::vector<Instruction>& producer = p.warpgroups[0].code;
    for (std::size_t k = 0; k < producer.size(); ++k) {
      const Instruction& i = producer[k];
      if (i.op != Opcode::kTmaLoad) continue;
      ASSERT_GT(k, 0u);
      EXPECT_EQ(producer[k - 1].op, Opcode::kAcquireStage);  // the slot first
      EXPECT_EQ(producer[k - 1].stage, i.stage);
      (i.map == kMapQ ? q_loads : k_loads).push_back(i.stage);
    }
    ASSERT_EQ(q_loads.size(), 4u);
    for (std::uint32_t t = 0; t < 4; ++t) EXPECT_EQ(q_loads[t], t % slots) << t;
    for (const std::uint32_t stage : k_loads) EXPECT_GE(stage, slots);  // K and V: past the Q ring
    for (std::uint32_t c = 1; c <= 2; ++c) {
      std::vector<std::uint32_t> waits, releases;
      for (const Instruction& i : p.warpgroups[c].code) {
        if (i.op == Opcode::kMbWait && i.stage < slots) waits.push_back(i.stage);
        if (i.op == Opcode::kReleaseStage && i.stage < slots) releases.push_back(i.stage);
      }
      EXPECT_EQ(waits, q_loads) << c;  // each tile's Q where the producer put it
      EXPECT_EQ(releases, std::vector<std::uint32_t>(q_loads.begin(), q_loads.end() - 1)) << c;
    }
  }
  auto fa3 = h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(512)}});
  EXPECT_EQ(params_of(*fa3)["q_stages"], "1");
}

// tile_start_cycles, epilogue_cycles (docs/calibration.md §27): cuDNN's tile code besides its
// waits, from its SASS's samples: 260 cycles before each tile's Q wait, and an epilogue of at
// least 665 cycles at D = 64 and 936 at D = 128 (linear in D between), before the O store.
TEST(Fa3Cudnn, TileCodeCostsWhatCudnnsSamplesSay) {
  Harness h;
  h.gpu.sm_count = 1;
  const Keys cudnn = {{"kernel", ParamValue{"cudnn"}}, {"heads", i64(1)}, {"seqlen", i64(512)}};
  for (const auto& [d, epilogue] : {std::pair{128, 936u}, {64, 665u}, {96, 801u}}) {
    auto source = h.make<Fa3Source>(with(cudnn, {{"head_dim", i64(d)}}));
    auto params = params_of(*source);
    EXPECT_EQ(params["tile_start_cycles"], "260") << d;
    EXPECT_EQ(params["epilogue_cycles"], std::to_string(epilogue)) << d;
    CtaProgram p;
    source->build(0, p);
    for (std::uint32_t c = 1; c <= 2; ++c) {
      const std::vector<Instruction>& code = p.warpgroups[c].code;
      std::uint32_t starts = 0, stores = 0;
      for (std::size_t k = 1; k < code.size(); ++k) {
        if (code[k].op == Opcode::kMbWait && code[k].stage < kCudnnQSlots) {
          EXPECT_EQ(code[k - 1].op, Opcode::kBubble) << d;  // the tile's start, then Q's wait
          EXPECT_FALSE(code[k - 1].is_compute());
          EXPECT_EQ(code[k - 1].x, 260u);
          ++starts;
        }
        if (code[k].op == Opcode::kTmaStore) {
          EXPECT_TRUE(code[k - 1].is_compute()) << d;  // the epilogue, then the O store
          EXPECT_EQ(code[k - 1].x, epilogue) << d;
          ++stores;
        }
      }
      EXPECT_EQ(starts, 4u);  // once a tile
      EXPECT_EQ(stores, 4u);
    }
  }
  auto off =
      h.make<Fa3Source>(with(cudnn, {{"tile_start_cycles", i64(0)}, {"epilogue_cycles", i64(0)}}));
  CtaProgram p;
  off->build(0, p);
  const std::vector<Instruction>& code = p.warpgroups[1].code;
  for (std::size_t k = 1; k < code.size(); ++k) {
    if (code[k].op == Opcode::kMbWait && code[k].stage < kCudnnQSlots) {
      EXPECT_NE(code[k - 1].op, Opcode::kBubble);
    }
    if (code[k].op == Opcode::kTmaStore) {
      EXPECT_EQ(code[k - 1].x, 0u);
    }
  }
  auto fa3 = h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(512)}});
  EXPECT_EQ(params_of(*fa3)["tile_start_cycles"], "0");
  EXPECT_EQ(params_of(*fa3)["epilogue_cycles"], "0");
}

TEST(Fa3Cudnn, StaticSchedulerHandsCtaCEveryGridthTile) {
  Harness h;
  h.gpu.sm_count = 3;
  // 2 heads x 8 Q tiles = 16 tiles on 3 CTAs: CTA c computes tiles c, c + 3, ... (5 or 6 of them)
  // in FA3's order (Q tile fastest, then head).
  auto source = h.make<Fa3Source>(
      {{"kernel", ParamValue{"cudnn"}}, {"heads", i64(2)}, {"seqlen", i64(1024)}});
  ASSERT_EQ(source->cta_count(), 3u);
  CtaProgram p;
  for (std::uint64_t cta = 0; cta < 3; ++cta) {
    source->build(cta, p);
    std::vector<std::pair<std::int32_t, std::int32_t>> expected;
    for (std::uint64_t t = cta; t < 16; t += 3)
      expected.emplace_back(static_cast<std::int32_t>(t % 8), static_cast<std::int32_t>(t / 8));
    EXPECT_EQ(q_loads(p), expected) << "CTA " << cta;
    const auto tiles = static_cast<std::uint32_t>(expected.size());
    EXPECT_EQ(count(p.warpgroups[0], Opcode::kTmaLoad, kMapK), 8 * tiles);
    for (std::uint32_t c = 1; c <= 2; ++c) {
      const WarpGroupProgram& wg = p.warpgroups[c];
      // Each consumer waits for every Q, frees the Q slot after every tile but the last, stores
      // O once a tile and exits once.
      std::uint32_t q_waits = 0, q_releases = 0, arrivals_on_1 = 0;
      for (const Instruction& i : wg.code) {
        q_waits += i.op == Opcode::kMbWait && i.stage < kCudnnQSlots;
        q_releases += i.op == Opcode::kReleaseStage && i.stage < kCudnnQSlots;
        arrivals_on_1 += i.op == Opcode::kBarArrive && i.x == 1;
      }
      EXPECT_EQ(q_waits, tiles);
      EXPECT_EQ(q_releases, tiles - 1);
      EXPECT_EQ(count(wg, Opcode::kTmaStore, 0), tiles);
      EXPECT_EQ(count(wg, Opcode::kExit, 0), 1u);
      EXPECT_EQ(wg.code.back().op, Opcode::kExit);
      // Turns: cuDNN's consumers take turns on their exp2s, 8 a tile (one a KV tile); consumer 1
      // hands each turn to consumer 2 on barrier 2, consumer 2 back on barrier 1, where consumer
      // 1 also arrives once at the start (mma_init, once a CTA).
      EXPECT_EQ(arrivals_on_1, c == 1 ? 1u : 8 * tiles);
    }
    // The K/V rings run on across tiles: the i-th K load of the CTA is in slot 2 + i % 2 (after
    // the two Q slots).
    std::uint32_t k = 0;
    for (const Instruction& i : p.warpgroups[0].code)
      if (i.op == Opcode::kTmaLoad && i.map == kMapK) {
        EXPECT_EQ(i.stage, kCudnnQSlots + k++ % 2);
      }
  }
}

TEST(Fa3Cudnn, OneTilePerCtaGivesThePapersPrograms) {
  // A persistent grid at least as large as the tiles computes one tile a CTA: the program of the
  // CTA that owns the tile, so the persistent path adds nothing to one tile.
  Harness h;
  h.gpu.sm_count = 1000;
  for (const bool causal : {false, true}) {
    const Keys keys = with(kSmall, {{"causal", ParamValue{causal}}});
    auto plain = h.make<Fa3Source>(keys);
    auto persistent = h.make<Fa3Source>(with(keys, {{"scheduler", ParamValue{"static"}}}));
    ASSERT_EQ(plain->cta_count(), persistent->cta_count());
    CtaProgram a, b;
    for (std::uint64_t cta = 0; cta < plain->cta_count(); ++cta) {
      plain->build(cta, a);
      persistent->build(cta, b);
      expect_same(a, b, plain->tensor_maps());
    }
  }
}

TEST(Fa3Cudnn, DynamicSchedulerBalancesCausalWork) {
  // Causal 8 heads x 4096 tokens: 256 tiles of 1 .. 32 KV tiles, longest first. List scheduling
  // gives every tile to exactly one CTA, and no CTA ends more than one tile's work (33: its 32 KV
  // tiles plus one) after the least loaded.
  Fa3Shape shape{1, 8, 8, 4096, 4096, 128, 128, 128, 3, true};
  shape.scheduler = Fa3Scheduler::kDynamic;
  shape.grid = 132;
  const Fa3Kernel k(shape, Fa3Throughputs{});
  ASSERT_EQ(k.cta_count(), 132u);
  std::set<std::uint64_t> seen;
  std::int64_t most = 0, least = 1 << 30;
  std::vector<std::uint64_t> tiles;
  for (std::uint64_t c = 0; c < k.cta_count(); ++c) {
    k.tiles_of_cta(c, tiles);
    ASSERT_FALSE(tiles.empty());
    EXPECT_EQ(tiles.front(), c);  // get_initial_work: blockIdx.x
    std::int64_t work = 0;
    for (std::uint64_t t : tiles) {
      EXPECT_TRUE(seen.insert(t).second) << "tile " << t << " twice";
      work += k.n_block_max(k.tile_of(t).m_block) + 1;
    }
    most = std::max(most, work);
    least = std::min(least, work);
  }
  EXPECT_EQ(seen.size(), k.tile_count());
  EXPECT_LE(most - least, 33);
  // Total: 8 heads x (1 + ... + 32) KV tiles + 256 tiles = 4480; 4480 / 132 = 33.9 a CTA.
  EXPECT_GE(least, 1);
  EXPECT_LE(most, 34 + 33);
  // The static scheduler on the same tiles: CTA c gets tiles c and c + 132 (8 x 32 = 256 tiles).
  shape.scheduler = Fa3Scheduler::kStatic;
  const Fa3Kernel fixed(shape, Fa3Throughputs{});
  fixed.tiles_of_cta(5, tiles);
  EXPECT_EQ(tiles, (std::vector<std::uint64_t>{5, 137}));
  fixed.tiles_of_cta(131, tiles);
  EXPECT_EQ(tiles, (std::vector<std::uint64_t>{131}));
}

TEST(Fa3Cudnn, CausalTilesGoOutShortestFirstToTheFirstFreeCta) {
  // cuDNN's tile index decodes as Q tile fastest from the first, then head (its SASS,
  // validation/h200/opmix/), causal or not, so its counter hands the short causal tiles out
  // first. Causal 1 head x 1024 tokens on 4 CTAs: Q tile m has m + 1 KV tiles, work m + 2.
  // CTAs 0-3 start on tiles 0-3 (work 2, 3, 4, 5); tile 4 goes to CTA 0 (2 -> 8), 5 to CTA 1
  // (3 -> 10), 6 to CTA 2 (4 -> 12), 7 to CTA 3 (5 -> 14).
  Harness h;
  h.gpu.sm_count = 4;
  const Keys keys = {{"kernel", ParamValue{"cudnn"}},
                     {"heads", i64(1)},
                     {"seqlen", i64(1024)},
                     {"causal", ParamValue{true}}};
  auto source = h.make<Fa3Source>(keys);
  ASSERT_EQ(source->cta_count(), 4u);
  CtaProgram p;
  for (std::int32_t cta = 0; cta < 4; ++cta) {
    source->build(static_cast<std::uint64_t>(cta), p);
    const std::vector<std::pair<std::int32_t, std::int32_t>> expected = {{cta, 0}, {cta + 4, 0}};
    EXPECT_EQ(q_loads(p), expected) << "CTA " << cta;
  }
  // FA3's order on the same tiles (tile_order = fa3): the longest Q tile first, 7 on CTA 0.
  auto fa3 = h.make<Fa3Source>(with(keys, {{"tile_order", ParamValue{"fa3"}}}));
  fa3->build(0, p);
  EXPECT_EQ(q_loads(p).front(), (std::pair<std::int32_t, std::int32_t>{7, 0}));
  // Two heads: the first 8 tiles are head 0's Q tiles 0 .. 7, then head 1's.
  h.gpu.sm_count = 16;
  auto two = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                {"heads", i64(2)},
                                {"seqlen", i64(1024)},
                                {"causal", ParamValue{true}}});
  for (std::int32_t cta = 0; cta < 16; ++cta) {
    two->build(static_cast<std::uint64_t>(cta), p);
    EXPECT_EQ(q_loads(p), (std::vector<std::pair<std::int32_t, std::int32_t>>{{cta % 8, cta / 8}}));
  }
}

TEST(Fa3Cudnn, MaskedTilesAreTheDiagonalAndSeqlenEnd) {
  // 128 x 128 tiles, seqlen_q = seqlen_k = 1024: consumer 0's rows 128 m .. 128 m + 63 see keys
  // up to 128 m + 63 at the least, so KV tile m (keys 128 m .. 128 m + 127) is cut, m - 1 not;
  // consumer 1's rows 128 m + 64 .. 128 m + 127 likewise. Non-causal: nothing, unless seqlen_k
  // ends inside a tile.
  const Fa3Kernel causal(Fa3Shape{1, 1, 1, 1024, 1024, 128, 128, 128, 3, true}, Fa3Throughputs{});
  for (std::int64_t m = 0; m < 8; ++m)
    for (std::int64_t n = 0; n <= m; ++n)
      for (std::uint32_t c = 0; c < 2; ++c) EXPECT_EQ(causal.masked(m, n, c), n == m) << m << n;
  const Fa3Kernel plain(Fa3Shape{1, 1, 1, 1024, 1000, 128, 128, 128, 3, false}, Fa3Throughputs{});
  EXPECT_FALSE(plain.masked(3, 6, 0));
  EXPECT_TRUE(plain.masked(3, 7, 0));  // keys 896 .. 1023 past seqlen_k 1000
  // block_n 64 under a 128-row tile: consumer 0 of Q tile 1 (rows 128 .. 191) sees keys up to
  // 128 at least: KV tile 2 (128 .. 191) is cut and tile 3 (192 .. 255) too; consumer 1 (rows
  // 192 .. 255) only tile 3.
  const Fa3Kernel narrow(Fa3Shape{1, 1, 1, 1024, 1024, 128, 128, 64, 3, true}, Fa3Throughputs{});
  EXPECT_EQ(narrow.n_block_max(1), 4);
  EXPECT_FALSE(narrow.masked(1, 1, 0));
  EXPECT_TRUE(narrow.masked(1, 2, 0));
  EXPECT_TRUE(narrow.masked(1, 3, 0));
  EXPECT_FALSE(narrow.masked(1, 2, 1));
  EXPECT_TRUE(narrow.masked(1, 3, 1));
}

TEST(Fa3Cudnn, SoftmaxPhasesCountTheOpsOfA64x128Tile) {
  // Per consumer, 64 x 128 = 8192 scores and a 64 x 128 O (docs/workloads.md):
  Fa3Shape shape{1, 1, 1, 1024, 1024, 128, 128, 128, 3, true};
  shape.softmax = Fa3Softmax::kPipes;
  shape.mask_ops = 2;
  const Fa3Kernel k(shape, Fa3Throughputs{});
  const auto plain = k.softmax_phases(false);
  ASSERT_EQ(plain.size(), 3u);
  // Row max: 8192 FMNMX on the ALU; its latency 10 cycles x the 32 scores a thread combines.
  EXPECT_EQ(plain[0].latency, 320u);
  EXPECT_EQ(plain[0].work, (ComputeWork{0, 8192, 0}));
  // exp2(S x scale - max): 8192 FFMA and 8192 MUFU, plus one of each a row for the rescale factor.
  EXPECT_EQ(plain[1].work, (ComputeWork{8192 + 64, 0, 8192 + 64}));
  // Row sum (FADD) and P to FP16 (F2FP, two a conversion).
  EXPECT_EQ(plain[2].work, (ComputeWork{8192, 4096, 0}));
  // A diagonal tile: first the mask, 2 ALU ops a score.
  const auto cut = k.softmax_phases(true);
  ASSERT_EQ(cut.size(), 4u);
  EXPECT_EQ(cut[0].work, (ComputeWork{0, 2 * 8192, 0}));
  EXPECT_EQ(k.rescale_phase().work, (ComputeWork{8192, 0, 0}));
  EXPECT_EQ(k.epilogue_phase().work, (ComputeWork{8192, 4096, 0}));
  // cuDNN's SASS keeps the scale's FMUL and the max's FADD apart: two FP32 ops a score.
  shape.scale_ops = 2;
  const Fa3Kernel apart(shape, Fa3Throughputs{});
  EXPECT_EQ(apart.softmax_phases(false)[1].work, (ComputeWork{2 * 8192 + 64, 0, 8192 + 64}));
}

TEST(Fa3Cudnn, SoftmaxPhasesChargeWhatCudnnsSassExecutes) {
  // op_counts = cudnn: the work of one consumer and KV step as cuDNN's SASS executes it
  // (validation/h200/opmix/attn1_sass.csv.gz, D = 128, 1 x 32 x 8 x 4096: warp instructions per
  // consumer and KV step, x 32 lanes; 64 x 128 = 8192 scores, 128 threads of 2 rows each).
  Fa3Shape shape{1, 1, 1, 1024, 1024, 128, 128, 128, 3, false};
  shape.softmax = Fa3Softmax::kPipes;
  shape.scale_ops = 2;
  shape.sass_counts = true;
  shape.exp_step_per_cycle = 14.84;
  const Fa3Kernel k(shape, Fa3Throughputs{});
  const auto phases = k.softmax_phases(false);
  ASSERT_EQ(phases.size(), 3u);
  // Row max: FMNMX 272 = (8192 + 4 x 128) / 32, FSETP 8 (2 a thread), integer 32 (8 a thread).
  EXPECT_EQ(phases[0].work, (ComputeWork{0, 8192 + 512 + 256 + 1024, 0}));
  EXPECT_EQ(phases[0].latency, 320u);
  // exp2: FMUL and FADD a score, the rescale factor on each of a row's 4 threads (FMUL and FADD
  // 16 = 4 a thread, MUFU.EX2 8 = 2 a thread); its floor: 8192 / 14.84 scores a cycle.
  EXPECT_EQ(phases[1].work, (ComputeWork{2 * 8192 + 512, 0, 8192 + 256}));
  EXPECT_EQ(phases[1].latency, 553u);
  EXPECT_TRUE(phases[1].exp2);
  // Row sum (FADD), P to FP16 (F2FP 128) and the FSEL guard (2 a thread).
  EXPECT_EQ(phases[2].work, (ComputeWork{8192, 4096 + 256, 0}));
  // Beside the GEMMs: 72 integer instructions with S (16 + 7 x its 8 HGMMAs), 30 with P V.
  EXPECT_EQ(k.gemm_issue_phase(true).work, (ComputeWork{0, 72 * 32, 0}));
  EXPECT_EQ(k.gemm_issue_phase(false).work, (ComputeWork{0, 30 * 32, 0}));
  // In all, FP32 3 x 8192 + 512 + O's rescale 8192 = 33280 (the SASS: FADD, FMUL, FFMA 1048 x
  // 32 = 33536); SFU 8448 (264 x 32); ALU 9984 + 4352 + 3264 = 17600 (FMNMX 272, F2FP 128,
  // FSETP and FSEL 16, integer and IMAD 132: 548 x 32 = 17536).
  std::uint64_t fp32 = k.rescale_phase().work.fp32, sfu = 0, alu = 0;
  for (const auto& p : phases) {
    fp32 += p.work.fp32;
    sfu += p.work.sfu;
    alu += p.work.alu;
  }
  alu += k.gemm_issue_phase(true).work.alu + k.gemm_issue_phase(false).work.alu;
  EXPECT_EQ(fp32, 33280u);
  EXPECT_EQ(sfu, 8448u);
  EXPECT_EQ(alu, 17600u);
  // D = 64 (attn0): S's integer work 16 + 7 x 4 HGMMAs = 44, the SASS's 44.
  shape.head_dim = 64;
  EXPECT_EQ(Fa3Kernel(shape, Fa3Throughputs{}).gemm_issue_phase(true).work.alu, 44u * 32);
  // o_rescale = with_exp: the SASS's turn, the row sum, P's F2FP and O x the factor with the
  // exp2s (1000 FP32, 248 + 8 MUFU, 120 + 8 F2FP a consumer at D = 128), no phase after.
  shape.head_dim = 128;
  shape.o_rescale = Fa3ORescale::kWithExp;
  const auto turn = Fa3Kernel(shape, Fa3Throughputs{}).softmax_phases(false);
  ASSERT_EQ(turn.size(), 2u);
  EXPECT_EQ(turn[1].work, (ComputeWork{2 * 8192 + 512 + 8192 + 8192, 4096 + 256, 8192 + 256}));
  // op_counts = fa3 (the shape's default) keeps the rows' factors once a row and no guards.
  shape.sass_counts = false;
  shape.o_rescale = Fa3ORescale::kAfterPv;
  const Fa3Kernel fa3(shape, Fa3Throughputs{});
  EXPECT_EQ(fa3.softmax_phases(false)[1].work, (ComputeWork{2 * 8192 + 64, 0, 8192 + 64}));
  EXPECT_EQ(fa3.gemm_issue_phase(true).work, ComputeWork{});
}

TEST(Fa3Cudnn, IntegerWorkRunsBesideEachGemm) {
  // kernel = cudnn: each consumer's S and P V are followed, after their commit and before their
  // wait, by the integer work issued with them; fa3 with softmax = pipes has none.
  Harness h;
  h.gpu.sm_count = 1;
  auto source =
      h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}}, {"heads", i64(1)}, {"seqlen", i64(512)}});
  auto params = params_of(*source);
  EXPECT_EQ(params["op_counts"], "cudnn");
  EXPECT_EQ(params["o_rescale"], "after_pv");
  EXPECT_EQ(params["exp_step_per_cycle"], "10.58");  // the exp step's rate beside WGMMAs
  CtaProgram p;
  source->build(0, p);
  const std::vector<Instruction>& code = p.warpgroups[1].code;
  std::uint32_t commits = 0;
  for (std::size_t k = 0; k + 2 < code.size(); ++k) {
    if (code[k].op != Opcode::kWgmmaCommit) continue;
    ++commits;
    ASSERT_TRUE(code[k + 1].is_compute());
    const ComputeWork& w = p.work[code[k + 1].y];
    EXPECT_TRUE(w == (ComputeWork{0, 72 * 32, 0}) || w == (ComputeWork{0, 30 * 32, 0}));
    EXPECT_EQ(code[k + 2].op, Opcode::kWgmmaWait);
  }
  EXPECT_EQ(commits, 2u * 4 * 4);  // S and P V, 4 Q tiles x 4 KV tiles
  auto fa3 = h.make<Fa3Source>(
      {{"softmax", ParamValue{"pipes"}}, {"heads", i64(1)}, {"seqlen", i64(512)}});
  EXPECT_EQ(params_of(*fa3)["op_counts"], "fa3");
  EXPECT_EQ(params_of(*fa3)["exp_step_per_cycle"], "0");
  fa3->build(0, p);
  for (std::size_t k = 0; k + 1 < p.warpgroups[1].code.size(); ++k)
    if (p.warpgroups[1].code[k].op == Opcode::kWgmmaCommit) {
      EXPECT_FALSE(p.warpgroups[1].code[k + 1].is_compute());
    }
}

TEST(Fa3Cudnn, KernelPresetsPickTheirScaleOps) {
  Harness h;
  const ParamValue one = i64(1), len = i64(1024);
  auto cudnn =
      h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}}, {"heads", one}, {"seqlen", len}});
  EXPECT_EQ(params_of(*cudnn)["scale_ops"], "2");
  auto fa3 = h.make<Fa3Source>({{"softmax", ParamValue{"pipes"}}, {"heads", one}, {"seqlen", len}});
  EXPECT_EQ(params_of(*fa3)["scale_ops"], "1");
  auto fused = h.make<Fa3Source>(
      {{"kernel", ParamValue{"cudnn"}}, {"scale_ops", one}, {"heads", one}, {"seqlen", len}});
  EXPECT_EQ(params_of(*fused)["scale_ops"], "1");
}

// cuDNN's consumer loop (its SASS, validation/h200/opmix/): S, its softmax, then P V and its wait
// before the next S (no IntraWGOverlap), and the named turn barriers around the exp2s.
TEST(Fa3Cudnn, ConsumersTakeTurnsOnTheirExp2s) {
  Harness h;
  h.gpu.sm_count = 1;
  auto source =
      h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}}, {"heads", i64(1)}, {"seqlen", i64(512)}});
  auto params = params_of(*source);
  EXPECT_EQ(params["intra_wg_overlap"], "false");
  EXPECT_EQ(params["turn"], "exp2");
  CtaProgram p;
  source->build(0, p);
  for (std::uint32_t c = 1; c <= 2; ++c) {
    const std::vector<Instruction>& code = p.warpgroups[c].code;
    std::uint32_t exps = 0, full_waits = 0;
    for (std::size_t k = 0; k < code.size(); ++k) {
      if (code[k].is_compute() && p.work[code[k].y].sfu > 64) {
        ++exps;
        ASSERT_GT(k, 0u);
        ASSERT_LT(k + 1, code.size());
        EXPECT_EQ(code[k - 1].op, Opcode::kBarWait);
        EXPECT_EQ(code[k - 1].x, Fa3Kernel::turn_barrier(c - 1));
        EXPECT_EQ(code[k + 1].op, Opcode::kBarArrive);
        EXPECT_EQ(code[k + 1].x, Fa3Kernel::turn_barrier(2 - c));
      }
      // Every WGMMA_WAIT waits for all: S and P V are each waited for before what follows.
      if (code[k].op == Opcode::kWgmmaWait) full_waits += code[k].x == 0;
    }
    EXPECT_EQ(exps, 4u * 4);  // 4 Q tiles x 4 KV tiles of 128
    EXPECT_EQ(full_waits, 2u * exps);
  }
  // fa3's own kernel keeps IntraWGOverlap and its turns on the GEMMs.
  auto fa3 = h.make<Fa3Source>({{"heads", i64(1)}, {"seqlen", i64(512)}});
  EXPECT_EQ(params_of(*fa3)["intra_wg_overlap"], "true");
  EXPECT_EQ(params_of(*fa3)["turn"], "gemms");
  // The exp2 turns need the softmax's phases: asked for with the paper's bubble, an error;
  // left to auto, cuDNN with the bubble takes its turns on the GEMMs.
  try {
    h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                       {"heads", i64(1)},
                       {"seqlen", i64(512)},
                       {"softmax", ParamValue{"bubble"}},
                       {"turn", ParamValue{"exp2"}}});
    ADD_FAILURE() << "turn = exp2 with softmax = bubble was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("give softmax = pipes"), std::string::npos) << e.what();
  }
  auto bubble = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                   {"heads", i64(1)},
                                   {"seqlen", i64(512)},
                                   {"softmax", ParamValue{"bubble"}}});
  EXPECT_EQ(params_of(*bubble)["turn"], "gemms");
}

TEST(Fa3Cudnn, CausalDiagonalTilesPayTheMaskOnce) {
  // kernel = cudnn, causal, 1 head x 1024 tokens: 8 tiles of 1 .. 8 KV tiles; each consumer
  // masks exactly its diagonal KV tile, so one mask phase (16384 ALU elements) a tile.
  Harness h;
  h.gpu.sm_count = 2;
  auto source = h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                                   {"heads", i64(1)},
                                   {"seqlen", i64(1024)},
                                   {"causal", ParamValue{true}}});
  ASSERT_EQ(source->cta_count(), 2u);
  CtaProgram p;
  std::uint32_t masks = 0, softmaxes = 0, tiles = 0;
  for (std::uint64_t cta = 0; cta < 2; ++cta) {
    source->build(cta, p);
    tiles += static_cast<std::uint32_t>(q_loads(p).size());
    for (std::uint32_t c = 1; c <= 2; ++c)
      for (const Instruction& i : p.warpgroups[c].code) {
        if (!i.is_compute()) continue;
        masks += p.work[i.y] == ComputeWork{0, 2 * 8192, 0};
        softmaxes += p.work[i.y].sfu > 0;
      }
  }
  EXPECT_EQ(tiles, 8u);
  EXPECT_EQ(masks, 2u * 8);                                    // each consumer, each tile
  EXPECT_EQ(softmaxes, 2u * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8));  // each KV tile of each consumer
}

TEST(Fa3Cudnn, PersistentGridsTooLargeToHoldAreRefused) {
  // 1 x 128 x 8 x 131072 x 128: 1024 Q tiles x 128 heads x 1024 KV tiles = 134M KV steps of about
  // 56 instructions, far past 2 GiB; a CTA a tile is fine (programs are built one at a time).
  Harness h;
  h.gpu.sm_count = 132;
  const Keys big = {{"kernel", ParamValue{"cudnn"}},
                    {"model", ParamValue{"llama3-405b"}},
                    {"seqlen", i64(131072)}};
  try {
    h.make<Fa3Source>(big);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a persistent grid holds every tile's program at once"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(h.make<Fa3Source>(with(big, {{"scheduler", ParamValue{"none"}}}))->cta_count(),
            1024u * 128);
  // The validation set's largest (1 x 64 x 8 x 16384 x 128: 1M KV steps, about 900 MiB) is held.
  EXPECT_EQ(h.make<Fa3Source>({{"kernel", ParamValue{"cudnn"}},
                               {"model", ParamValue{"llama3-70b"}},
                               {"seqlen", i64(16384)}})
                ->cta_count(),
            132u);
}

TEST(Fa3Cudnn, EventLogsHoldOneTilePerCta) {
  Harness h;
  try {
    h.make<Fa3Generator>(with(kSmall, {{"kernel", ParamValue{"cudnn"}}}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("an FA3 event log holds one work tile per CTA"),
              std::string::npos)
        << e.what();
  }
  // With scheduler = none the cuDNN kernel's log reads back to the direct path's programs.
  const Keys keys = with(kSmall, {{"kernel", ParamValue{"cudnn"}},
                                  {"scheduler", ParamValue{"none"}},
                                  {"causal", ParamValue{true}}});
  const TempFile log("cudnn_log.csv", generated_log(keys));
  const std::string& path = log.path();
  auto direct = h.make<Fa3Source>(keys);
  auto read = h.make<Fa3EventsSource>(with(keys, {{"path", ParamValue{path}}}));
  ASSERT_EQ(direct->cta_count(), read->cta_count());
  CtaProgram a, b;
  for (std::uint64_t cta = 0; cta < direct->cta_count(); ++cta) {
    direct->build(cta, a);
    read->build(cta, b);
    expect_same(a, b, direct->tensor_maps());
  }
}

}  // namespace
}  // namespace simfa::fa3
