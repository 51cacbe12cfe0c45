#include "fa3_config.h"

#include <cmath>
#include <sstream>

#include "simfa/error.h"

namespace simfa::fa3 {

namespace {

struct Model {
  const char* name;
  std::int64_t heads;
  std::int64_t kv_heads;
};
// Llama 3 attention (the paper's Table VII; Meta's model configs): 32 / 64 / 128 query heads,
// 8 KV heads, head dim 128.
constexpr Model kModels[] = {{"llama3-8b", 32, 8}, {"llama3-70b", 64, 8}, {"llama3-405b", 128, 8}};

// Coordinates are 32-bit: sequence lengths up to 2^30 keep every tile origin inside int32.
constexpr double kMaxSeqlen = 1 << 30;
constexpr double kMaxCount = 65535;
// cuDNN's exp step beside another WarpGroup's WGMMAs: validation/h200/attention/
// wgmma_contention_fadd_fmul_cudnn.csv, the four `cudnn` `both` rows (ss and rs, one and two
// WarpGroups), the step's rate while the WGMMAs run (tools/wgmma_contention_fit.py: 0.662 to
// 0.758 of 14.84-15.54 alone, 9.82-11.77), their mean 10.58 (docs/calibration.md §18, §27).
constexpr double kCudnnExpStepPerCycle = 10.58;
// A launch's first-wave cold start on the H200: the Proton trace of a one-wave Triton attention
// launch (validation/h200/traces/attn_1x4x512.chrome_trace.gz, 16 CTAs) has a CTA's first QK^T
// 2652 cycles later than the TTGIR route without it, and one-wave GEMMs of 64 CTAs lack about as
// much; launches of up to 8 CTAs do not (docs/calibration.md §21). cuDNN's are wide (a
// persistent CTA an SM, or a CTA a tile); no cuDNN trace separates its own.
constexpr std::int64_t kCudnnFirstWaveBubble = 2650;
// cuDNN's producer takes even a CTA's first tile from its atomic counter (ATOMG.E.ADD, then a
// SHFL.IDX of the result, then BAR.ARV 0x3) and loads nothing before the index is back. The
// warp-state samples on that SHFL (validation/h200/opmix/ attn1 12, attn2 11, s26_attn0 10,
// s26_attn1 10, s26_attn2 11, validation/h100/tilecost/sass0 16; one sample an SM every 2048
// cycles, of one of the 9 to 12 warps resident: the producer WarpGroup's three other warps exit
// early) give the producer's wait as samples x 2048 x warps / 132: 1396-2234 cycles with 9
// warps (median 1536, taken), 1862-2979 with 12. 132 CTAs' atomics on one counter just after
// the launch (docs/calibration.md §25; tools/device/atomic_tile.cu would time it, not run yet).
// Later tiles' indices are fetched a tile ahead and cost no wait.
constexpr std::int64_t kCudnnFirstIndexCycles = 1536;
// cuDNN's tile code a consumer warp runs besides its waits, from its SASS's samples
// (read_fa3_kernel says how): before Q's wait, and the epilogue at head dims 64 and 128.
constexpr std::int64_t kCudnnTileStartCycles = 260;
constexpr double kCudnnEpilogueCycles64 = 665;
constexpr double kCudnnEpilogueCycles128 = 936;
// Persistent grids: the most instructions the resident programs may hold (2 GiB of them).
constexpr std::uint64_t kMaxPersistentInstructions = std::uint64_t{1} << 27;

const char* scheduler_name(Fa3Scheduler s) {
  return s == Fa3Scheduler::kNone ? "none" : s == Fa3Scheduler::kStatic ? "static" : "dynamic";
}

const char* softmax_name(Fa3Softmax s) {
  return s == Fa3Softmax::kPipes ? "pipes" : "bubble";
}

std::string real_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string kib(std::int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB"
                           : std::to_string(bytes) + " bytes";
}

}  // namespace

void describe_fa3_keys(Schema& schema) {
  schema.string("model")
      .def("none")
      .choices({"none", "llama3-8b", "llama3-70b", "llama3-405b"})
      .doc("Llama 3 preset: heads 32 / 64 / 128, kv_heads 8, head_dim 128");
  schema.integer("batch").def(1).range(1, kMaxCount).doc("batch size");
  schema.integer("heads").def(0).range(0, kMaxCount).doc("query heads; 0: the model's");
  schema.integer("kv_heads")
      .def(0)
      .range(0, kMaxCount)
      .doc(
          "key/value heads (GQA: query head h reads KV head h / (heads / kv_heads)); 0: the "
          "model's, else heads");
  schema.integer("seqlen")
      .def(0)
      .range(0, kMaxSeqlen)
      .unit("tokens")
      .doc("sets seqlen_q and seqlen_k");
  schema.integer("seqlen_q")
      .def(0)
      .range(0, kMaxSeqlen)
      .unit("tokens")
      .doc("query sequence length (with seqlen_k, instead of seqlen)");
  schema.integer("seqlen_k")
      .def(0)
      .range(0, kMaxSeqlen)
      .unit("tokens")
      .doc("key/value sequence length");
  schema.integer("head_dim").def(128).range(16, 256).doc("head dimension, a multiple of 16");
  schema.integer("block_m").def(128).range(64, 192).doc(
      "Q rows per CTA: 64 per consumer WarpGroup (FA3's kBlockM)");
  schema.string("kernel")
      .def("fa3")
      .choices({"fa3", "cudnn"})
      .doc(
          "the kernel the auto keys describe: fa3 (FA3 as the paper models it: a CTA per tile, "
          "kBlockN 176, 2 stages, the softmax bubble) or cudnn (cuDNN's sm90 "
          "flash_fprop_wgmma_f16 knob 7: persistent grid, 64x128 per consumer, 2 Q, 2 K and 2 V "
          "slots and an O buffer, the softmax on the SM's pipes, the mask's work)");
  schema.integer("block_n").def(0).range(0, 256).doc(
      "K/V rows per step, a multiple of 16; 0: the kernel's (fa3: FA3's kBlockN for head dim "
      "128, 176, 128 when causal; cudnn: 128)");
  schema.integer("stages").def(0).range(0, 16).doc(
      "slots of the K ring and of the V ring; 0: the kernel's (fa3 2, cudnn 2)");
  schema.integer("q_stages")
      .def(0)
      .range(0, 8)
      .doc(
          "slots of the Q ring: with 2 a persistent CTA's producer loads the next tile's Q while "
          "the "
          "consumers finish this one; 0: the kernel's (fa3 1, cudnn 2: its SASS, "
          "docs/calibration.md §27)");
  schema.boolean("causal").def(false).doc("causal mask, bottom-right aligned as FA3 applies it");
  schema.string("scheduler")
      .def("auto")
      .choices({"auto", "none", "static", "dynamic"})
      .doc(
          "work tiles to CTAs: none (a CTA per tile), static (persistent, CTA c takes tiles c, "
          "c + ctas, ...), dynamic (persistent, the next tile to the CTA with the least work); "
          "auto: fa3 none, cudnn dynamic (its atomic tile counter)");
  schema.string("tile_order")
      .def("auto")
      .choices({"auto", "fa3", "ascending"})
      .doc(
          "the order the scheduler hands out work tiles: fa3 (Q tile fastest; under the causal "
          "mask heads fastest in L2 sections, the longest Q tile first) or ascending (Q tile "
          "fastest from the first, then head, then batch, causal or not); auto: fa3 fa3, cudnn "
          "ascending");
  schema.integer("ctas")
      .def(0)
      .range(0, 1 << 20)
      .unit("CTAs")
      .doc("persistent CTAs (static, dynamic); 0: gpu.sm_count (one a SM)");
  schema.string("softmax")
      .def("auto")
      .choices({"auto", "bubble", "pipes"})
      .doc(
          "bubble: one BUBBLE from the *_per_cycle throughputs (the paper's VI-B); pipes: "
          "compute BUBBLEs on the SM's shared pipes (docs/workloads.md); auto: fa3 bubble, "
          "cudnn pipes");
  schema.string("intra_wg_overlap")
      .def("auto")
      .choices({"auto", "true", "false"})
      .doc(
          "FA3's IntraWGOverlap: the softmax of S(n) runs while P(n+1) V is on the tensor core; "
          "false: S, softmax, P V of one tile in turn; auto: fa3 true, cudnn false");
  schema.boolean("pingpong")
      .def(true)
      .doc(
          "inter-WarpGroup ping-pong: the consumers take turns through named barriers (two or "
          "three consumers, head_dim <= 128)");
  schema.string("turn")
      .def("auto")
      .choices({"auto", "gemms", "exp2"})
      .doc(
          "what a consumer's ping-pong turn holds: gemms (FA3's warp_scheduler_barrier around S "
          "and P V's issue, with intra_wg_overlap) or exp2 (the softmax's exp2s, softmax = "
          "pipes only); auto: fa3 gemms, cudnn exp2 (gemms with softmax = bubble)");
  schema.string("op_counts")
      .def("auto")
      .choices({"auto", "fa3", "cudnn"})
      .doc(
          "softmax pipes: the work the phases charge: fa3 (an op a score, a row's rescale factor "
          "once) or cudnn (as cuDNN's SASS executes it, validation/h200/opmix/: the factor on each "
          "of a row's 4 threads, the max's combines after its shuffles, the -inf guards, the "
          "loop's integer work beside the GEMMs); auto: the kernel's");
  schema.string("o_rescale")
      .def("auto")
      .choices({"auto", "after_pv", "with_exp"})
      .doc(
          "softmax pipes: where O is rescaled and the row summed: after_pv (FA3's softmax.hpp: "
          "the row sum and P's conversion a phase after the exp2s, O x scale after the next P "
          "V) or with_exp (cuDNN's SASS: all three with the exp2s in one phase before P V; not "
          "the default while the SM's arithmetic beside the tensor core is not modelled, "
          "docs/calibration.md §17); auto: after_pv");
  schema.real("exp_step_per_cycle")
      .def(-1)
      .range(-1, 1024)
      .unit("scores/cycle")
      .doc(
          "softmax pipes: the most scores a cycle one consumer's exp phase reaches (its "
          "dependent chain: a latency floor of scores / this); 0: none; -1: the kernel's (fa3 0, "
          "cudnn 10.58: its FMUL, FADD, MUFU.EX2, FADD a score in one WarpGroup beside another's "
          "WGMMAs, validation/h200/attention/wgmma_contention_fadd_fmul_cudnn.csv; 14.84 alone)");
  schema.integer("mask_ops")
      .def(-1)
      .range(-1, 64)
      .unit("ops/score")
      .doc(
          "softmax pipes: ALU ops per score of a KV tile the mask cuts (causal diagonal, "
          "seqlen_k's end); -1: the kernel's (fa3 0, cudnn 2: ISETP + FSEL)");
  schema.integer("scale_ops")
      .def(-1)
      .range(-1, 2)
      .unit("ops/score")
      .doc(
          "softmax pipes: FP32 ops per score for S x scale - max x scale: 1 when contracted into "
          "an FFMA, 2 as FMUL and FADD; -1: the kernel's (fa3 1, cudnn 2)");
  schema.real("reduce_cycles_per_element")
      .def(10)
      .range(0, 1000)
      .unit("cycles")
      .doc(
          "softmax pipes: the row max's latency per score a thread combines "
          "(docs/calibration.md §8)");
  schema.integer("producer_issue_cycles")
      .def(0)
      .range(0, 1 << 20)
      .unit("cycles")
      .doc("BUBBLE after each of the producer's TMA loads (no microbenchmark isolates it: 0)");
  schema.integer("first_wave_bubble")
      .def(-1)
      .range(-1, 1 << 20)
      .unit("cycles")
      .doc(
          "BUBBLE at the start of every WarpGroup of a CTA of the launch's first wave (CTAs 0 to "
          "SMs x the CTAs an SM holds - 1; a persistent grid: every CTA, once): the cold start "
          "of a launch's first CTAs; -1: the kernel's (cudnn 2650, the H200's, "
          "docs/calibration.md §21; fa3 0, as the paper's model)");
  schema.integer("first_index_cycles")
      .def(-1)
      .range(-1, 1 << 20)
      .unit("cycles")
      .doc(
          "scheduler = dynamic: a CTA's first tile index from the atomic counter, a BUBBLE of the "
          "producer before its first load; -1: the kernel's (cudnn 1536, its SASS's samples, "
          "docs/calibration.md §25; fa3 0: FA3's CTA c starts on tile c)");
  schema.integer("tile_start_cycles")
      .def(-1)
      .range(-1, 1 << 20)
      .unit("cycles")
      .doc(
          "a consumer's code at each tile's start before Q's wait (its accumulators zeroed, the "
          "tile index decoded), a BUBBLE; -1: the kernel's (cudnn 260, its SASS's samples, "
          "docs/calibration.md §27; fa3 0)");
  schema.integer("epilogue_cycles")
      .def(-1)
      .range(-1, 1 << 20)
      .unit("cycles")
      .doc(
          "softmax pipes: the least a consumer's epilogue lasts (O / rowsum, its conversion, the "
          "stores to shared memory and the O store's issue: issue- and latency-bound code); -1: "
          "the kernel's (cudnn 665 at head_dim 64 to 936 at 128, linear in head_dim, its SASS's "
          "samples, docs/calibration.md §27; fa3 0: its FP32 and ALU work alone)");
  schema.string("tile_barrier")
      .def("auto")
      .choices({"auto", "true", "false"})
      .doc(
          "a persistent grid's tile hand-off through named barriers: at each tile's end the "
          "consumers wait for the producer's next tile index (after their O store), at each "
          "tile's start for each other (after Q's wait), so their turns restart together; auto: "
          "cudnn true (its SASS: BAR.SYNC 0x3 of 288 threads, BAR.SYNC 0x6 of 256, "
          "docs/calibration.md §25), fa3 false");
  schema.integer("exp2_per_cycle")
      .def(16)
      .range(1, 1 << 20)
      .unit("ops/cycle")
      .doc("exp2 (MUFU) throughput per SM; the paper's VI-B value for H800");
  schema.integer("fp32_per_cycle")
      .def(128)
      .range(1, 1 << 20)
      .unit("ops/cycle")
      .doc("FP32 compare / add / multiply-add throughput of a WarpGroup's 128 threads (VI-B)");
  schema.integer("cvt_per_cycle")
      .def(256)
      .range(1, 1 << 20)
      .unit("ops/cycle")
      .doc("FP32 -> FP16 conversion throughput per SM (VI-B)");
}

Fa3Kernel read_fa3_kernel(const Params& params, const GpuConfig& gpu) {
  Fa3Shape s;
  const std::string& model = params.string("model");
  const Model* preset = nullptr;
  for (const Model& m : kModels)
    if (model == m.name) preset = &m;
  s.batch = params.integer("batch");
  s.heads = params.integer("heads") > 0 ? params.integer("heads") : preset ? preset->heads : 0;
  if (s.heads == 0)
    params.fail("heads",
                "missing heads: give heads, or model = llama3-8b, llama3-70b or llama3-405b");
  s.kv_heads = params.integer("kv_heads") > 0 ? params.integer("kv_heads")
               : preset                       ? preset->kv_heads
                                              : s.heads;
  if (s.heads % s.kv_heads != 0)
    params.fail("kv_heads", "heads (" + std::to_string(s.heads) +
                                ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) +
                                ")");

