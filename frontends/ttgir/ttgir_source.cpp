#include "ttgir_source.h"

#include "launch_args.h"

namespace simfa::ttgir {

namespace {

std::string dims(const std::array<std::uint64_t, 3>& g) {
  return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

}  // namespace

void TtgirSource::describe(Schema& schema) {
  schema.string("file").def("").doc(
      "static route: the TTGIR file to lower for every CTA of `grid`, no GPU run");
  schema.string("trace").def("").doc(
      "trace route: Proton chrome trace of the instrumented kernel (.chrome_trace or .json, "
      "optionally gzip-compressed)");
  schema.string("ttgir").def("").doc(
      "trace route: the TTGIR the trace was made from (as dumped, or instrumented)");
  schema.string("grid").def("").doc(
      "launch grid X[xYxZ]; required by the static route, the trace route defaults to the "
      "trace's CTA count");
  schema.string("args").def("").doc(
      "kernel arguments, ';'-separated: scalars (M=4096) and per descriptor NAME.shape=AxB "
      "(required when it is loaded), NAME.strides=AxB (elements; default row-major), "
      "NAME.base=ADDR (docs/ttgir.md)");
  schema.integer("prologue_bubble")
      .def(0)
      .min(0)
      .unit("SM cycles")
      .doc(
          "fixed cycles at the start of every WarpGroup: the prologue/epilogue work no scope "
          "records (calibration, docs/ttgir.md)");
  // The H200's Proton trace of a one-wave attention launch (validation/h200/traces/
  // attn_1x4x512.chrome_trace.gz, 16 CTAs, warp 0) puts a CTA's first QK^T WGMMA 2652 cycles
  // later than this route does, with the K/V wait and the KV steps after it in agreement; GEMMs
  // of 1 to 8 CTAs (gemm_128x128x512.chrome_trace, gemm_suite.csv) do not pay it. Off until a law
  // of the launch's width says who does (docs/calibration.md §21); 2650 is the trace's.
  schema.integer("first_wave_bubble")
      .def(0)
      .min(0)
      .unit("SM cycles")
      .doc(
          "static route: cycles at the start of every WarpGroup of a CTA of the launch's first "
          "wave (CTAs 0 to SMs x the CTAs an SM holds - 1), after prologue_bubble: the cold start "
          "of a launch's first CTAs (docs/calibration.md §21)");
  // Measured per CTA by %clock64 stamps of the timed Triton attention kernel on the H100
  // (validation/h100/attention_phases/attention_phases.csv; tools/attention_phases.py): from Q's
  // arrival to the loop's top, where the SASS has the K/V mbarriers' inits (SYNCS.EXCH.64, each
  // with a BAR.SYNC) and the prologue's copies, 696 cycles with 4 inits (128x128, 2 stages), 1111
  // with 6 (128x64, 8 warps, 3 stages), 1018 with 6 (128x64, 4 warps): 2825 / 16 = 177 an init
  // (docs/calibration.md §30). The default since §30's validation: attention_triton 6.2% ->
  // 5.0% event, the GEMM subset better too.
  schema.integer("mbarrier_init_cycles")
      .def(177)
      .min(0)
      .unit("SM cycles")
      .doc(
          "static route: cycles every WarpGroup waits at each ttng.init_barrier (the mbarrier's "
          "init and the CTA barrier after it; docs/calibration.md §30); 0: free");
  // Measured likewise: from the last P V's result to the end of the O store's wait (the
  // division, the tile into shared memory, the UTMASTG and its cp.async.bulk.wait_group.read),
  // 1713 cycles (128x64, 8 warps), 1974 (4 warps), 1916 (128x128) where this route charged 807,
  // 1026 and 1156 and no wait: 32 KiB in the 906, 948 and 760 cycles more, 36 B a cycle (mean
  // 871; docs/calibration.md §30). The GEMMs' store phase (gemm_phases.csv.gz: 690, 1268 and
  // 1370 cycles for 16, 32 and 64 KiB) is not one rate; see §30.
  schema.real("tma_store_wait_bytes_per_cycle")
      .def(36.0)
      .range(0, 1e6)
      .unit("B/cycle")
      .doc(
          "static route: the rate at which ttng.async_tma_store_wait (pendings 0) drains the TMA "
          "stores issued before it, in the issuing WarpGroup (docs/calibration.md §30); 0: the "
          "wait is free");
  schema.integer("per_iteration_bubble")
      .def(0)
      .min(0)
      .unit("SM cycles")
      .doc(
          "cycles added to every iteration of a loop that holds a warp_group_dot (calibration, "
          "docs/ttgir.md)");
  schema.integer("registers_per_thread")
      .def(0)
      .range(0, 255)
      .unit("registers")
      .doc("registers a thread holds; 0: the TTGIR's actualRegisters, else accumulators + 40");
  // Calibrated on the H200's row reductions of an accumulator tile (validation/h200/attention/
  // softmax_micro.csv, modes maxred and sumred; docs/calibration.md §8).
  // 13 with fuse_reductions (docs/calibration.md §20's fit on softmax_micro), the default since
  // §30.
  schema.real("reduce_cycles_per_element")
      .def(13.0)
      .range(0, 1e4)
      .unit("SM cycles")
      .doc(
          "least cycles a row reduction (tt.reduce, tt.scan) takes per element a thread combines: "
          "its dependent combine chain, beyond the pipe throughput (docs/ttgir.md §4)");
  // ptxas interleaves a row sum with the exp2s that produce its elements (validation/h200/
  // attention/ttgir/softmax_micro_softmax_*.sass.gz and attn_fwd_*.sass.gz: an FADD after each
  // MUFU.EX2, the shuffles after the last). With it (and the reductions refitted,
  // reduce_cycles_per_element = 13) the softmax microbenchmarks and the long Triton kernels come
  // closer (docs/calibration.md §20); the short ones, which it left too fast, come right with the
  // mbarrier inits and the store's wait (§30), so it is on since §30.
  schema.boolean("fuse_reductions")
      .def(true)
      .doc(
          "a row reduction (tt.reduce) of a tensor the open compute phase produced joins that "
          "phase, which then lasts at least the reduction's latency, instead of a phase after it "
          "(docs/ttgir.md §4; calibrated with reduce_cycles_per_element = 13)");
  schema.boolean("triton_barriers")
      .def(true)
      .doc(
          "add the CTA barriers Triton's shared-memory barrier pass inserts below the TTGIR: "
          "before each TMA copy (loads and stores) and each mbarrier wait (docs/ttgir.md §4)");
  schema.string("wgmma_serialization")
      .def("auto")
      .choices({"auto", "true", "false"})
      .doc(
          "whether each WGMMA waits for the one before it, as ptxas makes them when the wgmma "
          "pipeline lacks registers: auto when one instruction's accumulator holds 128 registers "
          "a thread or more (m64n256 in fp32; docs/ttgir.md §4)");
  schema.string("unknown_ops")
      .def("reject")
      .choices({"reject", "bubble"})
      .doc(
          "an op outside the lowered subset: reject it (line:col), or charge it as a BUBBLE at "
          "the ALU rate and list it in the workload parameters");
  schema.string("lost_events")
      .def("reject")
      .choices({"reject", "fill"})
      .doc(
          "trace route, a warp whose 256-record Proton buffer overflowed: reject the trace, or "
          "take "
          "the lost first scopes from the static lowering when the kept ones are its last ones");
  schema.integer("max_instructions_per_cta")
      .def(1 << 24)
      .range(1, 1 << 28)
      .unit("instructions")
      .doc("bound on one CTA's instructions and loop iterations: stops a runaway loop");
}

TtgirSource::TtgirSource(const BuildContext& context) {
  const Params& params = context.params;
  const std::string& file = params.string("file");
  const std::string& trace = params.string("trace");
  const std::string& ttgir = params.string("ttgir");
  if (file.empty() == trace.empty())
    params.fail(file.empty() ? "trace" : "file",
                "give either file=K.ttgir (static route) or trace=T.chrome_trace with "
                "ttgir=K.ttgir (trace route)");
  if (!trace.empty() && ttgir.empty())
    params.fail("trace", "the trace route needs ttgir=K.ttgir, the TTGIR the trace was made from");
  if (!file.empty() && !ttgir.empty())
    params.fail("ttgir", "ttgir= names the TTGIR of a trace; the static route takes file= alone");

  const std::string& source = trace.empty() ? file : ttgir;
  const char* source_key = trace.empty() ? "file" : "ttgir";
  doc_ = std::make_unique<MlirDocument>();
  read_mlir_file(source, *doc_, params.where(source_key), "TTGIR file");

  LoweringOptions options;
  options.prologue_bubble = static_cast<std::uint32_t>(params.integer("prologue_bubble"));
  options.per_iteration_bubble = static_cast<std::uint32_t>(params.integer("per_iteration_bubble"));
  options.first_wave_bubble = static_cast<std::uint32_t>(params.integer("first_wave_bubble"));
  options.registers_per_thread = static_cast<std::uint32_t>(params.integer("registers_per_thread"));
  options.mbarrier_init_cycles = static_cast<std::uint32_t>(params.integer("mbarrier_init_cycles"));
  options.tma_store_wait_bytes_per_cycle = params.real("tma_store_wait_bytes_per_cycle");
  if (!trace.empty()) {  // the trace's times hold both
    options.mbarrier_init_cycles = 0;
    options.tma_store_wait_bytes_per_cycle = 0;
  }
  options.costs.reduce_cycles_per_element = params.real("reduce_cycles_per_element");
  options.costs.fuse_reductions = params.boolean("fuse_reductions");
  options.costs.triton_barriers = params.boolean("triton_barriers");
  options.costs.unknown_as_bubble = params.string("unknown_ops") == "bubble";
  options.wgmma_serialization = params.string("wgmma_serialization");
  options.max_instructions = static_cast<std::uint64_t>(params.integer("max_instructions_per_cta"));
  kernel_ = std::make_unique<KernelProgram>(*doc_, options.costs);

  std::array<std::uint64_t, 3> grid{1, 1, 1};
  if (!trace.empty())
    trace_ = std::make_unique<ProtonTrace>(read_proton_trace(trace, params.where("trace")));
  if (!params.string("grid").empty()) {
    std::string why;
    if (!parse_grid(params.string("grid"), grid, why))
      params.fail("grid", "grid = '" + params.string("grid") + "': " + why);
  } else if (trace_) {
    grid[0] = trace_->cta_count;
  } else {
    params.fail("file", "the static route needs grid=X[xYxZ]");
  }
  Launch launch = read_launch(*kernel_, params, "args", grid);
  maps_ = std::move(launch.maps);
  lowering_ = std::make_unique<CtaLowering>(*kernel_, std::move(launch.config), maps_, options);

  CtaProgram first;
  if (trace_) {
    translation_ = std::make_unique<TraceTranslation>(*kernel_, *trace_, cta_count(),
                                                      params.string("lost_events") == "fill");
    // The trace is small next to a simulation: check every CTA against it now, so a mismatch
    // stops the run before it starts.
    CtaProgram p;
    for (std::uint64_t c = 0; c < cta_count(); ++c) build(c, c == 0 ? first : p);
  } else {
    // CTA 0 describes the workload (and, as every CTA holds what it holds, the first wave's
    // size; built again with its first-wave bubble when there is one); the last CTA holds the
    // grid's edge tiles.
    build(0, first);
    first_wave_ = first_wave_ctas(first, context.gpu, cta_count());
    lowering_->set_first_wave(first_wave_);
    if (options.first_wave_bubble > 0) build(0, first);
    if (cta_count() > 1) {
      CtaProgram last;
      build(cta_count() - 1, last);
    }
  }

  parameters_.emplace_back("route", trace_ ? "trace" : "static");
  parameters_.emplace_back(trace_ ? "ttgir" : "file", source);
  if (trace_) {
    parameters_.emplace_back("trace", trace);
    parameters_.emplace_back("trace.events", std::to_string(trace_->events.size()));
    parameters_.emplace_back("trace.unrecorded_warpgroups",
                             std::to_string(translation_->unrecorded_warpgroups()));
    parameters_.emplace_back("trace.filled_scopes", std::to_string(translation_->filled_scopes()));
  }
  parameters_.emplace_back("kernel", kernel_->kernel_name);
  parameters_.emplace_back("grid", dims(grid));
  parameters_.emplace_back("cta_count", std::to_string(cta_count()));
  if (!params.string("args").empty()) parameters_.emplace_back("args", params.string("args"));
  parameters_.emplace_back("num_warps", std::to_string(kernel_->num_warps));
  parameters_.emplace_back("partitions", std::to_string(kernel_->partitions.size()));
  parameters_.emplace_back("sites", std::to_string(kernel_->sites.size()));
  std::string maps;
  for (const TensorMap& m : maps_) maps += (maps.empty() ? "" : ",") + m.name;
  parameters_.emplace_back("tensor_maps", maps);
  std::string unknown;
  for (const std::string& u : kernel_->unknown_ops) unknown += (unknown.empty() ? "" : "; ") + u;
  if (!unknown.empty()) parameters_.emplace_back("unknown_ops_charged", unknown);
  parameters_.emplace_back("prologue_bubble", std::to_string(options.prologue_bubble));
  parameters_.emplace_back("per_iteration_bubble", std::to_string(options.per_iteration_bubble));
  if (!trace_) {
    parameters_.emplace_back("first_wave_bubble", std::to_string(options.first_wave_bubble));
    parameters_.emplace_back("first_wave_ctas", std::to_string(first_wave_));
    parameters_.emplace_back("mbarrier_init_cycles", std::to_string(options.mbarrier_init_cycles));
    parameters_.emplace_back("tma_store_wait_bytes_per_cycle",
                             std::to_string(options.tma_store_wait_bytes_per_cycle));
  }
  summarize_cta(first, "cta0", parameters_);
}

void TtgirSource::build(std::uint64_t index, CtaProgram& out) {
  if (index >= cta_count())
    throw Error("internal: CTA " + std::to_string(index) + " requested from a grid of " +
                std::to_string(cta_count()));
  if (!translation_) {
    lowering_->lower(index, out);
    return;
  }
  lowering_->lower(index, out, &records_);
  translation_->apply(index, out, records_);
}

}  // namespace simfa::ttgir
