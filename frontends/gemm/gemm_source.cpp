#include "gemm_source.h"

#include <charconv>

#include "simfa/error.h"

namespace simfa::gemm {

namespace {

// Coordinates are 32-bit; dimensions up to 2^30 keep every tile origin (and the edge tiles'
// overhang) inside int32.
constexpr double kMaxDimension = 1 << 30;
constexpr std::uint32_t kMaxRegistersPerThread = 255;

std::string hex(Addr a) {
  char buffer[19] = "0x";
  const auto end = std::to_chars(buffer + 2, buffer + sizeof buffer, a, 16).ptr;
  return std::string(buffer, end);
}

std::string kib(std::int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + " KiB"
                           : std::to_string(bytes) + " bytes";
}

template <typename E, std::size_t N>
E choice(const Params& params, const char* key, const char* const (&names)[N]) {
  const std::string& v = params.string(key);
  for (std::size_t i = 0; i < N; ++i)
    if (v == names[i]) return static_cast<E>(i);
  params.fail(key, std::string("internal: unexpected ") + key + " '" + v + "'");
}

constexpr const char* kRasterNames[] = {"row_major", "grouped"};
constexpr const char* kDtypeNames[] = {"fp16", "bf16", "fp8"};
constexpr const char* kBLayoutNames[] = {"nk", "kn"};

/// TMA's global strides (bytes between rows) must be multiples of 16 (cuTensorMapEncodeTiled).
void check_row_bytes(const Params& params, const char* key, std::int64_t elements,
                     std::uint32_t bytes, const char* tensor) {
  if (elements * bytes % 16 != 0)
    params.fail(key, std::string(key) + " = " + std::to_string(elements) + " makes " + tensor +
                         "'s rows " + std::to_string(elements * bytes) +
                         " bytes long; TMA needs row strides that are multiples of 16 bytes");
}

GemmShape read_shape(const Params& params, const GpuConfig& gpu) {
  GemmShape s;
  s.m = params.integer("m");
  s.n = params.integer("n");
  s.k = params.integer("k");
  s.block_m = params.integer("block_m");
  s.block_n = params.integer("block_n");
  s.block_k = params.integer("block_k");
  s.stages = params.integer("stages");
  s.warp_specialized = params.boolean("warp_specialized");
  s.warps = params.integer("warps");
  s.raster = choice<Raster>(params, "raster", kRasterNames);
  s.group_m = params.integer("group_m");
  s.dtype = choice<Dtype>(params, "dtype", kDtypeNames);
  s.b_layout = choice<BLayout>(params, "b_layout", kBLayoutNames);
  s.prologue_bubble = static_cast<std::uint32_t>(params.integer("prologue_bubble"));
  s.per_iteration_bubble = static_cast<std::uint32_t>(params.integer("per_iteration_bubble"));
  s.mbarrier_init_cycles = static_cast<std::uint32_t>(params.integer("mbarrier_init_cycles"));
  s.tma_store_wait_bytes_per_cycle = params.real("tma_store_wait_bytes_per_cycle");
  s.wgmma_serialization = params.string("wgmma_serialization");
  const std::uint32_t e = element_bytes(s.dtype);

  if (s.block_m % kWgmmaM != 0)
    params.fail("block_m", "block_m = " + std::to_string(s.block_m) +
                               " is not a multiple of 64, the M of one WGMMA instruction");
  if (s.warps % kWarpsPerWarpGroup != 0)
    params.fail("warps", "warps = " + std::to_string(s.warps) +
                             " is not a multiple of 4: WGMMA is issued by whole WarpGroups");
  if (s.warp_specialized && s.warps != kWarpsPerWarpGroup)
    params.fail("warps", "warps = " + std::to_string(s.warps) +
                             " with warp_specialized = true: warps sets the non-warp-specialized "
                             "kernel; the warp-specialized one has a producer and 1 or 2 "
                             "consumer WarpGroups");
  if (!s.warp_specialized && s.warps % kWarpsPerWarpGroup == 0 && s.block_m % kWgmmaM == 0 &&
      s.block_n % 8 == 0) {
    // Triton's split of the warps (triton_warps_per_cta): each WarpGroup's rows must be whole
    // 64-row WGMMAs and its columns a multiple of 8.
    const WarpsPerCta w = triton_warps_per_cta(s.block_m, s.warps);
    const std::int64_t rows = s.block_m / (w.m / kWarpsPerWarpGroup), cols = s.block_n / w.n;
    if (rows % kWgmmaM != 0 || s.block_n % w.n != 0 || cols % 8 != 0)
      params.fail("warps", "warps = " + std::to_string(s.warps) + " splits a " +
                               std::to_string(s.block_m) + " x " + std::to_string(s.block_n) +
                               " tile as Triton does, warpsPerCTA = [" + std::to_string(w.m) +
                               ", " + std::to_string(w.n) + "]: WarpGroups of " +
                               std::to_string(rows) + " x " + std::to_string(cols) +
                               ", which must be a multiple of 64 x 8");
  }
  if (s.raster == Raster::kRowMajor && s.group_m != kDefaultGroupRows)
    params.fail("group_m", "group_m = " + std::to_string(s.group_m) +
                               " sets raster = \"grouped\"; row_major takes the tiles row by "
                               "row (Triton's GROUP_SIZE_M = 1)");
  if (s.block_n % 8 != 0)
    params.fail("block_n", "block_n = " + std::to_string(s.block_n) +
                               " is not a multiple of 8, the N granularity of WGMMA");
  if (s.block_k % wgmma_k(s.dtype) != 0)
    params.fail("block_k", "block_k = " + std::to_string(s.block_k) + " is not a multiple of " +
                               std::to_string(wgmma_k(s.dtype)) + ", the K of one " +
                               params.string("dtype") + " WGMMA instruction");
  if (s.dtype == Dtype::kFp8 && s.b_layout == BLayout::kKN)
    params.fail("b_layout",
                "b_layout = \"kn\" with dtype = \"fp8\": 8-bit WGMMA reads B only "
                "K-major from shared memory; use b_layout = \"nk\"");
  check_row_bytes(params, "k", s.k, e, "A");
  if (s.b_layout == BLayout::kNK)
    check_row_bytes(params, "k", s.k, e, "B");
  else
    check_row_bytes(params, "n", s.n, e, "B");
  check_row_bytes(params, "n", s.n, kOutputBytes, "C");

  const GemmKernel probe(s);
  const std::uint32_t limit =
      s.warp_specialized ? kConsumerRegistersPerThread : kMaxRegistersPerThread;
  if (probe.accumulator_registers() + kBaseRegistersPerThread > limit)
    params.fail("block_n", "a " + std::to_string(s.block_m) + " x " + std::to_string(s.block_n) +
                               " tile needs " + std::to_string(probe.accumulator_registers()) +
                               " accumulator registers per thread in each of " +
                               std::to_string(probe.consumers()) + " WarpGroup(s), plus " +
                               std::to_string(kBaseRegistersPerThread) + ", above the " +
                               std::to_string(limit) + " a " +
                               (s.warp_specialized ? "consumer WarpGroup has" : "thread can hold") +
                               "; use a smaller block_m or block_n");
  if (gpu.smem_per_sm_bytes > 0 && probe.smem_bytes() > gpu.smem_per_sm_bytes)
    params.fail("stages",
                "stages = " + std::to_string(s.stages) + " of " + std::to_string(s.block_m) + "x" +
                    std::to_string(s.block_k) + " A and " + std::to_string(s.block_n) + "x" +
                    std::to_string(s.block_k) + " B tiles " +
                    (s.warp_specialized ? "plus the C tile" : "and their mbarriers") + " need " +
                    kib(probe.smem_bytes()) + " of shared memory; gpu.smem_per_sm is " +
                    kib(gpu.smem_per_sm_bytes));

  // Base addresses: given, or each tensor after the previous one.
  Addr next = kFirstTensorBase;
  auto place = [&](const char* key, std::uint64_t bytes) {
    auto base = static_cast<Addr>(params.integer(key));
    if (base % 16 != 0)
      params.fail(key, std::string(key) + " = " + hex(base) +
                           " is not 16-byte aligned, as TMA requires of a tensor's address");
    if (base == 0) base = next;
    next = next_tensor_base(base, bytes);
    return base;
  };
  const auto mk = static_cast<std::uint64_t>(s.m * s.k);
  s.a_base = place("a_base", mk * e);
  s.b_base = place("b_base", static_cast<std::uint64_t>(s.k * s.n) * e);
  s.c_base = place("c_base", static_cast<std::uint64_t>(s.m * s.n) * kOutputBytes);
  return s;
}

}  // namespace

void GemmSource::describe(Schema& schema) {
  schema.integer("m").required().range(1, kMaxDimension).unit("elements").doc("rows of A and C");
  schema.integer("n").required().range(1, kMaxDimension).unit("elements").doc("columns of B and C");
  schema.integer("k")
      .required()
      .range(1, kMaxDimension)
      .unit("elements")
      .doc("the reduction dimension");
  schema.integer("block_m")
      .def(128)
      .range(64, 256)
      .unit("elements")
      .doc("tile rows per CTA, a multiple of 64 (WGMMA's M)");
  schema.integer("block_n")
      .def(128)
      .range(8, 256)
      .unit("elements")
      .doc("tile columns per CTA, a multiple of 8; one WGMMA covers them (N <= 256)");
  schema.integer("block_k")
      .def(64)
      .range(16, 256)
      .unit("elements")
      .doc("k-tile: A and B columns per pipeline stage, a multiple of WGMMA's K (16; 32 for fp8)");
  // triton.Config's default num_stages (Triton's Python API reference).
  schema.integer("stages").def(3).range(2, 64).doc(
      "ring slots of A and B k-tiles (Triton's default num_stages = 3)");
  schema.integer("warps").def(4).range(4, 16).unit("warps").doc(
      "warps of the non-warp-specialized kernel (Triton's num_warps, a multiple of 4): warps / 4 "
      "WarpGroups share the tile's rows");
  schema.boolean("warp_specialized")
      .def(false)
      .doc(
          "false: one WarpGroup loads and multiplies (the paper's section V-B kernel); true: a "
          "producer WarpGroup and 1 or 2 consumers (CUTLASS's cooperative kernel)");
  schema.string("raster")
      .def("row_major")
      .choices({"row_major", "grouped"})
      .doc("CTA order over the tiles: row by row, or Triton's groups of group_m tile rows");
  // GROUP_SIZE_M of Triton's matmul tutorial.
  schema.integer("group_m")
      .def(kDefaultGroupRows)
      .range(1, kMaxDimension)
      .unit("tiles")
      .doc("tile rows per group of raster = \"grouped\" (Triton's GROUP_SIZE_M)");
  schema.string("dtype")
      .def("fp16")
      .choices({"fp16", "bf16", "fp8"})
      .doc("A and B element type; C is 2-byte (fp16 or bf16)");
  schema.string("b_layout")
      .def("nk")
      .choices({"nk", "kn"})
      .doc("B stored N x K (K contiguous) or K x N (N contiguous)");
  schema.integer("a_base").def(0).min(0).unit("address").doc(
      "A's global address; 0: placed automatically (docs/workloads.md)");
  schema.integer("b_base").def(0).min(0).unit("address").doc("B's global address; 0: after A");
  schema.integer("c_base").def(0).min(0).unit("address").doc("C's global address; 0: after B");
  schema.string("wgmma_serialization")
      .def("auto")
      .choices({"auto", "true", "false"})
      .doc(
          "whether each WGMMA waits for the one before it, as ptxas makes them when the wgmma "
          "pipeline lacks registers: auto in the Triton kernel when one instruction's "
          "accumulator holds 128 registers a thread or more (the 128x256 tile with 8 warps), "
          "never in the warp-specialized one (docs/workloads.md)");
  schema.integer("prologue_bubble")
      .def(0)
      .range(0, 4294967295.0)
      .unit("cycles")
      .doc(
          "frontend calibration: cycles at the start of every WarpGroup (the paper's V-B3 fit on "
          "H800: 4314)");
  schema.integer("per_iteration_bubble")
      .def(0)
      .range(0, 4294967295.0)
      .unit("cycles")
      .doc(
          "frontend calibration: cycles at the start of each k-tile iteration (the paper's V-B3 "
          "fit on H800: 330 per block_k = 64)");
  // The TTGIR route's defaults for the same kernel (frontends/ttgir/ttgir_source.cpp, measured by
  // the %clock64 probe of docs/calibration.md §30); tests/frontends/gemm_ttgir_equivalence_test
  // holds the two routes to the same program with both at their defaults.
  schema.integer("mbarrier_init_cycles")
      .def(177)
      .range(0, 4294967295.0)
      .unit("SM cycles")
      .doc(
          "Triton's kernel (warp_specialized = false): cycles every WarpGroup waits at each of "
          "its `stages` mbarrier inits before the first copy (the init and the CTA barrier after "
          "it; docs/calibration.md §30); 0: free");
  schema.real("tma_store_wait_bytes_per_cycle")
      .def(36.0)
      .range(0, 1e6)
      .unit("B/cycle")
      .doc(
          "Triton's kernel (warp_specialized = false): the rate at which the WarpGroup that "
          "issued the C tile's TMA store waits for its bytes to leave shared memory "
          "(cp.async.bulk.wait_group.read; docs/calibration.md §30); 0: the wait is free");
}

GemmSource::GemmSource(const BuildContext& context)
    : kernel_(read_shape(context.params, context.gpu)) {}

void GemmSource::build(std::uint64_t index, CtaProgram& out) {
  if (index >= cta_count())
    throw Error("internal: CTA " + std::to_string(index) + " requested from a grid of " +
                std::to_string(cta_count()));
  kernel_.build(index, out);
}

std::vector<std::pair<std::string, std::string>> GemmSource::parameters() const {
  const GemmShape& s = kernel_.shape();
  auto str = [](std::int64_t v) { return std::to_string(v); };
  return {
      {"m", str(s.m)},
      {"n", str(s.n)},
      {"k", str(s.k)},
      {"block_m", str(s.block_m)},
      {"block_n", str(s.block_n)},
      {"block_k", str(s.block_k)},
      {"stages", str(s.stages)},
      {"warp_specialized", s.warp_specialized ? "true" : "false"},
      {"warps", str(s.warps)},
      {"raster", kRasterNames[static_cast<int>(s.raster)]},
      {"group_m", str(s.group_m)},
      {"dtype", kDtypeNames[static_cast<int>(s.dtype)]},
      {"b_layout", kBLayoutNames[static_cast<int>(s.b_layout)]},
      {"a_base", hex(s.a_base)},
      {"b_base", hex(s.b_base)},
      {"c_base", hex(s.c_base)},
      {"prologue_bubble", str(s.prologue_bubble)},
      {"per_iteration_bubble", str(s.per_iteration_bubble)},
      {"mbarrier_init_cycles", str(s.mbarrier_init_cycles)},
      {"tma_store_wait_bytes_per_cycle", std::to_string(s.tma_store_wait_bytes_per_cycle)},
      {"wgmma_serialization", kernel_.serialized_wgmma() ? "true" : "false"},
      {"grid", str(kernel_.tiles_m()) + "x" + str(kernel_.tiles_n())},
      {"cta_count", std::to_string(kernel_.cta_count())},
      {"k_tiles", str(kernel_.k_tiles())},
      {"consumers", str(kernel_.consumers())},
      {"wgmmas_per_k_tile", str(kernel_.wgmmas_per_k_tile())},
      {"smem_bytes", str(kernel_.smem_bytes())},
      {"epilogue_alu_elements", str(kernel_.epilogue_work().alu)},
  };
}

}  // namespace simfa::gemm