  const std::int64_t seqlen = params.integer("seqlen");
  s.seqlen_q = params.integer("seqlen_q");
  s.seqlen_k = params.integer("seqlen_k");
  if (seqlen > 0) {
    if (s.seqlen_q > 0 || s.seqlen_k > 0)
      params.fail(s.seqlen_q > 0 ? "seqlen_q" : "seqlen_k",
                  "seqlen sets both seqlen_q and seqlen_k; give seqlen, or seqlen_q and seqlen_k");
    s.seqlen_q = s.seqlen_k = seqlen;
  } else if (s.seqlen_q == 0 || s.seqlen_k == 0) {
    params.fail(s.seqlen_q > 0   ? "seqlen_q"
                : s.seqlen_k > 0 ? "seqlen_k"
                                 : "seqlen",
                s.seqlen_q == s.seqlen_k ? "missing seqlen (or seqlen_q and seqlen_k)"
                : s.seqlen_q == 0        ? "missing seqlen_q (seqlen_k is given)"
                                         : "missing seqlen_k (seqlen_q is given)");
  }

  s.head_dim = params.integer("head_dim");
  if (s.head_dim % kWgmmaK != 0)
    params.fail("head_dim", "head_dim = " + std::to_string(s.head_dim) +
                                " is not a multiple of 16, the K of one WGMMA");
  s.block_m = params.integer("block_m");
  if (s.block_m % kRowsPerConsumer != 0)
    params.fail("block_m", "block_m = " + std::to_string(s.block_m) +
                               " is not a multiple of 64: each consumer WarpGroup owns 64 rows");
  s.causal = params.boolean("causal");
  const bool cudnn = params.string("kernel") == "cudnn";
  // FA3's hopper/tile_size.h, head dim 128, 16-bit: kBlockN 176, or 128 under a causal mask.
  // cuDNN: the kernel name's 64x128xD tile (64 query rows a consumer, 128 keys a step).
  const std::int64_t default_block_n = cudnn ? 128 : s.causal ? 128 : 176;
  s.block_n = params.integer("block_n") > 0 ? params.integer("block_n") : default_block_n;
  if (s.block_n % kWgmmaK != 0)
    params.fail("block_n", "block_n = " + std::to_string(s.block_n) +
                               " is not a multiple of 16, the K of P V's WGMMAs");
  // cuDNN's rings (its SASS, validation/h200/opmix/attn0_sass.csv.gz and attn1, the producer's
  // loop; docs/calibration.md §27): the K and the V mbarriers and shared-memory slots alternate
  // between two (the stage index toggles 0, 1; the phase bit flips every second step), and so do
  // Q's (its mbarrier and slot index toggle once a tile: Q at 0xc00 and 0xc00 + one Q tile); O
  // is written (STSM) to a buffer after the rings. At D = 128 that is 3 KiB of mbarriers and
  // (2 x 128 + 2 x 2 x 128 + 128) x 128 x 2 = 229376 bytes, ncu's 232448 bytes of dynamic shared
  // memory (validation/h200/attention/ncu_attention_raw.csv), as three K and V slots and one Q
  // would be too.
  s.stages = params.integer("stages") > 0 ? params.integer("stages") : 2;
  s.q_stages = params.integer("q_stages") > 0 ? params.integer("q_stages") : cudnn ? 2 : 1;
  s.o_buffer = cudnn;

