// How much of a re-used operand survives in the LLC from one use to the next, as a function of
// its LRU stack distance: the bytes the LLC takes in between. Replaces the paper's ideal/realistic
// switch (section VIII-B2) with a continuous curve (issue 18; docs/analytical.md derives it).
#pragma once

namespace simfa::analytical {

/// Survival sigma(x) of a line whose stack distance is x effective LLCs (x = d / C_eff): 1 up to
/// kSurvivalOnset, falling linearly to 0 over kSurvivalWidth.
///
/// The effective LLC is one L2 partition: every line that SMs of both partitions read gets a near
/// copy in each, so the distinct bytes the L2 keeps are half its size (section VIII-B2). Under
/// true LRU a cyclic stream longer than that would lose everything at once; the H200's L2 does
/// not: in tma_chase.csv (one SM chasing a W-byte ring, warm) the share of near hits falls from
/// 98.5% at W = 24 MiB to 0 at 36 MiB, a ramp 12 MiB = 0.4 of the 30 MiB partition wide. The
/// width is that microbenchmark's; the onset, one partition, is where an LRU stack distance first
/// exceeds it, and the fit on the ncu sets agrees with it (docs/analytical.md: onsets 0.8 to 1.2
/// scanned, in and out of sample).
inline constexpr double kSurvivalOnset = 1.0;
inline constexpr double kSurvivalWidth = 0.4;

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
