// FlashAttention-3 forward pass (the paper's section III). Notation of docs/analytical.md:
// B batch, H query heads, Hkv KV heads, G = H / Hkv, L = seqlen_q, S = seqlen_k, D head_dim,
// TM x TN tiles, e bytes per element, P = CTAs per wave (one per SM).
#include <algorithm>
#include <numeric>

#include "analytical/floor_sum.h"
#include "analytical/llc_survival.h"
#include "analytical/model.h"
#include "analytical/roofline.h"
#include "simfa/int_math.h"

namespace simfa::analytical {

namespace {

/// The K/V the CTAs of one Q head stream, summed over its Q tiles: tiles of TN keys (what the
/// tensor cores compute on) and key rows (what TMA loads: it clips the last tile at S); and the
/// Q rows they load.
struct KvStream {
  std::int64_t tiles = 0;
  std::int64_t rows = 0;
  std::int64_t q_rows = 0;  ///< L, less the Q tiles that see no key (causal, L > S)
};

KvStream kv_stream(const Fa3Shape& s, std::int64_t n_m, std::int64_t n_n) {
  const std::int64_t L = s.seqlen_q, S = s.seqlen_k, TM = s.block_m, TN = s.block_n;
  if (!s.causal) return {n_m * n_n, n_m * S, L};
  // Bottom-right aligned mask: query row i sees keys [0, i + S - L]. Q tile m ends at row
  // min(L, (m+1) TM) - 1, so it streams the first kappa_m = clamp((m+1) TM + off, 0, S) keys,
  // off = S - L, in ceil(kappa_m / TN) tiles. The last Q tile sees all S keys; every earlier one
  // sees fewer than S, since (m+1) TM < L.
  const std::int64_t off = S - L;
  // Tiles before m0 see no key: (m+1) TM + off <= 0. FA3 skips their mainloop: no Q, K or V
  // load, only the O store of zeros (the fa3 frontend does the same).
  const std::int64_t m0 = off >= 0 ? 0 : -off / TM;
  KvStream kv{n_n, S, L - m0 * TM};
  const std::int64_t count = (n_m - 1) - m0;
  if (count <= 0) return kv;
  // sum_{m=m0}^{n_m-2} ceil(((m+1) TM + off) / TN), with i = m - m0:
  // floor((TM i + (m0+1) TM + off + TN - 1) / TN).
  const auto tiles =
      static_cast<std::int64_t>(floor_sum(count, TN, TM, (m0 + 1) * TM + off + TN - 1));
  // A tile count of n_n loads n_n TN rows clipped to S; that happens from the first m whose
  // kappa_m exceeds (n_n - 1) TN.
  const std::int64_t x = (n_n - 1) * TN - off;
  const std::int64_t m1 = std::max(m0, x < 0 ? 0 : x / TM);
  const std::int64_t clipped = std::max<std::int64_t>(0, (n_m - 1) - m1);
  kv.tiles += tiles;
  kv.rows += tiles * TN - clipped * (n_n * TN - S);
  return kv;
}

/// Query-key pairs the mask keeps, summed over the rows of one head.
double attended_pairs(const Fa3Shape& s) {
  const double L = static_cast<double>(s.seqlen_q), S = static_cast<double>(s.seqlen_k);
  if (!s.causal) return L * S;
  // Row i keeps min(S, max(0, i + S - L + 1)) keys; rows from i0 = max(0, L - S) keep
  // i0 + S - L + 1, ..., S keys: an arithmetic series of L - i0 terms.
  const double i0 = std::max(0.0, L - S);
  const double first = i0 + S - L + 1;
  return (L - i0) * (first + S) / 2;
}

/// The K/V bytes the waves fetch again: what the wave model re-fetches, less what survives.
struct KvRefetch {
  double bytes = 0;
  double mean_distance = 0;  ///< LRU stack distance averaged over the re-used heads; 0 when none
};

/// Waves of P CTAs over KV heads of C consecutive CTAs: wave w = CTAs [wP, (w+1)P) holds n_w heads.
/// A head straddling the boundary between waves w and w+1 is re-used by w+1; a line at share u of
/// its traversal was read by w, after which the LLC took in the rest (1 - u) of the n_w heads w
/// streams, the Q and O tiles of one wave, and the first share u of the n_{w+1} heads w+1 streams:
/// an LRU stack distance running linearly from n_w F + T to n_{w+1} F + T over the traversal, F
/// the bytes one head streams. The distance counts bytes by the LLC capacity their copies take
/// (llc_survival.h, near_copy_share): F kv_share, T already so weighed. Under a causal mask
/// F = q kvh with the streamed prefix share q uniform around its mean (a wave's tiles run from
/// short to long prefixes along a Q head); each re-fetch costs q kvh.
KvRefetch kv_refetch(const Fa3Shape& s, std::int64_t C, std::int64_t n_kv, std::int64_t P,
                     double kvh, double kv_share, double causal_fraction, double tile_bytes,
                     double c_eff) {
  // Prefix shares: one point without a mask; with one, a midpoint rule over the widest interval
  // in [0, 1] whose mean is the streamed share.
  constexpr int kCausalPoints = 8;
  const int points = s.causal ? kCausalPoints : 1;
  const double q_lo = s.causal ? std::max(0.0, 2 * causal_fraction - 1) : 1.0;
  const double q_hi = s.causal ? std::min(1.0, 2 * causal_fraction) : 1.0;
  // The bytes re-fetched at one boundary between waves of na and nb heads.
  const double kvd = kvh * kv_share;  // a head's K/V by the capacity it takes
  auto lost = [&](double na, double nb, double& distance) {
    double bytes = 0;
    distance = 0;
    for (int i = 0; i < points; ++i) {
      const double q = q_lo + (q_hi - q_lo) * (i + 0.5) / points;
      const double d0 = na * q * kvd + tile_bytes, d1 = nb * q * kvd + tile_bytes;
      bytes += q * kvh * (1 - mean_llc_survival(d0, d1, c_eff));
      distance += (d0 + d1) / 2;
    }
    distance /= points;
    return bytes / points;
  };
  const std::int64_t T = n_kv * C;
  const std::int64_t W = ceil_div(T, P);
  if (W <= 1) return {};
  // A boundary jP is straddled unless a head starts there (C divides jP).
  const std::int64_t g = std::gcd(C, P);
  const std::int64_t straddled = (W - 1) - (W - 1) / (C / g);
  if (straddled == 0) return {};
  // The mean heads of a wave: sum_w n_w = sum over waves of floor((end - 1) / C) - floor(start / C)
  // + 1, the last wave ending at T.
  const double head_sum =
      static_cast<double>(W) + static_cast<double>(floor_sum(W - 1, C, P, P - 1)) +
      static_cast<double>((T - 1) / C) - static_cast<double>(floor_sum(W, C, P, 0));
  const double mean_heads = head_sum / static_cast<double>(W);
  KvRefetch out;
  // Shortcuts where the survival is the same at every boundary: a window of P CTAs holds
  // between floor(P / C) (at least 1) and ceil(P / C) + 1 heads, the last (shorter) wave at least
  // floor(its CTAs / C).
  const std::int64_t last_ctas = T - (W - 1) * P;
  const double fewest = static_cast<double>(std::max<std::int64_t>(1, last_ctas / C));
  const double most = static_cast<double>(ceil_div(P, C) + 1);
  if (most * q_hi * kvd + tile_bytes <= kSurvivalOnset * c_eff ||
      fewest * q_lo * kvd + tile_bytes >= (kSurvivalOnset + kSurvivalWidth) * c_eff) {
    out.bytes = static_cast<double>(straddled) * lost(mean_heads, mean_heads, out.mean_distance);
    return out;
  }
  if (C >= 2 * P) {
    // A wave holds one head, or two when a head starts strictly inside it (delta_w = 1); two
    // such waves are never adjacent, and no wave next to one sits on a head start. So a straddled
    // boundary lies between waves of (1, 1) heads, or of (1, 2) / (2, 1), the latter counted from
    // the head starts inside waves (none inside wave 0, since C > P).
    const std::int64_t inside = (n_kv - 1) - (n_kv - 1) / (P / g);
    const std::int64_t last_heads = (T - 1) / C - ((W - 1) * P) / C + 1;
    const std::int64_t mixed = 2 * inside - (last_heads - 1);
    const std::int64_t single = straddled - mixed;
    double d11 = 0, d12 = 0;
    out.bytes = static_cast<double>(single) * lost(1, 1, d11) +
                static_cast<double>(mixed) * lost(1, 2, d12);
    out.mean_distance = (static_cast<double>(single) * d11 + static_cast<double>(mixed) * d12) /
                        static_cast<double>(straddled);
    return out;
  }
  // Shorter heads: waves hold many, so the count per wave varies little; walk the waves while
  // they are few, else take the mean head count for every boundary.
  constexpr std::int64_t kWalkedWaves = 256;
  if (W > kWalkedWaves) {
    out.bytes = static_cast<double>(straddled) * lost(mean_heads, mean_heads, out.mean_distance);
    return out;
  }
  double distance_sum = 0;
  auto heads = [&](std::int64_t a) { return (std::min(a + P, T) - 1) / C - a / C + 1; };
  std::int64_t prev = heads(0);
  for (std::int64_t w = 1; w < W; ++w) {
    const std::int64_t next = heads(w * P);
    if ((w * P) % C != 0) {
      double d = 0;
      out.bytes += lost(static_cast<double>(prev), static_cast<double>(next), d);
      distance_sum += d;
    }
    prev = next;
  }
  out.mean_distance = distance_sum / static_cast<double>(straddled);
  return out;
}

}  // namespace

AnalyticalResult analyze_fa3(const AnalyticalGpu& gpu, const Fa3Shape& s) {
  AnalyticalResult r;
  r.kind = WorkloadKind::fa3;
  const double B = static_cast<double>(s.batch), H = static_cast<double>(s.heads);
  const double S = static_cast<double>(s.seqlen_k), D = static_cast<double>(s.head_dim);
  const double e = static_cast<double>(s.elem_bytes);
  const std::int64_t n_m = ceil_div(s.seqlen_q, s.block_m);
  const std::int64_t n_n = ceil_div(s.seqlen_k, s.block_n);
  const KvStream kv = kv_stream(s, n_m, n_n);

  // III-B: Q.K^T and P.V, 2 L S D FLOPs each per Q head (the mask keeps fewer pairs).
  r.flops = 4 * B * H * D * attended_pairs(s);
  r.mma_flops =
      4 * B * H * D * static_cast<double>(s.block_m * s.block_n) * static_cast<double>(kv.tiles);

  // III-C: each CTA reads its Q tile, writes its O tile and streams its KV head's K and V.
  // Summed over the Q tiles of a head, the clipped Q (and O) tiles make up Q (O) once; under a
  // causal mask with L > S the Q tiles that see no key are not loaded.
  const double q_bytes = B * H * static_cast<double>(s.seqlen_q) * D * e;
  const double q_read_bytes = B * H * static_cast<double>(kv.q_rows) * D * e;
  r.llc_read_bytes = q_read_bytes + B * H * 2 * static_cast<double>(kv.rows) * D * e;
  r.llc_write_bytes = q_bytes;

  // III-D: Q, K, V read once, O written once.
  const std::int64_t n_kv = s.batch * s.kv_heads;
  const double kv_head_bytes = 2 * S * D * e;
  r.dram_ideal_read_bytes = q_read_bytes + static_cast<double>(n_kv) * kv_head_bytes;
  r.dram_ideal_write_bytes = q_bytes;

  // III-E: CTAs launch Q tile fastest, then Q head, then batch, so the C = G n_m CTAs of one KV
  // head are consecutive: KV head h owns CTAs [h C, (h+1) C). Waves of P CTAs fetch each KV
  // head's K/V once per wave that holds any of its CTAs: 1 + floor(((h+1) C - 1) / P)
  // - floor(h C / P) waves for head h, summed in closed form.
  const std::int64_t P = gpu.sm_count;
  const std::int64_t C = (s.heads / s.kv_heads) * n_m;
  r.ctas = n_kv * C;
  r.ctas_per_wave = std::min(P, r.ctas);
  r.waves = ceil_div(r.ctas, P);
  const auto fetches = static_cast<double>(n_kv) +
                       static_cast<double>(floor_sum(n_kv, P, C, C - 1)) -
                       static_cast<double>(floor_sum(n_kv, P, C, 0));
  r.wave_factor = fetches / static_cast<double>(n_kv);
  r.fa3.kv_heads_total = n_kv;
  r.fa3.ctas_per_kv_head = C;
  r.fa3.kv_head_bytes = kv_head_bytes;
  r.fa3.kv_fetches = fetches;
  // Under a causal mask a wave streams only the prefix its CTAs need: the first fetch of a head is
  // all of it (the last Q tile needs every key), each re-fetch the average prefix.
  r.fa3.causal_kv_fraction = static_cast<double>(kv.rows) / (static_cast<double>(n_m) * S);
  const double kv_once = static_cast<double>(n_kv) * kv_head_bytes;
  r.dram_wave_read_bytes =
      q_read_bytes + kv_once +
      (fetches - static_cast<double>(n_kv)) * r.fa3.causal_kv_fraction * kv_head_bytes;

  // The first wave's working set: the K/V of the heads it streams plus its Q and O tiles.
  r.fa3.kv_heads_per_wave = ceil_div(r.ctas_per_wave, C);
  r.working_set_operand_bytes = static_cast<double>(r.fa3.kv_heads_per_wave) * kv_head_bytes;
  r.working_set_tile_bytes =
      static_cast<double>(r.ctas_per_wave) * 2 * static_cast<double>(s.block_m) * D * e;
  r.working_set_bytes = r.working_set_operand_bytes + r.working_set_tile_bytes;
  r.effective_llc_bytes = gpu.effective_llc_bytes();

  // VIII-B2 made continuous (issue 18): each re-fetch of the wave model survives by its LRU stack
  // distance (docs/analytical.md), the bytes in between counted by the LLC capacity their copies
  // take (llc_survival.h, near_copy_share): a Q tile one CTA reads 0.75, a head's K/V its CTAs
  // read (min(C, P) of them in a wave) about 1, the written O tiles 1.
  const double tile_capacity = static_cast<double>(r.ctas_per_wave) *
                               static_cast<double>(s.block_m) * D * e * (near_copy_share(1) + 1);
  const double kv_share = near_copy_share(static_cast<double>(std::min(C, P)));
  const KvRefetch refetch =
      kv_refetch(s, C, n_kv, P, kv_head_bytes, kv_share, r.fa3.causal_kv_fraction, tile_capacity,
                 r.effective_llc_bytes);
  r.reuse_distance_bytes = refetch.mean_distance;
  r.dram_read_bytes = q_read_bytes + kv_once + refetch.bytes;
  r.reuse_survival =
      reuse_survival(r.dram_ideal_read_bytes, r.dram_wave_read_bytes, r.dram_read_bytes);
  r.regime = regime_of(r.reuse_survival);
  r.dram_write_bytes = r.dram_ideal_write_bytes;

  // GenZ models flash attention as Logit and Attend operators with the score matrix on chip:
  // Q, K, V and O cross DRAM once, and the FLOPs ignore any mask.
  r.genz_flops = 4 * B * H * static_cast<double>(s.seqlen_q) * S * D;
  r.genz_dram_bytes = 2 * q_bytes + static_cast<double>(n_kv) * kv_head_bytes;

  apply_roofline(r, gpu, gpu.peak_flops());
  return r;
}

}  // namespace simfa::analytical