  // cuDNN's tile scheduler (its SASS, validation/h200/opmix/*_sass.csv.gz): every CTA takes each
  // of its tiles from an atomic counter (ATOMG.E.ADD: 132 + 2048 executions for the 2048 tiles
  // of attn0, 132 + 256 for the 256 of s26_attn0 and s26_attn1: one a tile and one a CTA that
  // finds none left), causal or not; the tile index decodes as Q tile = index mod the Q tiles,
  // then head, then batch, with the Q tile's row start = Q tile x 128 and its KV tiles up to
  // Q tile + 1 under the mask (`(row + 255) >> 7`): Q tiles in ascending order, the short causal
  // ones first. Without the mask the tiles are alike and the counter hands them out as the
  // static scheduler does.
  const std::string& scheduler = params.string("scheduler");
  s.scheduler = scheduler == "none"      ? Fa3Scheduler::kNone
                : scheduler == "static"  ? Fa3Scheduler::kStatic
                : scheduler == "dynamic" ? Fa3Scheduler::kDynamic
                : !cudnn                 ? Fa3Scheduler::kNone
                                         : Fa3Scheduler::kDynamic;
  const std::string& tile_order = params.string("tile_order");
  s.tile_order = tile_order == "ascending" || (tile_order == "auto" && cudnn)
                     ? Fa3TileOrder::kAscending
                     : Fa3TileOrder::kFa3;
  // ncu: cuDNN launches 132 CTAs of 384 threads on the H200's 132 SMs (ncu_attention_raw.csv).
  s.grid = params.integer("ctas") > 0 ? params.integer("ctas") : gpu.sm_count;
  const std::string& softmax = params.string("softmax");
  s.softmax =
      softmax == "pipes" || (softmax == "auto" && cudnn) ? Fa3Softmax::kPipes : Fa3Softmax::kBubble;
  // cuDNN's consumer loop (its SASS, validation/h200/opmix/*_sass.csv.gz) waits for S's
  // HGMMAs, runs the softmax, issues P V and waits for it before the next S, and puts its named
  // barriers around the exp2s (BAR.SYNC before the MUFU.EX2s, BAR.ARV after).
  const std::string overlap = params.string("intra_wg_overlap");
  s.intra_wg_overlap = overlap == "auto" ? !cudnn : overlap == "true";
  s.pingpong = params.boolean("pingpong");
  const std::string turn = params.string("turn");
  const bool pipes = s.softmax == Fa3Softmax::kPipes;
  if (turn == "exp2" && !pipes)
    params.fail("turn",
                "turn = exp2 takes turns on the softmax's exp2 phase, which softmax = "
                "bubble does not have: give softmax = pipes");
  s.turn = turn == "exp2" || (turn == "auto" && cudnn && pipes) ? Fa3Turn::kExp2 : Fa3Turn::kGemms;
  // The causal mask of one score: the column index against the row's limit (ISETP) and the
  // select of -inf (FSEL), 64 a cycle each on the ALU (softmax_micro.csv's where(), §8).
  s.mask_ops = params.integer("mask_ops") >= 0 ? params.integer("mask_ops") : cudnn ? 2 : 0;
  // FA3's softmax.hpp contracts the scale and the max into one FFMA; cuDNN's kernel issues an
  // FMUL and an FADD a score (ncu's SASS counts, validation/h200/opmix/opmix_summary.csv:
  // FMUL 1.55 and FADD 2.03 a score at D = 64, FFMA 0.03).
  s.scale_ops = params.integer("scale_ops") >= 0 ? params.integer("scale_ops") : cudnn ? 2 : 1;
  s.reduce_cycles_per_element = params.real("reduce_cycles_per_element");
  const std::string& o_rescale = params.string("o_rescale");
  s.o_rescale = o_rescale == "with_exp" ? Fa3ORescale::kWithExp : Fa3ORescale::kAfterPv;
  // One WarpGroup alone running cuDNN's exp step (an FMUL, an FADD, a MUFU.EX2 and an FADD a
  // score, tools/device/wgmma_contention.py `cudnn`) reaches 14.84 scores a cycle (14.86 in the
  // `rs` build), not the SFU's 16; beside another WarpGroup's WGMMAs, 10.58. In cuDNN's loop a
  // consumer's exp2 turn runs beside the other's S and P V (its stall samples: a turn of 780 and
  // 910 cycles at D = 64 and 128, 8192 / 10.58 = 774), so the floor is the rate beside the
  // WGMMAs; at 14.84 the model's consumers fall into step instead (docs/calibration.md §18).
  s.exp_step_per_cycle = params.real("exp_step_per_cycle") >= 0 ? params.real("exp_step_per_cycle")
                         : cudnn                                ? kCudnnExpStepPerCycle
                                                                : 0;
  const std::string& op_counts = params.string("op_counts");
  s.sass_counts = op_counts == "cudnn" || (op_counts == "auto" && cudnn);
  s.producer_issue_cycles = params.integer("producer_issue_cycles");
  s.first_wave_bubble = params.integer("first_wave_bubble") >= 0
                            ? params.integer("first_wave_bubble")
                        : cudnn ? kCudnnFirstWaveBubble
                                : 0;

