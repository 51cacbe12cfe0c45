// How much of a re-used operand survives in the LLC from one use to the next, as a function of
// its LRU stack distance: the bytes the LLC takes in between. Replaces the paper's ideal/realistic
// switch (section VIII-B2) with a continuous curve (issue 18; docs/analytical.md derives it).
#pragma once

#include <cmath>

namespace simfa::analytical {

/// Survival sigma(x) of a line whose stack distance is x effective LLCs (x = d / C_eff): 1 up to
/// kSurvivalOnset, falling linearly to 0 over kSurvivalWidth.
///
/// The effective LLC is one L2 partition: every line that SMs of both partitions read gets a near
/// copy in each, so the distinct bytes the L2 keeps are half its size (section VIII-B2); a line
/// fewer SMs read takes less (near_copy_share below). Under true LRU a cyclic stream longer than
/// that would lose everything at once; the H200's L2 does not: in tma_chase.csv (one SM chasing a
/// W-byte ring, warm) the share of near hits falls from 98.5% at W = 24 MiB to 0 at 36 MiB, a ramp
/// 12 MiB = 0.4 of the 30 MiB partition wide. The width is that microbenchmark's; the onset is
/// the one number checked against kernels, on the fit half of the ncu sets (docs/analytical.md:
/// onsets 0.85 to 1.1 scanned, in and out of sample; 0.95 of a partition since the near copies'
/// share joined the stack distance, 1.0 before).
inline constexpr double kSurvivalOnset = 0.95;
inline constexpr double kSurvivalWidth = 0.4;

/// The share of the effective LLC one byte of a line takes, when `readers` SMs (spread evenly over
/// the two partitions) read it: its copies over two. A line has its home copy in one partition and
/// a near copy in the other once an SM of that partition reads it, so it holds
/// 1 + (1 - 2^-n) copies on average over n readers, and 1 - 2^-(n+1) of a partition's byte: 0.75
/// for a tile one CTA reads (FA3's Q), 0.875 for a GEMM's B panel that two CTAs of a wave share
/// (16384^2 x 1024 at 128x128: 264 CTAs over 128 tile columns), 1 within 2^-33 for K/V that the
/// 32 or more CTAs of a head read. Written tiles (C, O) are taken at 1: the copies a write leaves
/// are not measured (ncu counts a far-home write at both partitions' slices, as it counts a
/// far-home read, but not whether the near slice keeps it), and the ncu fit half prefers 1 to 0.75
/// (docs/analytical.md).
inline double near_copy_share(double readers) {
  return 1 - std::exp2(-(readers + 1));
}

inline double llc_survival(double x) {
  if (x <= kSurvivalOnset) return 1;
  if (x >= kSurvivalOnset + kSurvivalWidth) return 0;
  return (kSurvivalOnset + kSurvivalWidth - x) / kSurvivalWidth;
}

/// The mean of llc_survival over a stack distance that runs linearly from d0 to d1 bytes (a line's
/// position along a wave's traversal decides how much of the two waves lies between its two
/// reads), against an effective LLC of c_eff bytes. Closed form: the integral of the ramp.
inline double mean_llc_survival(double d0, double d1, double c_eff) {
  double lo = d0 / c_eff, hi = d1 / c_eff;
  if (lo > hi) {
    const double t = lo;
    lo = hi;
    hi = t;
  }
  constexpr double kEnd = kSurvivalOnset + kSurvivalWidth;
  if (hi <= kSurvivalOnset) return 1;
  if (lo >= kEnd) return 0;
  if (hi - lo < 1e-12) return llc_survival(lo);
  // Antiderivative of the ramp: G(x) = x below the onset, then the onset plus the ramp's area.
  auto G = [](double x) {
    if (x <= kSurvivalOnset) return x;
    if (x >= kEnd) return kSurvivalOnset + kSurvivalWidth / 2;
    const double t = x - kSurvivalOnset;
    return kSurvivalOnset + t - t * t / (2 * kSurvivalWidth);
  };
  return (G(hi) - G(lo)) / (hi - lo);
}

}  // namespace simfa::analytical
