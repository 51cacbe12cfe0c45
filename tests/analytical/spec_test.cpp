// Workload specs: keys and presets, and every error a user can make, with its message.
#include <gtest/gtest.h>

#include <string>

#include "analytical/workload.h"
#include "simfa/error.h"

namespace simfa::analytical {
namespace {

Workload parse(const std::string& text) { return resolve_workload(parse_workload_spec(text)); }

/// The message of the InputError parsing and resolving `text` throws.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorkloadSpec, Fa3ModelPresetAndDefaults) {
  const Workload w = parse("fa3:model=llama3-70b,seqlen=32768");
  ASSERT_EQ(w.kind, WorkloadKind::fa3);
  EXPECT_EQ(w.fa3.heads, 64);
  EXPECT_EQ(w.fa3.kv_heads, 8);
  EXPECT_EQ(w.fa3.head_dim, 128);
  EXPECT_EQ(w.fa3.seqlen_q, 32768);
  EXPECT_EQ(w.fa3.seqlen_k, 32768);
  EXPECT_EQ(w.fa3.batch, 1);
  EXPECT_EQ(w.fa3.block_m, 128);
  EXPECT_EQ(w.fa3.block_n, 176);
  EXPECT_FALSE(w.fa3.causal);
  EXPECT_EQ(parse("fa3:model=llama3-8b,seqlen=1").fa3.heads, 32);
  // The fa3 frontend's defaults: FA3's kBlockN is 128 under a causal mask (hopper/tile_size.h).
  EXPECT_EQ(parse("fa3:model=llama3-8b,seqlen=1,causal=true").fa3.block_n, 128);
  EXPECT_EQ(parse("fa3:model=llama3-8b,seqlen=1,causal=true,block_n=176").fa3.block_n, 176);
  EXPECT_EQ(parse("fa3:model=llama3-8b,seqlen=1,causal=false").fa3.block_n, 176);
  EXPECT_EQ(w.fa3.stages, 2);
  EXPECT_EQ(parse("fa3:model=llama3-405b,seqlen=1").fa3.heads, 128);
}

TEST(WorkloadSpec, ExplicitKeysOverrideThePresetInAnyOrder) {
  const Workload w = parse("fa3:heads=16,model=llama3-70b,seqlen_q=100,seqlen_k=200,causal=true,block_n=128");
  EXPECT_EQ(w.fa3.heads, 16);
  EXPECT_EQ(w.fa3.kv_heads, 8);
  EXPECT_EQ(w.fa3.seqlen_q, 100);
  EXPECT_EQ(w.fa3.seqlen_k, 200);
  EXPECT_TRUE(w.fa3.causal);
  EXPECT_EQ(w.fa3.block_n, 128);
  // Without a model, kv_heads defaults to heads (MHA).
  EXPECT_EQ(parse("fa3:heads=12,seqlen=64").fa3.kv_heads, 12);
}

TEST(WorkloadSpec, GemmKeys) {
  const Workload w = parse("gemm:m=4096,n=2048,k=1024,block_k=128,raster=grouped,dtype=fp8,stages=3,warp_specialized=true");
  ASSERT_EQ(w.kind, WorkloadKind::gemm);
  EXPECT_EQ(w.gemm.m, 4096);
  EXPECT_EQ(w.gemm.n, 2048);
  EXPECT_EQ(w.gemm.k, 1024);
  EXPECT_EQ(w.gemm.block_m, 128);
  EXPECT_EQ(w.gemm.block_k, 128);
  EXPECT_EQ(w.gemm.raster, Raster::grouped);
  EXPECT_EQ(w.gemm.dtype, GemmDtype::fp8);
  EXPECT_EQ(w.gemm.elem_bytes, 1);
  EXPECT_EQ(w.gemm.out_bytes, 2);
  EXPECT_TRUE(w.gemm.warp_specialized);
  EXPECT_EQ(w.gemm.stages, 3);
  // The gemm frontend's default: Triton's num_stages = 3.
  EXPECT_EQ(parse("gemm:m=64,n=64,k=64").gemm.stages, 3);
}

TEST(WorkloadSpec, DescribeRoundTrips) {
  for (const char* text : {"fa3:model=llama3-405b,seqlen_q=512,seqlen_k=4096,causal=true,batch=3",
                           "gemm:m=1,n=2,k=3,raster=grouped,dtype=bf16"}) {
    const Workload w = parse(text);
    const std::string described = describe_workload(w);
    EXPECT_EQ(describe_workload(parse(described)), described) << text;
  }
}

TEST(WorkloadSpec, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(error_of("fa3:model=llama3-8b,seqlem=4096"),
            "--workload: error: fa3: unknown key 'seqlem' (did you mean 'seqlen'?)");
  EXPECT_EQ(error_of("gemm:m=1,n=1,k=1,rastr=grouped"),
            "--workload: error: gemm: unknown key 'rastr' (did you mean 'raster'?)");
  EXPECT_EQ(error_of("gemm:m=1,n=1,k=1,colour=red"), "--workload: error: gemm: unknown key 'colour'");
}

TEST(WorkloadSpec, EveryBadKeyIsReported) {
  EXPECT_EQ(error_of("fa3:modle=llama3-8b,seqlen=0,causal=maybe"),
            "--workload: error: fa3: unknown key 'modle' (did you mean 'model'?)\n"
            "--workload: error: fa3: seqlen expects a positive integer below 2^31, got '0'\n"
            "--workload: error: fa3: causal expects true or false, got 'maybe'");
}

TEST(WorkloadSpec, BadValues) {
  EXPECT_EQ(error_of("fa3:model=llama3-7b,seqlen=1"),
            "--workload: error: fa3: unknown model 'llama3-7b' (did you mean 'llama3-8b'?); expected one of "
            "llama3-8b, llama3-70b, llama3-405b");
  EXPECT_EQ(error_of("gemm:m=1,n=1,k=1,dtype=fp32"),
            "--workload: error: gemm: unknown dtype 'fp32' (did you mean 'fp16'?); expected one of "
            "fp16, bf16, fp8");
  EXPECT_EQ(error_of("gemm:m=1,n=1,k=1,raster=groupd"),
            "--workload: error: gemm: unknown raster 'groupd' (did you mean 'grouped'?); expected one of "
            "row_major, grouped");
  EXPECT_EQ(error_of("gemm:m=1.5,n=1,k=1"),
            "--workload: error: gemm: m expects a positive integer below 2^31, got '1.5'");
  EXPECT_EQ(error_of("gemm:m=4096,m=1,n=1,k=1"), "--workload: error: gemm: m given twice");
  EXPECT_EQ(error_of("gemm:m=1,n,k=1"), "--workload: error: gemm: expected key=value, got 'n'");
}

TEST(WorkloadSpec, MissingAndInconsistentKeys) {
  EXPECT_EQ(error_of("gemm:m=1"), "--workload: error: gemm: missing n\n--workload: error: gemm: missing k");
  EXPECT_EQ(error_of("fa3:model=llama3-8b"), "--workload: error: fa3: missing seqlen (or seqlen_q and seqlen_k)");
  EXPECT_EQ(error_of("fa3:model=llama3-8b,seqlen_q=5"), "--workload: error: fa3: missing seqlen_k (seqlen_q is given)");
  EXPECT_EQ(error_of("fa3:model=llama3-8b,seqlen=5,seqlen_k=7"),
            "--workload: error: fa3: seqlen sets both seqlen_q and seqlen_k; give seqlen, or seqlen_q and seqlen_k");
  EXPECT_EQ(error_of("fa3:seqlen=64"),
            "--workload: error: fa3: missing heads (give heads=..., or model=llama3-8b, llama3-70b, llama3-405b)");
  EXPECT_EQ(error_of("fa3:model=llama3-8b,heads=12,seqlen=64"),
            "--workload: error: fa3: heads (12) must be a multiple of kv_heads (8)");
}

TEST(WorkloadSpec, UnknownWorkloadKinds) {
  EXPECT_EQ(error_of("fa2:seqlen=1"),
            "--workload: error: unknown workload 'fa2' (did you mean 'fa3'?); the analytical model takes "
            "fa3:key=value,... and gemm:key=value,...");
  EXPECT_EQ(error_of("workload.toml"),
            "--workload: error: expected KIND:key=value,..., got 'workload.toml'; the analytical model takes "
            "fa3:key=value,... and gemm:key=value,...");
}

}  // namespace
}  // namespace simfa::analytical