  // cuDNN's SASS (validation/h200/opmix/*_sass.csv.gz, each tile's code): after its O store a
  // consumer waits at BAR.SYNC 0x3 (288 threads: both consumers and the producer's warp, which
  // arrives once its ATOMG has the next tile's index and the consumers have read the last one,
  // BAR.SYNC 0x2), reads the index from shared memory and arrives on 0x2; the next tile starts
  // with Q's mbarrier wait and BAR.SYNC 0x6 (256 threads: both consumers). FA3's
  // DynamicPersistentTileScheduler has the same pair (TileCountSmemFull / Empty) but not the
  // consumers' own barrier: off for kernel fa3, which models the paper's CTA-a-tile grid.
  s.first_index_cycles = params.integer("first_index_cycles") >= 0
                             ? params.integer("first_index_cycles")
                         : cudnn ? kCudnnFirstIndexCycles
                                 : 0;
  // cuDNN's tile code (its SASS's per-PC samples, validation/h200/opmix/attn1_sass.csv.gz,
  // D = 128, and attn0, D = 64: the instructions executed once a tile by each consumer warp; a
  // sample is 2048 cycles of one of the 9 resident warps, so a warp's cycles a tile are samples x
  // 9 x 2048 / (8 warps x tiles); docs/calibration.md §27). Before Q's wait: 73 and 56
  // instructions (the accumulators' CS2R, the index's decode) in 264 and 260 cycles. After the
  // last P V, besides the barrier waits: 201 and 132 instructions (O / rowsum's FMULs, F2FP,
  // STSM, the fences, the UTMASTG) in 936 and 665 cycles, 4.7 and 5.0 a warp instruction: issue
  // and fixed-latency stalls, not pipe throughput (the FMULs and F2FPs alone are 64 + 32 cycles
  // of the pipes at D = 128).
  s.tile_start_cycles = params.integer("tile_start_cycles") >= 0
                            ? params.integer("tile_start_cycles")
                        : cudnn ? kCudnnTileStartCycles
                                : 0;
  s.epilogue_cycles =
      params.integer("epilogue_cycles") >= 0 ? params.integer("epilogue_cycles")
      : cudnn                                ? static_cast<std::int64_t>(std::lround(
                                                   kCudnnEpilogueCycles64 + (kCudnnEpilogueCycles128 - kCudnnEpilogueCycles64) *
                                                                                static_cast<double>(s.head_dim - 64) / 64))
                                             : 0;
  if (s.epilogue_cycles < 0) s.epilogue_cycles = 0;  // a head dim far below 64
  const std::string& tile_barrier = params.string("tile_barrier");
  s.tile_barrier = tile_barrier == "true" || (tile_barrier == "auto" && cudnn);

