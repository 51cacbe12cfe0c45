// The workloads of the analytical model and the inline specs that name them, with the key names
// of the simulator's workload specs: "fa3:model=llama3-70b,seqlen=32768",
// "gemm:m=4096,n=4096,k=4096,raster=grouped".
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace simfa::analytical {

enum class WorkloadKind : std::uint8_t { fa3, gemm };

/// A FlashAttention-3 forward pass. One CTA per (Q tile, Q head, batch); FA3's head-dim-128
/// kernel uses 128x176 tiles, 128x128 under a causal mask, and one CTA per SM
/// (hopper/tile_size.h), as the simulator's fa3 frontend does.
struct Fa3Shape {
  std::int64_t batch = 1;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t seqlen_q = 0;
  std::int64_t seqlen_k = 0;
  std::int64_t head_dim = 128;
  std::int64_t block_m = 128;
  std::int64_t block_n = 176;  ///< resolve_workload sets kCausalBlockN under a causal mask
  std::int64_t stages = 2;  ///< pipeline depth; the traffic model does not depend on it
  bool causal = false;      ///< bottom-right aligned mask; not validated (docs/analytical.md)
  std::int64_t elem_bytes = 2;
};
/// FA3's kBlockN for head dim 128 and 16-bit types under a causal mask (hopper/tile_size.h), the
/// default the fa3 frontend and resolve_workload take when block_n is not given.
inline constexpr std::int64_t kCausalBlockN = 128;

/// Order in which CTAs (output tiles) are launched.
enum class Raster : std::uint8_t {
  row_major,  ///< tile (i / n_tiles, i % n_tiles)
  grouped,    ///< groups of kGroupedRasterRows tile rows, column by column inside a group
};
/// Tile rows per group of the grouped raster: Triton's matmul tutorial (GROUP_SIZE_M = 8).
inline constexpr std::int64_t kGroupedRasterRows = 8;

enum class GemmDtype : std::uint8_t { fp16, bf16, fp8 };

/// C[m x n] = A[m x k] B[k x n] by a tiled TMA+WGMMA kernel, one CTA per output tile.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t block_m = 128;
  std::int64_t block_n = 128;
  std::int64_t block_k = 64;
  std::int64_t stages = 3;        ///< pipeline depth (Triton's num_stages, as the gemm frontend); no effect on traffic
  bool warp_specialized = false;  ///< kernel structure; the traffic model does not depend on it
  Raster raster = Raster::row_major;
  GemmDtype dtype = GemmDtype::fp16;
  std::int64_t elem_bytes = 2;  ///< A and B
  std::int64_t out_bytes = 2;   ///< C: FP16/BF16 output, also for FP8 inputs
};

struct Workload {
  WorkloadKind kind = WorkloadKind::fa3;
  Fa3Shape fa3;
  GemmShape gemm;
};

// ---- Spec keys ----------------------------------------------------------------------------

enum class KeyType : std::uint8_t { integer, boolean, choice };

struct WorkloadKey {
  std::string_view name;
  KeyType type;
  std::span<const std::string_view> choices;  ///< choice keys: the accepted values
  std::string_view doc;
};

/// Key indices of `fa3:` specs, in the order of workload_keys(WorkloadKind::fa3).
enum class Fa3Key : int {
  model,
  batch,
  heads,
  kv_heads,
  seqlen,
  seqlen_q,
  seqlen_k,
  head_dim,
  block_m,
  block_n,
  stages,
  causal,
  count
};
/// Key indices of `gemm:` specs, in the order of workload_keys(WorkloadKind::gemm).
enum class GemmKey : int {
  m,
  n,
  k,
  block_m,
  block_n,
  block_k,
  stages,
  warp_specialized,
  raster,
  dtype,
  count
};
inline constexpr int kMaxWorkloadKeys = 16;

std::span<const WorkloadKey> workload_keys(WorkloadKind kind);
std::string_view workload_kind_name(WorkloadKind kind);
/// Index of `name` among workload_keys(kind), or -1.
int find_workload_key(WorkloadKind kind, std::string_view name);

/// Parses one value of a key: a positive integer, true/false, or one of the choices (stored as
/// its index). On failure returns false and sets `problem` to a message naming the key.
bool parse_key_value(const WorkloadKey& key, std::string_view text, double& value,
                     std::string& problem);
/// The value as a spec writes it ("llama3-70b", "true", "32768").
std::string key_value_text(const WorkloadKey& key, double value);

/// A parsed spec: which keys were given and their values. A plain value, cheap to copy, so a
/// sweep overrides keys point by point without allocating.
struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::fa3;
  std::array<double, kMaxWorkloadKeys> value{};
  std::uint32_t given = 0;

  void set(int key, double v) {
    value[key] = v;
    given |= 1u << key;
  }
  bool has(int key) const { return (given >> key) & 1u; }
};

/// "fa3:key=value,..." or "gemm:key=value,...". Throws simfa::InputError naming every bad key
/// (did-you-mean for unknown keys and values), each reported at `where`.
WorkloadSpec parse_workload_spec(std::string_view text, std::string_view where = "--workload");

/// The workload a spec describes: model presets first, then explicit keys; seqlen sets both
/// sequence lengths. Throws simfa::InputError on missing or inconsistent keys.
Workload resolve_workload(const WorkloadSpec& spec, std::string_view where = "--workload");

/// The resolved workload as a spec with every key written ("fa3:batch=1,heads=64,...").
std::string describe_workload(const Workload& workload);

}  // namespace simfa::analytical
