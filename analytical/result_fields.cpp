#include "analytical/result_fields.h"

namespace simfa::analytical {

namespace {

constexpr std::uint8_t kAll = 0b11, kFa3 = 0b01, kGemm = 0b10;

#define SIMFA_NUMBER(name, unit, kinds, doc, expr) \
  ResultField { name, unit, doc, [](const AnalyticalResult& r) -> double { return expr; }, nullptr, kinds }
#define SIMFA_LABEL(name, kinds, doc, expr) \
  ResultField { name, "", doc, nullptr, [](const AnalyticalResult& r) -> std::string_view { return expr; }, kinds }

const ResultField kFields[] = {
    SIMFA_NUMBER("flops", "FLOP", kAll, "useful FLOPs (III-B): 2 per multiply-add", r.flops),
    SIMFA_NUMBER("mma_flops", "FLOP", kAll, "FLOPs the tensor cores execute, in whole tiles", r.mma_flops),
    SIMFA_NUMBER("llc_read_bytes", "B", kAll, "bytes CTAs read from the L2 (III-C)", r.llc_read_bytes),
    SIMFA_NUMBER("llc_write_bytes", "B", kAll, "bytes CTAs write to the L2 (III-C)", r.llc_write_bytes),
    SIMFA_NUMBER("dram_ideal_read_bytes", "B", kAll, "compulsory DRAM reads, every input once (III-D)",
                 r.dram_ideal_read_bytes),
    SIMFA_NUMBER("dram_ideal_write_bytes", "B", kAll, "compulsory DRAM writes, the output once (III-D)",
                 r.dram_ideal_write_bytes),
    SIMFA_NUMBER("dram_wave_read_bytes", "B", kAll,
                 "DRAM reads when waves share nothing (III-E wave model)", r.dram_wave_read_bytes),
    SIMFA_NUMBER("ctas", "", kAll, "CTAs of the launch", static_cast<double>(r.ctas)),
    SIMFA_NUMBER("ctas_per_wave", "", kAll, "CTAs that run at once: SMs x CTAs per SM",
                 static_cast<double>(r.ctas_per_wave)),
    SIMFA_NUMBER("ctas_per_sm", "", kGemm,
                 "CTAs an SM holds by shared memory (1 when smem_per_sm is unknown)",
                 static_cast<double>(r.gemm.ctas_per_sm)),
    SIMFA_NUMBER("cta_smem_bytes", "B", kGemm,
                 "shared memory of one CTA: the stages' A and B tiles, or C",
                 static_cast<double>(r.gemm.smem_bytes)),
    SIMFA_NUMBER("waves", "", kAll, "waves of the launch", static_cast<double>(r.waves)),
    SIMFA_NUMBER("wave_factor", "", kAll,
                 "average waves that touch a KV head (FA3) or an operand panel (GEMM)", r.wave_factor),
    SIMFA_NUMBER("kv_heads_per_wave", "", kFa3, "KV heads the first wave streams",
                 static_cast<double>(r.fa3.kv_heads_per_wave)),
    SIMFA_NUMBER("kv_fetches", "", kFa3, "K/V fetches summed over KV heads in the wave model",
                 r.fa3.kv_fetches),
    SIMFA_NUMBER("causal_kv_fraction", "", kFa3, "share of K/V rows the CTAs stream (1 without mask)",
                 r.fa3.causal_kv_fraction),
    SIMFA_NUMBER("wave_a_panels", "", kGemm, "distinct A row panels in the first wave",
                 static_cast<double>(r.gemm.wave_a_panels)),
    SIMFA_NUMBER("wave_b_panels", "", kGemm, "distinct B column panels in the first wave",
                 static_cast<double>(r.gemm.wave_b_panels)),
    SIMFA_NUMBER("a_wave_read_bytes", "B", kGemm, "A bytes of the wave model",
                 r.gemm.a_wave_read_bytes),
    SIMFA_NUMBER("b_wave_read_bytes", "B", kGemm, "B bytes of the wave model",
                 r.gemm.b_wave_read_bytes),
    SIMFA_NUMBER(
        "staggered_read_bytes", "B", kGemm,
        "DRAM reads if the CTAs drift fully out of step (no sharing within a wave): a bound",
        r.gemm.staggered_read_bytes),
    SIMFA_NUMBER("lockstep_read_bytes", "B", kGemm,
                 "DRAM reads if every CTA of a wave stays in step (the wave model with survival)",
                 r.gemm.lockstep_read_bytes),
    SIMFA_NUMBER("memory_paced_share", "", kGemm,
                 "share of a k-step the memory sets: 1 - MMA time / TMA bytes' time at the L2 rate",
                 r.gemm.memory_paced_share),
    SIMFA_NUMBER("out_of_step_share", "", kGemm,
                 "share of the way from the lockstep reads to the out-of-step bound the drift takes",
                 r.gemm.out_of_step_share),
    SIMFA_NUMBER("dram_load", "", kGemm,
                 "DRAM reads' time at dram_bandwidth against the k-steps' time at their pace",
                 r.gemm.dram_load),
    SIMFA_NUMBER("working_set_bytes", "B", kAll,
                 "what must stay in the LLC from one wave to the next", r.working_set_bytes),
    SIMFA_NUMBER("working_set_operand_bytes", "B", kAll,
                 "its reused part: K/V of the wave's heads (FA3), A and B panels (GEMM)",
                 r.working_set_operand_bytes),
    SIMFA_NUMBER("working_set_tile_bytes", "B", kAll,
                 "its streamed part: Q and O tiles (FA3), C tiles (GEMM) of one wave",
                 r.working_set_tile_bytes),
    SIMFA_NUMBER("effective_llc_bytes", "B", kAll, "L2 size / L2 partitions",
                 r.effective_llc_bytes),
    SIMFA_NUMBER("reuse_distance_bytes", "B", kAll,
                 "LRU stack distance of a re-used line from one wave to the next (mean)",
                 r.reuse_distance_bytes),
    SIMFA_NUMBER("reuse_survival", "", kAll,
                 "share of the wave model's re-fetches found in the LLC instead (1: all, 0: none)",
                 r.reuse_survival),
    SIMFA_LABEL("regime", kAll,
                "ideal (all re-use survives), partial, or realistic (none does; VIII-B2)",
                regime_name(r.regime)),
    SIMFA_NUMBER("dram_read_bytes", "B", kAll,
                 "SimFA's DRAM reads: ideal, plus the wave model's re-fetches that do not survive",
                 r.dram_read_bytes),
    SIMFA_NUMBER("dram_write_bytes", "B", kAll, "SimFA's DRAM writes", r.dram_write_bytes),
    SIMFA_NUMBER("dram_bytes", "B", kAll, "SimFA's DRAM traffic", r.dram_bytes()),
    SIMFA_NUMBER("llc_to_dram_ideal", "", kAll, "LLC bytes / ideal DRAM bytes (III-F)", r.llc_to_dram_ideal()),
    SIMFA_NUMBER("llc_to_dram", "", kAll, "LLC bytes / SimFA DRAM bytes (III-F)", r.llc_to_dram()),
    SIMFA_NUMBER("dram_to_ideal", "", kAll, "SimFA DRAM bytes / ideal DRAM bytes (III-F)", r.dram_to_ideal()),
    SIMFA_NUMBER("flops_per_dram_byte", "FLOP/B", kAll, "useful FLOPs per SimFA DRAM byte",
                 r.flops_per_dram_byte()),
    SIMFA_NUMBER("flops_per_llc_byte", "FLOP/B", kAll, "useful FLOPs per LLC byte", r.flops_per_llc_byte()),
    SIMFA_NUMBER("genz_flops", "FLOP", kAll, "GenZ-style FLOPs (no mask)", r.genz_flops),
    SIMFA_NUMBER("genz_dram_bytes", "B", kAll, "GenZ-style DRAM bytes: operand sizes", r.genz_dram_bytes),
    SIMFA_NUMBER("genz_time_s", "s", kAll, "GenZ-style roofline time", r.genz_time_s),
    SIMFA_LABEL("genz_bound", kAll, "compute or dram", bound_name(r.genz_bound)),
    SIMFA_NUMBER("peak_flops", "FLOP/s", kAll, "tensor-core peak for the data type", r.peak_flops),
    SIMFA_NUMBER("time_compute_s", "s", kAll, "mma_flops / peak", r.time_compute_s),
    SIMFA_NUMBER("time_llc_s", "s", kAll, "LLC bytes / L2 bandwidth (0: bandwidth unknown)", r.time_llc_s),
    SIMFA_NUMBER("time_dram_s", "s", kAll, "SimFA DRAM bytes / DRAM bandwidth", r.time_dram_s),
    SIMFA_NUMBER("time_s", "s", kAll, "roofline bound: the largest of the three", r.time_s),
    SIMFA_LABEL("bound", kAll, "compute, llc or dram", bound_name(r.bound)),
};

#undef SIMFA_NUMBER
#undef SIMFA_LABEL

}  // namespace

std::span<const ResultField> result_fields() { return kFields; }

}  // namespace simfa::analytical