  Fa3Throughputs u;
  u.exp2 = params.integer("exp2_per_cycle");
  u.fp32 = params.integer("fp32_per_cycle");
  u.cvt = params.integer("cvt_per_cycle");
  Fa3Kernel kernel(s, u);
  if (gpu.smem_per_sm_bytes > 0 && kernel.smem_bytes() > gpu.smem_per_sm_bytes)
    params.fail("stages", std::to_string(s.q_stages) + " x a " + std::to_string(s.block_m) +
                              "-row Q tile and stages = " + std::to_string(s.stages) + " of " +
                              std::to_string(s.block_n) + "-row K and V tiles (head_dim " +
                              std::to_string(s.head_dim) + ") need " + kib(kernel.smem_bytes()) +
                              " of shared memory; gpu.smem_per_sm is " +
                              kib(gpu.smem_per_sm_bytes));
  if (kernel.persistent()) {
    // Every persistent CTA is resident from the start, so the programs of all tiles are in
    // memory at once: per KV step each consumer's WGMMAs and about 16 other instructions, and
    // the producer's 4.
    const std::uint64_t per_step =
        kernel.consumers() * (kernel.qk_wgmmas() + kernel.pv_wgmmas() + 16) + 4;
    const std::uint64_t instructions = kernel.kv_steps() * per_step;
    if (instructions > kMaxPersistentInstructions)
      params.fail("scheduler",
                  "a persistent grid holds every tile's program at once: about " +
                      std::to_string(instructions * sizeof(Instruction) >> 20) +
                      " MiB of instructions for " + std::to_string(kernel.kv_steps()) +
                      " KV steps, over the " +
                      std::to_string(kMaxPersistentInstructions * sizeof(Instruction) >> 20) +
                      " MiB limit; give scheduler = none (a CTA a tile: memory bounded)");
  }
  return kernel;
}

