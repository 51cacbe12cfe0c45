// The organization and timing of an HBM3 memory system, and the named presets `dram.hbm3` offers.
//
// Timing is in memory-clock cycles (CK) of period tCK. HBM3 moves four data beats per CK per pin,
// so a BL8 burst holds the data bus nBL = 2 cycles and the per-pin data rate is 4 / tCK.
//
// Every preset is written as named fields, and tests/memory/dram_test.cpp re-derives each of its
// values from the sources below (STYLE.md: Ramulator's positional timing tables hid a wrong
// density and refresh value for months).
//
// Sources.
// - Organization: JEDEC JESD238 (HBM3), as JEDEC's announcement of it summarizes it (27 Jan
//   2022): 16 independent 64-bit channels per stack, each two 32-bit pseudo-channels, up to
//   6.4 Gb/s per pin (819 GB/s per stack). Bank groups, banks and the 1 KiB row (32 columns of
//   32 B) per pseudo-channel are those of Ramulator 2's HBM3 organization presets
//   (CMU-SAFARI/ramulator2, src/dram/impl/HBM3.cpp, the revision whose presets cite JESD238A:
//   Bg 4, Ba 4, Co 1<<5 with 32 DQ and a prefetch of 8).
// - Timing: Ramulator 2's HBM3_5.2Gbps and HBM3_6.4Gbps timing presets (same file). Their
//   nanosecond intervals are DRAMsim3's HBM2_8Gb_x128.ini (umd-memsys/DRAMsim3, tCK = 1 ns):
//   tCL = tRCD = tRP = 14 ns, tCWL 4, tRAS 34, tRC 48, tWR 16, tRTP_L 6, tFAW 30, tWTR_S 6,
//   tWTR_L 8, tREFI 3900 ns; Ramulator converts each to ceil(ns / tCK) cycles and takes
//   nBL 2, nCCDS 2, nCCDL 4, nRRDS 2, nRRDL 4, nRTW 3 as whole cycles. tRFC comes from
//   Ramulator's all-bank refresh table by density per channel: 350 ns for 8 Gb, 410 ns for 12 Gb.
//   The H800 and H200 presets apply the same rule at their own tCK.
// - Stacks and data rate: the H800/H100 SXM5 has five active HBM3 stacks (80 GB, a 5120-bit bus)
//   at 3.35 TB/s (NVIDIA H100 datasheet and whitepaper); the H200 six HBM3e stacks (141 GB, a
//   6144-bit bus) at 4.8 TB/s (NVIDIA H200 datasheet). tCK follows from the peak:
//   tCK = 4 x bus bits / 8 / peak, i.e. 0.764 ns (3.351 TB/s) and 0.640 ns (4.800 TB/s).
//
// Not modeled: stack IDs (the ranks of 8/12/16-high stacks; their banks are folded into
// banks_per_group if wanted), per-bank refresh, separate read and write tRCD (equal in every
// source preset), power-down.
#pragma once

#include <cstdint>
#include <string_view>

namespace simfa::memory_models {

struct Hbm3Organization {
  int stacks;
  int channels_per_stack;
  int pseudo_channels;   ///< per channel
  int bank_groups;       ///< per pseudo-channel
  int banks_per_group;
  int columns;           ///< bursts per row (a row holds columns x burst_bytes())
  int pc_width_bits;     ///< data pins per pseudo-channel
  int burst_length;      ///< beats per burst