std::string fa3_spec(const Fa3Kernel& kernel) {
  const Fa3Shape& s = kernel.shape();
  return "batch=" + std::to_string(s.batch) + ",heads=" + std::to_string(s.heads) +
         ",kv_heads=" + std::to_string(s.kv_heads) + ",seqlen_q=" + std::to_string(s.seqlen_q) +
         ",seqlen_k=" + std::to_string(s.seqlen_k) + ",head_dim=" + std::to_string(s.head_dim) +
         ",block_m=" + std::to_string(s.block_m) + ",block_n=" + std::to_string(s.block_n) +
         ",stages=" + std::to_string(s.stages) +
         (s.q_stages != 1 ? ",q_stages=" + std::to_string(s.q_stages) : "") +
         ",causal=" + (s.causal ? "true" : "false") +
         (s.tile_order == Fa3TileOrder::kAscending ? ",tile_order=ascending" : "") +
         (s.softmax == Fa3Softmax::kPipes ? ",softmax=pipes" : "") +
         (s.intra_wg_overlap ? "" : ",intra_wg_overlap=false") +
         (s.pingpong ? "" : ",pingpong=false") + (s.turn == Fa3Turn::kExp2 ? ",turn=exp2" : "") +
         (s.mask_ops != 0 ? ",mask_ops=" + std::to_string(s.mask_ops) : "") +
         (s.scale_ops != 1 ? ",scale_ops=" + std::to_string(s.scale_ops) : "") +
         (s.sass_counts ? ",op_counts=cudnn" : "") +
         (s.o_rescale == Fa3ORescale::kWithExp ? ",o_rescale=with_exp" : "") +
         (s.exp_step_per_cycle != 0 ? ",exp_step_per_cycle=" + real_text(s.exp_step_per_cycle)
                                    : "") +
         (s.producer_issue_cycles != 0
              ? ",producer_issue_cycles=" + std::to_string(s.producer_issue_cycles)
              : "") +
         (s.first_wave_bubble != 0 ? ",first_wave_bubble=" + std::to_string(s.first_wave_bubble)
                                   : "") +
         (s.tile_barrier ? ",tile_barrier=true" : "") +
         (s.tile_start_cycles != 0 ? ",tile_start_cycles=" + std::to_string(s.tile_start_cycles)
                                   : "") +
         (s.epilogue_cycles != 0 ? ",epilogue_cycles=" + std::to_string(s.epilogue_cycles) : "") +
         (s.first_index_cycles != 0 ? ",first_index_cycles=" + std::to_string(s.first_index_cycles)
                                    : "");
}

std::vector<std::pair<std::string, std::string>> fa3_parameters(const Fa3Kernel& kernel) {
  const Fa3Shape& s = kernel.shape();
  const Fa3Throughputs& u = kernel.throughputs();
  auto str = [](std::int64_t v) { return std::to_string(v); };
  return {
      {"batch", str(s.batch)},
      {"heads", str(s.heads)},
      {"kv_heads", str(s.kv_heads)},
      {"seqlen_q", str(s.seqlen_q)},
      {"seqlen_k", str(s.seqlen_k)},
      {"head_dim", str(s.head_dim)},
      {"block_m", str(s.block_m)},
      {"block_n", str(s.block_n)},
      {"stages", str(s.stages)},
      {"q_stages", str(s.q_stages)},
      {"causal", s.causal ? "true" : "false"},
      {"scheduler", scheduler_name(s.scheduler)},
      {"tile_order", s.tile_order == Fa3TileOrder::kAscending ? "ascending" : "fa3"},
      {"ctas", str(s.grid)},
      {"softmax", softmax_name(s.softmax)},
      {"intra_wg_overlap", s.intra_wg_overlap ? "true" : "false"},
      {"pingpong", s.pingpong ? "true" : "false"},
      {"turn", s.turn == Fa3Turn::kExp2 ? "exp2" : "gemms"},
      {"mask_ops", str(s.mask_ops)},
      {"scale_ops", str(s.scale_ops)},
      {"o_rescale", s.o_rescale == Fa3ORescale::kWithExp ? "with_exp" : "after_pv"},
      {"exp_step_per_cycle", real_text(s.exp_step_per_cycle)},
      {"op_counts", s.sass_counts ? "cudnn" : "fa3"},
      {"producer_issue_cycles", str(s.producer_issue_cycles)},
      {"first_wave_bubble", str(s.first_wave_bubble)},
      {"tile_barrier", s.tile_barrier ? "true" : "false"},
      {"first_index_cycles", str(s.first_index_cycles)},
      {"tile_start_cycles", str(s.tile_start_cycles)},
      {"epilogue_cycles", str(s.epilogue_cycles)},
      {"exp2_per_cycle", str(u.exp2)},
      {"fp32_per_cycle", str(u.fp32)},
      {"cvt_per_cycle", str(u.cvt)},
      {"grid", str(kernel.m_blocks()) + "x" + str(s.heads) + "x" + str(s.batch)},
      {"tiles", std::to_string(kernel.tile_count())},
      {"cta_count", std::to_string(kernel.cta_count())},
      {"consumers", str(kernel.consumers())},
      {"softmax_bubble", str(kernel.softmax_bubble())},
      {"epilogue_bubble", str(kernel.epilogue_bubble())},
      {"qk_wgmmas", str(kernel.qk_wgmmas())},
      {"pv_wgmmas", str(kernel.pv_wgmmas())},
      {"smem_bytes", str(kernel.smem_bytes())},
  };
}

}  // namespace simfa::fa3