  int channels() const { return stacks * channels_per_stack; }
  int burst_bytes() const { return pc_width_bits * burst_length / 8; }
};

/// Cycles of the memory clock, each tCK_ns long. Column-to-column and activate-to-activate
/// gaps come in _S (different bank groups) and _L (same bank group) variants.
struct Hbm3Timing {
  double tCK_ns;
  int nBL;    ///< data-bus cycles of one burst
  int nCL;    ///< RD to first data
  int nCWL;   ///< WR to first data
  int nRCD;   ///< ACT to RD/WR, same bank
  int nRP;    ///< PRE to ACT, same bank
  int nRAS;   ///< ACT to PRE, same bank
  int nRC;    ///< ACT to ACT, same bank
  int nWR;    ///< end of write data to PRE, same bank
  int nRTP;   ///< RD to PRE, same bank
  int nCCDS;  ///< RD to RD or WR to WR, different bank groups
  int nCCDL;  ///< RD to RD or WR to WR, same bank group
  int nRRDS;  ///< ACT to ACT, different bank groups
  int nRRDL;  ///< ACT to ACT, same bank group
  int nFAW;   ///< at most four ACTs in any window of nFAW cycles, per pseudo-channel
  int nWTRS;  ///< end of write data to RD, different bank groups
  int nWTRL;  ///< end of write data to RD, same bank group
  int nRTW;   ///< bus turnaround: end of read data to start of write data
  int nRFC;   ///< REF to ACT
  int nREFI;  ///< refresh interval; 0: no refresh
  int nRFCpb = 0;   ///< per-bank refresh: REFpb to ACT in the refreshed bank
  int nREFIpb = 0;  ///< per-bank refresh: one bank of the channel every nREFIpb, in turn; 0: none
};

struct Hbm3Preset {
  std::string_view name;
  Hbm3Organization organization;
  Hbm3Timing timing;
};

// One JESD238 stack: 16 channels x 2 pseudo-channels x 4 bank groups x 4 banks, 1 KiB rows of
// 32 B bursts (32 data pins x BL8).
inline constexpr Hbm3Organization kHbm3Stack{.stacks = 1,
                                             .channels_per_stack = 16,
                                             .pseudo_channels = 2,
                                             .bank_groups = 4,
                                             .banks_per_group = 4,
                                             .columns = 32,
                                             .pc_width_bits = 32,
                                             .burst_length = 8};

inline constexpr Hbm3Organization with_stacks(Hbm3Organization o, int stacks) {
  o.stacks = stacks;
  return o;
}

inline constexpr Hbm3Preset kHbm3Presets[] = {
    // Ramulator 2's HBM3_5.2Gbps: tCK = 4 / 5.2 Gb/s; tRFC 350 ns (8 Gb per channel: a 16 GB
    // 8-high stack of 16 Gb dies) = 455 cycles.
    {"HBM3_5.2Gbps", kHbm3Stack,
     Hbm3Timing{.tCK_ns = 0.769231, .nBL = 2, .nCL = 19, .nCWL = 6, .nRCD = 19, .nRP = 19,
                .nRAS = 45, .nRC = 63, .nWR = 21, .nRTP = 8, .nCCDS = 2, .nCCDL = 4, .nRRDS = 2,
                .nRRDL = 4, .nFAW = 39, .nWTRS = 8, .nWTRL = 11, .nRTW = 3, .nRFC = 455,
                .nREFI = 5070}},
    // Ramulator 2's HBM3_6.4Gbps (JESD238's top speed): tCK = 0.625 ns; tRFC 350 ns = 560.
    {"HBM3_6.4Gbps", kHbm3Stack,
     Hbm3Timing{.tCK_ns = 0.625, .nBL = 2, .nCL = 23, .nCWL = 7, .nRCD = 23, .nRP = 23,
                .nRAS = 55, .nRC = 77, .nWR = 26, .nRTP = 10, .nCCDS = 2, .nCCDL = 4, .nRRDS = 2,
                .nRRDL = 4, .nFAW = 48, .nWTRS = 10, .nWTRL = 13, .nRTW = 3, .nRFC = 560,
                .nREFI = 6240}},
    // H800: five 16 GB HBM3 stacks at 3.35 TB/s -> tCK 0.764 ns (3.351 TB/s); the DRAMsim3 ns
    // intervals at that tCK; tRFC 350 ns (8 Gb per channel).
    {"H800_HBM3", with_stacks(kHbm3Stack, 5),
     Hbm3Timing{.tCK_ns = 0.764, .nBL = 2, .nCL = 19, .nCWL = 6, .nRCD = 19, .nRP = 19,
                .nRAS = 45, .nRC = 63, .nWR = 21, .nRTP = 8, .nCCDS = 2, .nCCDL = 4, .nRRDS = 2,
                .nRRDL = 4, .nFAW = 40, .nWTRS = 8, .nWTRL = 11, .nRTW = 3, .nRFC = 459,
                .nREFI = 5104}},
    // H200: six 24 GB HBM3e stacks at 4.8 TB/s -> tCK 0.640 ns; the DRAMsim3 ns intervals at
    // that tCK; tRFC 410 ns (12 Gb per channel: 12-high stacks of 16 Gb dies). HBM3e keeps the
    // HBM3 protocol; its own intervals are for configs/h200.toml to calibrate.
    {"H200_HBM3e", with_stacks(kHbm3Stack, 6),
     Hbm3Timing{.tCK_ns = 0.640, .nBL = 2, .nCL = 22, .nCWL = 7, .nRCD = 22, .nRP = 22,
                .nRAS = 54, .nRC = 75, .nWR = 25, .nRTP = 10, .nCCDS = 2, .nCCDL = 4, .nRRDS = 2,
                .nRRDL = 4, .nFAW = 47, .nWTRS = 10, .nWTRL = 13, .nRTW = 3, .nRFC = 641,
                .nREFI = 6093}},
};

/// The preset named `name`, or nullptr.
inline const Hbm3Preset* find_hbm3_preset(std::string_view name) {
  for (const Hbm3Preset& p : kHbm3Presets)
    if (p.name == name) return &p;
  return nullptr;
}

/// Peak data bandwidth in bytes per second: every pseudo-channel moving one burst per nBL cycles.
inline double hbm3_peak_bandwidth(const Hbm3Organization& o, const Hbm3Timing& t) {
  const double pseudo_channels = static_cast<double>(o.channels()) * o.pseudo_channels;
  return pseudo_channels * o.burst_bytes() / (t.nBL * t.tCK_ns * 1e-9);
}

}  // namespace simfa::memory_models
